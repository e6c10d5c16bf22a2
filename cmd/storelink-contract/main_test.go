package main

import (
	"bytes"
	"context"
	"encoding/json"
	"encoding/pem"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	junit "github.com/joshdk/go-junit"
	"github.com/korral/storelink/mockstorelink"
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

// TestStrictMockConforms: every probe passes against the strict mock, with
// no finding at all, semantic rules included: once with the butter SKU and
// once with the SKU whose supplier has a minimum order, where an order
// below it is refused with 422.
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

// TestDriftFaultsAreReported switches on each drift fault of the mock for
// one operation and expects drift on exactly that operation, with the
// finding that names what broke.
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

func TestJUnitIsValidXML(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftMissingField, OperationID: mockstorelink.OpGetSKU})
	code, stdout, _ := cli(t, checkArgs(mock.URL, keyring, "--format", "junit")...)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	var doc struct {
		Tests    int `xml:"tests,attr"`
		Failures int `xml:"failures,attr"`
		Suites   []struct {
			Cases []struct {
				ClassName string `xml:"classname,attr"`
				Failure   *struct {
					Text string `xml:",chardata"`
				} `xml:"failure"`
			} `xml:"testcase"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, stdout)
	}
	// getSKU's valid key and another store's key (any key reads a SKU),
	// led by their one cause in a suite of its own.
	if doc.Failures != 3 || doc.Tests < 30 || len(doc.Suites) != 2 || len(doc.Suites[0].Cases) != 1 {
		t.Fatalf("tests %d, failures %d, suites %d", doc.Tests, doc.Failures, len(doc.Suites))
	}
	if c := doc.Suites[0].Cases[0]; c.ClassName != "cause" || !strings.Contains(c.Failure.Text, "seen 2 times on getSKU") {
		t.Errorf("the cause: %s %+v", c.ClassName, c.Failure)
	}
	for _, c := range doc.Suites[1].Cases {
		if c.Failure != nil && (c.ClassName != "getSKU" || !strings.Contains(c.Failure.Text, "schema at /supplier_id")) {
			t.Errorf("failure on %s: %s", c.ClassName, c.Failure.Text)
		}
	}
	// Every token must decode, not only the parts the struct above reads.
	dec := xml.NewDecoder(strings.NewReader(stdout))
	for {
		if _, err := dec.Token(); err != nil {
			if !errors.Is(err, io.EOF) {
				t.Fatalf("XML token error: %v", err)
			}
			break
		}
	}
}

func TestUnreachableStoreLink(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more
	keyring := writeKeyring(t, map[string]string{"47": "k47"})
	code, _, stderr := cli(t, checkArgs(url, keyring)...)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr, "cannot reach StoreLink at "+url) || !strings.Contains(stderr, "connection refused") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestHangingStoreLink(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	keyring := writeKeyring(t, map[string]string{"47": "k47"})
	code, _, stderr := cli(t, checkArgs(srv.URL, keyring, "--timeout", "300ms", "--deadline", "5s")...)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr, "cannot reach StoreLink") || !strings.Contains(stderr, "no answer within 300ms") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	good := writeKeyring(t, map[string]string{"47": "k47"})
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"47": 12`), 0o600); err != nil {
		t.Fatal(err)
	}
	url := "http://127.0.0.1:1"
	cases := map[string]struct {
		args []string
		want string
	}{
		"no command":           {nil, "missing command"},
		"unknown command":      {[]string{"probe"}, `unknown command "probe"`},
		"bad header":           {[]string{"check", "--base-url", url, "--keyring-file", good, "--header", "X-Gw secret"}, `want "Name: value"`},
		"key header":           {[]string{"check", "--base-url", url, "--keyring-file", good, "--header", "X-Korral-Store-Key: secret"}, "store key header"},
		"unknown operation":    {[]string{"check", "--base-url", url, "--keyring-file", good, "--operation", "getStock"}, `operation "getStock" is not in the contract`},
		"missing CA file":      {[]string{"check", "--base-url", url, "--keyring-file", good, "--ca-cert", filepath.Join(dir, "none.pem")}, "--ca-cert"},
		"CA file without PEM":  {[]string{"check", "--base-url", url, "--keyring-file", good, "--ca-cert", good}, "no PEM certificate"},
		"no base URL":          {[]string{"check", "--keyring-file", good}, "--base-url and --keyring-file are required"},
		"unknown flag":         {[]string{"check", "--base-url", url, "--keyring-file", good, "--verbose"}, "flag provided but not defined"},
		"missing keyring":      {[]string{"check", "--base-url", url, "--keyring-file", filepath.Join(dir, "none.json")}, "no such file"},
		"invalid keyring":      {[]string{"check", "--base-url", url, "--keyring-file", bad}, "not valid JSON"},
		"bad format":           {[]string{"check", "--base-url", url, "--keyring-file", good, "--format", "xml"}, "want table, json or junit"},
		"bad rate":             {[]string{"check", "--base-url", url, "--keyring-file", good, "--rate", "fast"}, "requests per second"},
		"writes, no store":     {[]string{"check", "--base-url", url, "--keyring-file", good, "--allow-writes"}, "no write store named"},
		"store, no writes":     {[]string{"check", "--base-url", url, "--keyring-file", good, "--write-store", "47"}, "writes are not allowed"},
		"store not in keyring": {[]string{"check", "--base-url", url, "--keyring-file", good, "--store", "55"}, `store "55" has no key`},
		"stray argument":       {[]string{"check", "--base-url", url, "--keyring-file", good, "now"}, `unexpected argument "now"`},
	}
	for name, tc := range cases {
		code, stdout, stderr := cli(t, tc.args...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want 2 and %q", name, code, stderr, tc.want)
		}
		if strings.Count(stderr, "\n") != 1 || strings.Contains(stderr, "secret") {
			t.Errorf("%s: stderr is not one line without the header's value: %q", name, stderr)
		}
		if stdout != "" {
			t.Errorf("%s: a usage error printed a report: %q", name, stdout)
		}
	}
}

func TestHelp(t *testing.T) {
	t.Parallel()
	for _, args := range [][]string{{"help"}, {"-h"}, {"--help"}} {
		code, stdout, stderr := cli(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "storelink-contract check --base-url URL --keyring-file FILE") {
			t.Errorf("%v: exit %d\n%s", args, code, stdout)
		}
	}
	for _, args := range [][]string{{"check", "-h"}, {"check", "--base-url", "x", "--help"}, {"demo", "--help"}} {
		code, stdout, stderr := cli(t, args...)
		if code != 0 || stderr != "" || !strings.Contains(stdout, "Usage: storelink-contract "+args[0]) || !strings.Contains(stdout, "-format") {
			t.Errorf("%v: exit %d\nstdout: %s\nstderr: %s", args, code, stdout, stderr)
		}
	}
	code, stdout, _ := cli(t, "check", "--help")
	for _, f := range []string{"-allow-writes", "-max-requests", "-rate", "-header", "-ca-cert", "-operation"} {
		if code != 0 || !strings.Contains(stdout, f) {
			t.Errorf("check --help does not list %s:\n%s", f, stdout)
		}
	}
}

func TestVersion(t *testing.T) {
	t.Parallel()
	for _, arg := range []string{"version", "--version"} {
		code, stdout, _ := cli(t, arg)
		if code != 0 || !strings.HasPrefix(stdout, "storelink-contract ") || !strings.Contains(stdout, "(commit ") {
			t.Errorf("%s: exit %d %q", arg, code, stdout)
		}
	}
}

// TestPipelineFlags: the extra header reaches StoreLink (here the mock,
// behind a recorder) on every request and never appears in any output;
// --operation limits the probes; --ca-cert makes a private CA trusted.
func TestPipelineFlags(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	const secret = "gw-key-5a4b3c2d1e"
	var mu sync.Mutex
	var seen []string
	recorder := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Gateway-Key"))
		mu.Unlock()
		mock.Server.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(recorder)
	// The refused handshake below is expected; keep it out of the test log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	cert := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(caFile, cert, 0o600); err != nil {
		t.Fatal(err)
	}
	args := checkArgs(srv.URL, keyring, "--header", "X-Gateway-Key: "+secret, "--operation", "getInventory",
		"--operation", "getStore", "--format", "json")

	// Without the CA the TLS handshake fails: the check cannot start.
	code, _, stderr := cli(t, args...)
	if code != 2 || !strings.Contains(stderr, "certificate") {
		t.Fatalf("without --ca-cert: exit %d, stderr %q", code, stderr)
	}
	mu.Lock()
	seen = nil
	mu.Unlock()

	code, stdout, stderr := cli(t, append(args, "--ca-cert", caFile)...)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	rep := decodeReport(t, stdout)
	for _, p := range rep.Probes {
		if p.Operation != "getInventory" && p.Operation != "getStore" {
			t.Errorf("probe of unselected operation %s", p.Operation)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || len(seen) != rep.Requests {
		t.Errorf("the mock saw %d requests, the report says %d", len(seen), rep.Requests)
	}
	for i, v := range seen {
		if v != secret {
			t.Errorf("request %d carried X-Gateway-Key %q", i, v)
		}
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Error("the header's value appears in the output")
	}
}

// TestJUnitReadByAJUnitConsumer parses the report with go-junit, the
// reader CI tools build on: every probe is a test with its time, drift a
// failure, skipped probes skipped.
func TestJUnitReadByAJUnitConsumer(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t, mockstorelink.Fault{Kind: mockstorelink.FaultDriftMissingField, OperationID: mockstorelink.OpGetSKU})
	before := time.Now().UTC().Truncate(time.Second)
	code, stdout, _ := cli(t, checkArgs(mock.URL, keyring, "--format", "junit")...)
	if code != 1 {
		t.Fatalf("exit %d", code)
	}
	suites, err := junit.Ingest([]byte(stdout))
	if err != nil {
		t.Fatalf("go-junit cannot read the report: %v", err)
	}
	// The causes first, then the probes.
	if len(suites) != 2 || suites[0].Totals.Tests != 1 || suites[0].Totals.Failed != 1 {
		t.Fatalf("%d suites", len(suites))
	}
	s := suites[1]
	if s.Totals.Tests < 30 || s.Totals.Failed != 2 || s.Totals.Skipped == 0 {
		t.Errorf("totals %+v", s.Totals)
	}
	var timed time.Duration
	for _, c := range s.Tests {
		timed += c.Duration
		if c.Status == junit.StatusFailed && (c.Classname != "getSKU" || c.Error == nil) {
			t.Errorf("failed test %s/%s: %v", c.Classname, c.Name, c.Error)
		}
	}
	if timed <= 0 || s.Totals.Duration < timed/2 {
		t.Errorf("test cases carry %s, the suite %s", timed, s.Totals.Duration)
	}
	var doc struct {
		Suite struct {
			Timestamp string `xml:"timestamp,attr"`
		} `xml:"testsuite"`
	}
	if err := xml.Unmarshal([]byte(stdout), &doc); err != nil {
		t.Fatal(err)
	}
	ts, err := time.Parse("2006-01-02T15:04:05", doc.Suite.Timestamp)
	if err != nil || ts.Before(before) || ts.After(time.Now().UTC()) {
		t.Errorf("suite timestamp %q (%v) is not when the check ran", doc.Suite.Timestamp, err)
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

// TestRedirectsAreNeverFollowed: a StoreLink address that redirects every
// request (302 and 307 in turn) to a second server, over plain HTTP and
// over TLS with --ca-cert. The check, writes allowed, reports the redirects
// and sends nothing, key or order, to the second server.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(second.Close)
	var n atomic.Int32
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusFound
		if n.Add(1)%2 == 0 || r.Method == http.MethodPost {
			status = http.StatusTemporaryRedirect
		}
		http.Redirect(w, r, second.URL+r.URL.RequestURI(), status)
	})
	plain := httptest.NewServer(redirect)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(redirect)
	t.Cleanup(tlsSrv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	keyring := writeKeyring(t, map[string]string{"47": "sk-47-redirect-test-key"})
	for name, args := range map[string][]string{
		"plain":   checkArgs(plain.URL, keyring, "--allow-writes", "--write-store", "47", "--format", "json"),
		"ca-cert": checkArgs(tlsSrv.URL, keyring, "--allow-writes", "--write-store", "47", "--format", "json", "--ca-cert", caFile),
	} {
		code, stdout, stderr := cli(t, args...)
		if code == 0 {
			t.Errorf("%s: exit 0 against a redirecting address\n%s", name, stderr)
		}
		rep := decodeReport(t, stdout)
		redirects := 0
		for _, p := range rep.Probes {
			if p.Got == http.StatusFound || p.Got == http.StatusTemporaryRedirect {
				redirects++
			}
		}
		if redirects == 0 || rep.Requests == 0 {
			t.Errorf("%s: %d requests, %d answered with a redirect; want the redirects in the report", name, rep.Requests, redirects)
		}
	}
	if got := reached.Load(); got != 0 {
		t.Fatalf("%d request(s) followed a redirect to the second server", got)
	}
}
