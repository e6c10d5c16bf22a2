package config

import (
	"flag"
	"io"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFlagsByRule: every setting that is not a secret has a flag named
// after its variable; secrets have none, so they never reach argv.
func TestFlagsByRule(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	AddFlags(fs, func(string, string) {})
	secrets := map[string]bool{}
	for _, s := range Settings() {
		want := strings.ReplaceAll(strings.ToLower(s.Name), "_", "-")
		f := fs.Lookup(want)
		switch {
		case s.Secret && f != nil:
			t.Errorf("secret %s has the flag --%s", s.Name, want)
		case s.Secret:
			secrets[s.Name] = true
		case f == nil:
			t.Errorf("%s has no flag --%s", s.Name, want)
		case !strings.Contains(f.Usage, "("+s.Name):
			t.Errorf("--%s's usage %q does not name %s", want, f.Usage, s.Name)
		}
	}
	wantSecrets := map[string]bool{"STORELINK_KEYRING": true, "APPROVER_SECRET": true, "APPROVAL_WEBHOOK_URL": true,
		"APPROVAL_WEBHOOK_SECRET": true, "STATE_DATABASE_URL": true, "OTEL_EXPORTER_OTLP_HEADERS": true}
	if diff := cmp.Diff(wantSecrets, secrets); diff != "" {
		t.Errorf("secrets (-want +got):\n%s", diff)
	}
	if n := len(Settings()); n != 53 {
		t.Errorf("%d settings, want 53 (40 ours, 12 OTEL_* and the metrics token)", n)
	}
}

// TestAddFlagsSets: a flag hands its variable and value to set; a boolean
// one needs no value, as --read-only always did.
func TestAddFlagsSets(t *testing.T) {
	got := map[string]string{}
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	AddFlags(fs, func(name, value string) { got[name] = value })
	err := fs.Parse([]string{"--read-only", "--allow-writes=0", "--max-order-units", "7", "--log-level=debug", "--otel-sdk-disabled=TRUE"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"READ_ONLY": "true", "ALLOW_WRITES": "false", "MAX_ORDER_UNITS": "7", "LOG_LEVEL": "debug", "OTEL_SDK_DISABLED": "true"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	err = fs.Parse([]string{"--read-only=maybe"})
	if err == nil || !strings.Contains(err.Error(), `invalid boolean value "maybe" for -read-only: want true or false`) {
		t.Errorf("bad boolean: %v", err)
	}
}

// TestAddFlagsLeavesOwnFlags: a flag the command already defines keeps its
// meaning; the setting of that name then has no flag there.
func TestAddFlagsLeavesOwnFlags(t *testing.T) {
	fs := flag.NewFlagSet("t", flag.ContinueOnError)
	own := fs.String("log-file", "", "the command's own")
	set := map[string]string{}
	AddFlags(fs, func(name, value string) { set[name] = value })
	if err := fs.Parse([]string{"--log-file", "x", "--log-level", "warn"}); err != nil {
		t.Fatal(err)
	}
	if *own != "x" || set["LOG_FILE"] != "" || set["LOG_LEVEL"] != "warn" {
		t.Errorf("own flag %q, settings %v", *own, set)
	}
}

// TestBundleQuestionsNumbered: the bundle's questions are numbered 1 to n,
// each once, so the install dialog's order is the one written.
func TestBundleQuestionsNumbered(t *testing.T) {
	seen := map[int]string{}
	for _, s := range Settings() {
		if q := s.Bundle; q != nil {
			if other, dup := seen[q.Order]; dup {
				t.Errorf("%s and %s are both question %d", other, s.Name, q.Order)
			}
			seen[q.Order] = s.Name
		}
	}
	for i := 1; i <= len(seen); i++ {
		if seen[i] == "" {
			t.Errorf("no bundle question %d of %d", i, len(seen))
		}
	}
}
