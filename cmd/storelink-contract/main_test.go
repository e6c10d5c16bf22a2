package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/openapi/contract"
)

// startMock serves a fresh strict mock StoreLink with the faults on, and
// writes its default keyring (stores 47 and 102) to a file.
func startMock(t *testing.T, faults ...mockstorelink.Fault) (*mockstorelink.Running, string) {
	t.Helper()
	mock, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := mock.Close(); err != nil {
			t.Errorf("close mock: %v", err)
		}
	})
	mock.Server.SetFaults(faults...)
	return mock, writeKeyring(t, mock.Server.DefaultKeyring())
}

func writeKeyring(t *testing.T, keyring map[string]string) string {
	t.Helper()
	data, err := json.Marshal(keyring)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "keyring.json")
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// cli runs the command as a process would, returning the exit code and
// what it printed.
func cli(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code = run(context.Background(), args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// checkArgs are the flags of a full check of the mock's fixture world, fast.
func checkArgs(url, keyring string, extra ...string) []string {
	return append([]string{"check", "--base-url", url, "--keyring-file", keyring,
		"--sku", mockstorelink.SKUButter, "--order", mockstorelink.OrderOpen, "--rate", "1000/s"}, extra...)
}

// mustConform fails the test unless the check exited conforming, naming
// every probe that neither passed nor was skipped, and the check's stderr.
func mustConform(t *testing.T, code int, rep *contract.Report, stderr string) {
	t.Helper()
	if code == exitConforms {
		return
	}
	var bad []string
	for _, p := range rep.Probes {
		if p.Verdict != contract.Pass && p.Verdict != contract.Skipped {
			bad = append(bad, fmt.Sprintf("%s %s %s %s (%s) got %d: %s %s", p.Operation, p.CaseID, p.Phase, p.Request, p.Key, p.Got, p.Verdict, p.Detail))
		}
	}
	t.Fatalf("exit %d\n%s\n%s", code, strings.Join(bad, "\n"), stderr)
}

func decodeReport(t *testing.T, stdout string) *contract.Report {
	t.Helper()
	var rep contract.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("the JSON report does not parse: %v\n%s", err, stdout)
	}
	return &rep
}

// TestStrictMockConforms: every probe passes against the strict mock, for
// the butter SKU and the minimum-order SKU.
func TestStrictMockConforms(t *testing.T) {
	t.Parallel()
	for _, sku := range []string{mockstorelink.SKUButter, mockstorelink.SKUMinimumOrder} {
		t.Run(sku, func(t *testing.T) {
			t.Parallel()
			strictMockConforms(t, sku)
		})
	}
}

func strictMockConforms(t *testing.T, sku string) {
	mock, keyring := startMock(t)
	before := len(mock.Server.Orders())
	code, stdout, stderr := cli(t, checkArgs(mock.URL, keyring,
		"--allow-writes", "--write-store", mockstorelink.StoreSmichov, "--format", "json", "--sku", sku)...)
	if code != 0 {
		t.Fatalf("exit %d against the strict mock\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	rep := decodeReport(t, stdout)
	ops := map[string]bool{}
	for _, p := range rep.Probes {
		ops[p.Operation] = true
		if len(p.Findings) > 0 {
			t.Errorf("%s %s: findings %+v", p.Endpoint, p.Probe, p.Findings)
		}
		// Butter's supplier has no minimum order, so nothing can be below it.
		if sku == mockstorelink.SKUButter && p.Probe == "quantity below the supplier's minimum" && p.Verdict == contract.Skipped {
			continue
		}
		if p.Verdict != contract.Pass {
			t.Errorf("%s %s: %s %s", p.Endpoint, p.Probe, p.Verdict, p.Detail)
		}
	}
	if len(ops) != 8 {
		t.Errorf("probed %d operations, want all 8: %v", len(ops), ops)
	}
	if v := mock.Server.Violations(); len(v) != 0 {
		t.Errorf("the mock broke its own contract: %v", v)
	}
	// Exactly one order raised, at the write store, by the check.
	orders := mock.Server.Orders()
	if len(orders) != before+1 {
		t.Fatalf("%d orders after the check, want %d", len(orders), before+1)
	}
	last := orders[len(orders)-1]
	if string(last.StoreID) != mockstorelink.StoreSmichov || !strings.Contains(last.Reason, "contract check") {
		t.Errorf("the raised order is at store %s with reason %q", last.StoreID, last.Reason)
	}
	if rep.Requests != mock.Server.RequestCount(nil) {
		t.Errorf("report counts %d requests, the mock saw %d", rep.Requests, mock.Server.RequestCount(nil))
	}
}

func TestNothingIsWrittenWithoutTheFlags(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	before := len(mock.Server.Orders())
	code, stdout, stderr := cli(t, checkArgs(mock.URL, keyring)...)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	posts := mock.Server.RequestCount(func(r mockstorelink.RequestRecord) bool { return r.Method != http.MethodGet })
	if posts != 0 || len(mock.Server.Orders()) != before {
		t.Errorf("%d non-GET requests and %d new orders without --allow-writes", posts, len(mock.Server.Orders())-before)
	}
	if !strings.Contains(stdout, "SKIPPED  writes not allowed") {
		t.Errorf("the table does not show the write probe as skipped:\n%s", stdout)
	}
}

// TestDriftFaultsAreReported: each drift fault on one operation is drift
// on exactly that operation.
func TestDriftFaultsAreReported(t *testing.T) {
	t.Parallel()
	cases := []struct {
		kind     mockstorelink.FaultKind
		op       string
		endpoint string
		// probe is the probe that must show the finding; kind and path the
		// finding.
		probe, findingKind, path string
	}{
		{mockstorelink.FaultDriftRenameField, mockstorelink.OpGetInventory, "GET /v1/stores/{store_id}/inventory",
			"valid key", contract.FindingRename, "/on_hand"},
		{mockstorelink.FaultDriftWrongType, mockstorelink.OpGetSupplier, "GET /v1/suppliers/{supplier_id}",
			"valid key", contract.FindingSchema, "/lead_time_days"},
		{mockstorelink.FaultDriftMissingField, mockstorelink.OpGetStore, "GET /v1/stores/{store_id}",
			"valid key", contract.FindingSchema, "/timezone"},
		{mockstorelink.FaultDriftUndeclaredStatus, mockstorelink.OpGetSKU, "GET /v1/skus/{sku}",
			"valid key", contract.FindingUndeclaredStatus, ""},
		{mockstorelink.FaultErrorIn200, mockstorelink.OpListPOSTransactions, "GET /v1/stores/{store_id}/pos",
			"valid key, page 1", contract.FindingErrorIn200, "/error"},
		{mockstorelink.FaultDriftWrongAuthStatus, mockstorelink.OpGetReplenishmentOrder, "GET /v1/stores/{store_id}/replenishment/{order_id}",
			"another store's key", contract.FindingStatus, ""},
	}
	for _, tc := range cases {
		t.Run(string(tc.kind), func(t *testing.T) {
			t.Parallel()
			mock, keyring := startMock(t, mockstorelink.Fault{Kind: tc.kind, OperationID: tc.op})
			code, stdout, stderr := cli(t, checkArgs(mock.URL, keyring, "--format", "json")...)
			if code != 1 {
				t.Fatalf("exit %d, want 1 (drift)\nstderr: %s", code, stderr)
			}
			if !strings.Contains(stderr, "drift:") {
				t.Errorf("stderr does not say drift: %q", stderr)
			}
			rep := decodeReport(t, stdout)
			var found *contract.Finding
			for _, p := range rep.Probes {
				if p.Verdict == contract.Pass || p.Verdict == contract.Skipped {
					continue
				}
				if p.Operation != tc.op || p.Verdict != contract.Drift {
					t.Errorf("%s %s: %s %s; only %s should drift", p.Endpoint, p.Probe, p.Verdict, p.Detail, tc.op)
				}
				if p.Probe != tc.probe || p.Endpoint != tc.endpoint {
					continue
				}
				for i, f := range p.Findings {
					if f.Kind == tc.findingKind && f.Path == tc.path {
						found = &p.Findings[i]
					}
				}
				if found == nil {
					t.Errorf("%s %s findings %+v lack a %s finding at %q", p.Endpoint, p.Probe, p.Findings, tc.findingKind, tc.path)
				}
			}
			if found == nil {
				t.Fatalf("no drifting probe %q on %s", tc.probe, tc.endpoint)
			}
			// The table for people names the same endpoint and path.
			code, table, _ := cli(t, checkArgs(mock.URL, keyring)...)
			if code != 1 || !strings.Contains(table, tc.endpoint) || !strings.Contains(table, "DRIFT") ||
				!strings.Contains(table, tc.findingKind+" at "+tc.path) && tc.path != "" {
				t.Errorf("table (exit %d) does not show the drift on %s at %s:\n%s", code, tc.endpoint, tc.path, table)
			}
		})
	}
}

// TestQuirkAndWrongAuthDetails pins the two findings that are about status
// rather than schema: what exactly the report says.
func TestQuirkAndWrongAuthDetails(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t,
		mockstorelink.Fault{Kind: mockstorelink.FaultErrorIn200, OperationID: mockstorelink.OpGetSupplier},
		mockstorelink.Fault{Kind: mockstorelink.FaultDriftWrongAuthStatus, OperationID: mockstorelink.OpGetInventory},
	)
	code, stdout, stderr := cli(t, checkArgs(mock.URL, keyring, "--format", "json")...)
	if code != 1 {
		t.Fatalf("exit %d\nstderr: %s", code, stderr)
	}
	var got []string
	for _, p := range decodeReport(t, stdout).Probes {
		if p.Verdict == contract.Drift {
			got = append(got, p.Operation+" / "+p.Probe+" / "+p.Detail)
		}
	}
	want := []string{
		`getInventory / no key / 200 with error body (code "invalid_key") where 401 is due`,
		"getInventory / another store's key / expected 403, got 404",
		`getSupplier / valid key / 200 with error body (code "internal")`,
		`getSupplier / no key / 200 with error body (code "internal") where 401 is due`,
		`getSupplier / another store's key / 200 with error body (code "internal")`,
		`getSupplier / unknown supplier / 200 with error body (code "internal") where 404 is due`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("drift (-want +got):\n%s", diff)
	}
}

func TestKeysNeverAppear(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t,
		mockstorelink.Fault{Kind: mockstorelink.FaultErrorIn200, OperationID: mockstorelink.OpGetStore},
		mockstorelink.Fault{Kind: mockstorelink.FaultDriftWrongAuthStatus},
		mockstorelink.Fault{Kind: mockstorelink.FaultDriftRenameField},
	)
	keys := mock.Server.Keys()
	runs := [][]string{
		checkArgs(mock.URL, keyring, "--allow-writes", "--write-store", "102"),
		checkArgs(mock.URL, keyring, "--format", "json"),
		checkArgs(mock.URL, keyring, "--format", "junit"),
		checkArgs(mock.URL, keyring, "--store", "55"), // usage error naming a store
		checkArgs("http://127.0.0.1:1", keyring),      // unreachable
	}
	for _, args := range runs {
		_, stdout, stderr := cli(t, args...)
		for store, key := range keys {
			if strings.Contains(stdout, key) || strings.Contains(stderr, key) {
				t.Errorf("%v: output contains the key of store %s", args[len(args)-2:], store)
			}
		}
	}
}

func TestDemo(t *testing.T) {
	t.Parallel()
	code, stdout, stderr := cli(t, "demo")
	if code != 0 {
		t.Fatalf("demo exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	if !strings.Contains(stdout, "Result: StoreLink conforms to the contract.") || strings.Contains(stdout, "SKIPPED") {
		t.Errorf("demo table:\n%s", stdout)
	}
}

// TestCheckWithSpecNamesIt: check --spec names the file in the report's
// header; without --spec the header names the embedded contract's version.
func TestCheckWithSpecNamesIt(t *testing.T) {
	mock, keyring := startMock(t)
	spec := filepath.Join(t.TempDir(), "storelink-suggested.yaml")
	if err := os.WriteFile(spec, openapi.YAML, 0o644); err != nil {
		t.Fatal(err)
	}
	_, plain, _ := cli(t, checkArgs(mock.URL, keyring, "--operation", "getStore")...)
	code, named, stderr := cli(t, checkArgs(mock.URL, keyring, "--operation", "getStore", "--spec", spec)...)
	if code != exitConforms {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if first := strings.SplitN(named, "\n", 2)[0]; !strings.Contains(first, "against the spec "+spec+" (contract ") {
		t.Errorf("header %q does not name %s", first, spec)
	}
	if first := strings.SplitN(plain, "\n", 2)[0]; !strings.Contains(first, "against contract ") || strings.Contains(first, "spec") {
		t.Errorf("header without --spec: %q", first)
	}
}
