package main

import (
	"strconv"
	"strings"
	"testing"

	"github.com/korral/storelink/mockstorelink"
)

// TestGenerateAgainstMockConforms runs check --generate, writes included,
// with a fixed seed and bounds against the strict mock: every generated
// case conforms. make ci runs it (make test), so a contract change the
// mock does not follow, or a generator that sends a case the contract
// does not allow, fails CI.
func TestGenerateAgainstMockConforms(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	code, stdout, stderr := cli(t, checkArgs(mock.URL, keyring, "--generate", "--seed", "7",
		"--allow-writes", "--write-store", mockstorelink.StoreSmichov,
		"--sku", mockstorelink.SKUMinimumOrder, "--max-requests", "400", "--deadline", "25s", "--format", "json")...)
	rep := decodeReport(t, stdout)
	if code != exitConforms {
		var bad []string
		for _, p := range rep.Probes {
			if p.Verdict != "pass" && p.Verdict != "skipped" {
				bad = append(bad, p.CaseID+" "+p.Phase+" "+p.Request+" ("+p.Key+") got "+strconv.Itoa(p.Got)+": "+p.Detail)
			}
		}
		t.Fatalf("exit %d\n%s\n%s", code, strings.Join(bad, "\n"), stderr)
	}
	g := rep.Generated
	if g == nil || g.Seed != 7 || g.Sent == 0 || g.Failed != 0 {
		t.Fatalf("generated summary %+v, want seed 7, cases sent, none failing", g)
	}
	if g.NotSent != 0 {
		t.Errorf("%d generated cases not sent: the bounds are too tight for the CI run", g.NotSent)
	}
	phases := map[string]int{}
	for _, p := range rep.Probes {
		phases[p.Phase]++
	}
	for _, ph := range []string{"data", "auth", "method", "content-type", "chain"} {
		if phases[ph] == 0 {
			t.Errorf("no generated case of phase %s", ph)
		}
	}
	if len(mock.Server.Violations()) != 0 {
		t.Errorf("the mock broke its own contract: %v", mock.Server.Violations())
	}
}
