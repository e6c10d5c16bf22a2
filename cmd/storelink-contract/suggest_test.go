package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/korral/storelink/openapi"
)

// suggestReport is a small check report: a rename, an undeclared status
// and an enum value, the last left as a note. The enum's text carries a
// value that must not reach the patch.
const suggestReport = `{
  "summary": {"probes": 3, "drift": 2},
  "causes": [
    {"id": "rename:#/components/schemas/Supplier:minimum_order_units", "kind": "rename", "text": "renamed? min_order_qty present, minimum_order_units missing",
     "count": 3, "operations": ["getSupplier"],
     "evidence": {"component": "Supplier", "property": "minimum_order_units", "found": "min_order_qty", "json_type": "integer"}},
    {"id": "undeclared-status:422", "kind": "undeclared-status", "text": "status 422 is not declared", "count": 1,
     "operations": ["getSKU"], "evidence": {"status": 422}},
    {"id": "schema:#/components/schemas/OrderStatus/enum:/status", "kind": "schema", "schema": "#/components/schemas/OrderStatus/enum",
     "text": "value \"SENTINEL-on-hold\" is not one of the allowed values", "count": 1, "operations": ["getReplenishmentOrder"]}
  ]
}
`

// writeSuggestReport writes the check report suggest reads into a
// temporary directory.
func writeSuggestReport(t *testing.T) (dir, report string) {
	t.Helper()
	dir = t.TempDir()
	report = filepath.Join(dir, "report.json")
	if err := os.WriteFile(report, []byte(suggestReport), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, report
}

func TestSuggestHelp(t *testing.T) {
	for _, arg := range []string{"-h", "--help"} {
		code, stdout, stderr := cli(t, "suggest", arg)
		if code != 0 || !strings.HasPrefix(stdout, "Usage: storelink-contract suggest FINDINGS") || !strings.Contains(stdout, "-out") || stderr != "" {
			t.Fatalf("%s: exit %d, stdout %q, stderr %q", arg, code, stdout, stderr)
		}
	}
	if _, stdout, _ := cli(t, "--help"); !strings.Contains(stdout, "storelink-contract suggest FINDINGS") {
		t.Fatal("the command's usage does not list suggest")
	}
}

func TestSuggestUsageErrors(t *testing.T) {
	dir, report := writeSuggestReport(t)
	notJSON := filepath.Join(dir, "not.json")
	if err := os.WriteFile(notJSON, []byte("hello\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{
		{"suggest"},
		{"suggest", report, report},
		{"suggest", report, "--bogus"},
		{"suggest", filepath.Join(dir, "missing.json")},
		{"suggest", notJSON},
		{"suggest", report, "--spec", filepath.Join(dir, "missing.yaml")},
	} {
		code, stdout, stderr := cli(t, args...)
		if code != 2 || stdout != "" || strings.Count(stderr, "\n") != 1 {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want 2 and one line on stderr", args[1:], code, stdout, stderr)
		}
	}
}

func TestSuggestReport(t *testing.T) {
	dir, report := writeSuggestReport(t)
	out := filepath.Join(dir, "patched.yaml")
	// Flags before and after the file.
	for _, args := range [][]string{
		{"suggest", report, "--out", out},
		{"suggest", "--out", out, report},
	} {
		code, stdout, stderr := cli(t, args...)
		if code != 0 {
			t.Fatalf("exit %d, stderr %q", code, stderr)
		}
		if !strings.HasPrefix(stdout, "--- a/openapi/storelink.yaml\n+++ b/openapi/storelink.yaml\n@@ ") {
			t.Fatalf("stdout is not the diff: %.200q", stdout)
		}
		for _, want := range []string{
			"+        # suggested from findings: seen 3 times in getSupplier: renamed? min_order_qty present, minimum_order_units missing; the Go field keeps its name MinimumOrderUnits\n",
			"+        min_order_qty:\n+          x-go-name: MinimumOrderUnits\n",
			"-        minimum_order_units:\n",
			"+          $ref: \"#/components/responses/Unprocessable\"\n",
		} {
			if !strings.Contains(stdout, want) {
				t.Errorf("the diff lacks %q", want)
			}
		}
		if strings.Contains(stdout, "SENTINEL") {
			t.Fatal("a value from the report is in the patch")
		}
		wantErr := "2 changes proposed, 1 cause left as notes:\n" +
			"  change rename:#/components/schemas/Supplier:minimum_order_units: rename Supplier.minimum_order_units to min_order_qty (Go field MinimumOrderUnits)\n" +
			"  change undeclared-status:422: declare 422 on getSKU (Unprocessable)\n" +
			"  note   schema:#/components/schemas/OrderStatus/enum:/status: values are not copied from StoreLink's answers"
		if !strings.HasPrefix(stderr, wantErr) {
			t.Fatalf("stderr:\n%s\nwant it to start:\n%s", stderr, wantErr)
		}
		patched, err := os.ReadFile(out)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := openapi.Parse(patched); err != nil || !strings.Contains(string(patched), "min_order_qty:") {
			t.Fatalf("--out: %v", err)
		}
		if err := os.Remove(out); err != nil {
			t.Fatal(err)
		}
	}
}

func TestSuggestProxyFindingsOnStdin(t *testing.T) {
	dir := t.TempDir()
	spec := filepath.Join(dir, "spec.yaml")
	if err := os.WriteFile(spec, openapi.YAML, 0o644); err != nil {
		t.Fatal(err)
	}
	lines := `{"type":"finding","kind":"rule"}` + "\n" +
		`{"type":"summary","causes":[{"id":"rule:pos.order","kind":"rule","rule":"pos.order","text":"t","count":1,"operations":["listPOSTransactions"]}]}` + "\n"
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	old := os.Stdin
	os.Stdin = r
	t.Cleanup(func() { os.Stdin = old })
	go func() {
		_, _ = w.WriteString(lines)
		_ = w.Close()
	}()
	code, stdout, stderr := cli(t, "suggest", "-", "--spec", spec)
	if code != 0 || stdout != "" {
		t.Fatalf("exit %d, stdout %q", code, stdout)
	}
	if !strings.HasPrefix(stderr, "no change proposed, 1 cause left as notes:\n  note   rule:pos.order: semantic rule pos.order") {
		t.Fatalf("stderr %q", stderr)
	}
}
