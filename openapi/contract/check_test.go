package contract

import (
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// fixedNow keeps the POS window, and so the requests, the same on every run.
func fixedNow() time.Time { return time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC) }

func config(f *fake, baseURL string) Config {
	return Config{
		BaseURL: baseURL,
		Keyring: map[string]string{"47": f.keys["47"], "102": f.keys["102"]},
		SKU:     fakeSKU,
		OrderID: fakeOrder,
		Rate:    1000,
		Now:     fixedNow,
	}
}

func check(t *testing.T, cfg Config) *Report {
	t.Helper()
	rep, err := Check(context.Background(), cfg)
	if err != nil {
		t.Fatalf("Check: %v", err)
	}
	return rep
}

// verdicts lists "operation/probe verdict" for every probe that did not
// pass, which is what most tests compare.
func notPassing(rep *Report) []string {
	var out []string
	for _, p := range rep.Probes {
		if p.Verdict != Pass {
			out = append(out, p.Operation+"/"+p.Probe+" "+string(p.Verdict))
		}
	}
	return out
}

// failing lists "operation/probe verdict" for every probe that drifted or
// could not be checked.
func failing(rep *Report) []string {
	var out []string
	for _, p := range rep.Probes {
		if p.Verdict == Drift || p.Verdict == Error {
			out = append(out, p.Operation+"/"+p.Probe+" "+string(p.Verdict))
		}
	}
	return out
}

func findProbe(t *testing.T, rep *Report, op, name string) Result {
	t.Helper()
	for _, p := range rep.Probes {
		if p.Operation == op && p.Probe == name {
			return p
		}
	}
	t.Fatalf("no probe %s/%s in the report", op, name)
	return Result{}
}

func TestConformingStoreLinkPasses(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t)
	cfg := config(f, srv.URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	if got := notPassing(rep); len(got) != 0 {
		t.Fatalf("probes not passing against a conformant StoreLink:\n%s", strings.Join(got, "\n"))
	}
	if rep.ExitCode() != 0 || rep.Verdict != Pass {
		t.Errorf("verdict %s, exit %d; want pass, 0", rep.Verdict, rep.ExitCode())
	}
	covered := map[string]bool{}
	for _, p := range rep.Probes {
		covered[p.Operation] = true
	}
	for id := range mustSpec(t).ops {
		if !covered[id] {
			t.Errorf("operation %s has no probe", id)
		}
	}
	// 25 transactions in pages of 10: the walk reads all three pages.
	if n := f.count("GET /v1/stores/47/pos?cursor="); n != 2 {
		t.Errorf("followed %d POS cursors, want 2", n)
	}
	// Exactly one order raised, at the write store, then read back.
	if n := f.count("POST "); n != 5 {
		t.Errorf("%d POSTs, want 5 (no key, other key, invalid body, below the minimum, one order)", n)
	}
	f.mu.Lock()
	orders := len(f.orders)
	f.mu.Unlock()
	if orders != 2 {
		t.Errorf("%d orders at the fake, want the fixture and one new", orders)
	}
	if rep.Requests != len(f.sent()) {
		t.Errorf("report counts %d requests, the fake saw %d", rep.Requests, len(f.sent()))
	}
}

func TestNothingIsWrittenWithoutAllowWrites(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t)
	rep := check(t, config(f, srv.URL))
	if n := f.count("POST "); n != 0 {
		t.Fatalf("%d POST requests without --allow-writes", n)
	}
	p := findProbe(t, rep, opCreateOrder, "raise an order")
	if p.Verdict != Skipped || !strings.Contains(p.Detail, "--allow-writes") {
		t.Errorf("write probe = %s %q, want skipped naming --allow-writes", p.Verdict, p.Detail)
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d with only skipped writes, want 0", rep.ExitCode())
	}
}

func TestSkipsDoNotFail(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t)
	cfg := config(f, srv.URL)
	cfg.OrderID = ""
	delete(cfg.Keyring, "102")
	rep := check(t, cfg)
	want := []string{
		"listStores/another store's key skipped",
		"getStore/another store's key skipped",
		"getInventory/another store's key skipped",
		"listPOSTransactions/another store's key skipped",
		"getSKU/another store's key skipped",
		"getSupplier/another store's key skipped",
		"getReplenishmentOrder/valid key skipped",
		"getReplenishmentOrder/another store's key skipped",
		"createReplenishmentOrder/raise an order skipped",
	}
	if diff := cmp.Diff(want, notPassing(rep)); diff != "" {
		t.Errorf("probes not passing (-want +got):\n%s", diff)
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d, want 0", rep.ExitCode())
	}
}

// onPath matches requests of method to path.
func onPath(method, path string) func(*http.Request) bool {
	return func(r *http.Request) bool { return r.Method == method && r.URL.Path == path }
}

// withKey matches the requests of m that carry a store key.
func withKey(m func(*http.Request) bool) func(*http.Request) bool {
	return func(r *http.Request) bool { return m(r) && r.Header.Get("X-Korral-Store-Key") != "" }
}

// is2xx reports a success status.
func is2xx(status int) bool { return status >= 200 && status < 300 }

// driftCase is a drift the fake plays on one endpoint and what the report
// says about it.
type driftCase struct {
	name     string
	wrap     func(http.Handler) http.Handler
	op       string
	probe    string
	headline string   // the report's one-line detail
	paths    []string // Finding.Path of every finding
	others   []string // further probes that drift, by design of the case
}

// driftCases are the drifts TestDriftIsReportedOnItsEndpoint plays.
var driftCases = []driftCase{{
	name: "renamed field",
	wrap: rewrite(onPath("GET", "/v1/stores/47/inventory"), func(s int, b map[string]any) (int, any) {
		if is2xx(s) {
			b["on_hand"] = b["on_hand_units"]
			delete(b, "on_hand_units")
		}
		return s, b
	}),
	op: opGetInventory, probe: "valid key",
	// One finding: the rename, not an extra and a missing field.
	headline: `renamed? "on_hand" present, "on_hand_units" missing`,
	paths:    []string{"/on_hand"},
}, {
	name: "wrong type",
	wrap: rewrite(onPath("GET", "/v1/suppliers/"+fakeSupplier), func(s int, b map[string]any) (int, any) {
		if is2xx(s) {
			b["lead_time_days"] = "2"
		}
		return s, b
	}),
	op: opGetSupplier, probe: "valid key",
	headline: "value must be an integer",
	paths:    []string{"/lead_time_days"},
	// Any valid key reads a supplier, and gets the same answer.
	others: []string{"getSupplier/another store's key drift"},
}, {
	name: "missing required field",
	wrap: rewrite(onPath("GET", "/v1/stores/47/pos"), func(s int, b map[string]any) (int, any) {
		if is2xx(s) {
			delete(b, "total_count")
		}
		return s, b
	}),
	op: opListPOS, probe: "valid key, page 1",
	headline: `property "total_count" is missing`,
	paths:    []string{"/total_count"},
	others:   []string{"listPOSTransactions/valid key, page 2 drift", "listPOSTransactions/valid key, page 3 drift", "listPOSTransactions/valid key, limit=1 drift"},
}, {
	name: "undeclared status",
	wrap: rewrite(withKey(onPath("GET", "/v1/skus/"+fakeSKU)), func(s int, b map[string]any) (int, any) {
		return http.StatusTeapot, b
	}),
	op: opGetSKU, probe: "valid key",
	headline: "expected 200, got 418",
	paths:    []string{"", ""},
	others:   []string{"getSKU/another store's key drift"},
}, {
	name: "200 with error body",
	wrap: rewrite(withKey(onPath("GET", "/v1/stores/47")), func(s int, b map[string]any) (int, any) {
		return 200, map[string]any{"error": map[string]any{"code": "internal", "message": "timeout"}}
	}),
	op: opGetStore, probe: "valid key",
	headline: `200 with error body (code "internal")`,
	// One finding per probe; the failed Store schema is in its details.
	paths: []string{"/error"},
	// The other store's key is refused with the same quirk.
	others: []string{"getStore/another store's key drift"},
}, {
	name: "wrong auth status",
	wrap: rewrite(onPath("GET", "/v1/stores/47/inventory"), func(s int, b map[string]any) (int, any) {
		if s == http.StatusForbidden {
			return http.StatusNotFound, b
		}
		return s, b
	}),
	op: opGetInventory, probe: "another store's key",
	headline: "expected 403, got 404",
	paths:    []string{""},
}}

// TestDriftIsReportedOnItsEndpoint: each drift of driftCases fails its own
// probe (and the others the case names), with the headline and the finding
// paths.
func TestDriftIsReportedOnItsEndpoint(t *testing.T) {
	t.Parallel()
	for _, tc := range driftCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			srv := f.serve(t, tc.wrap)
			rep := check(t, config(f, srv.URL))
			if rep.ExitCode() != 1 {
				t.Errorf("exit %d, want 1", rep.ExitCode())
			}
			want := append([]string{tc.op + "/" + tc.probe + " drift"}, tc.others...)
			if diff := cmp.Diff(want, failing(rep)); diff != "" {
				t.Errorf("failing probes (-want +got):\n%s", diff)
			}
			p := findProbe(t, rep, tc.op, tc.probe)
			if !strings.Contains(p.Detail, tc.headline) {
				t.Errorf("detail %q, want it to say %q", p.Detail, tc.headline)
			}
			var paths []string
			for _, f := range p.Findings {
				paths = append(paths, f.Path)
			}
			if diff := cmp.Diff(tc.paths, paths); diff != "" {
				t.Errorf("finding paths (-want +got):\n%s\nfindings: %+v", diff, p.Findings)
			}
		})
	}
}

func TestReadBackMismatchIsDrift(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t, rewrite(func(r *http.Request) bool {
		return r.Method == "GET" && strings.HasPrefix(r.URL.Path, "/v1/stores/47/replenishment/RO-47-0005")
	}, func(s int, b map[string]any) (int, any) {
		b["quantity_units"] = 120
		return s, b
	}))
	cfg := config(f, srv.URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	p := findProbe(t, rep, opGetOrder, "read back the raised order")
	// The read-back stands on state the contract implies but a generated
	// mock lacks: the finding names the rule and is labelled assumption.
	want := []Finding{{Kind: FindingRule, Rule: "order.readback", Path: "/quantity_units",
		Schema:     "#/paths/~1v1~1stores~1{store_id}~1replenishment~1{order_id}/get/x-korral-rules",
		Message:    "not the quantity the order was raised for: an order has the SKU and quantity_units it was raised with",
		Assumption: true}}
	if diff := cmp.Diff(want, p.Findings); diff != "" {
		t.Errorf("read-back findings (-want +got):\n%s", diff)
	}
}

func TestUnreachableStoreLinkAborts(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	f := newFake()
	rep := check(t, config(f, "http://"+addr))
	if rep.ExitCode() != 2 || rep.Requests != 1 || len(rep.Probes) != 1 {
		t.Fatalf("exit %d after %d requests and %d probes; want 2 after the first", rep.ExitCode(), rep.Requests, len(rep.Probes))
	}
	if !strings.Contains(rep.Aborted, "cannot reach StoreLink") || !strings.Contains(rep.Aborted, "connection refused") {
		t.Errorf("aborted = %q", rep.Aborted)
	}
}

// blocking is a handler that never answers until the client gives up or
// the test ends.
func blocking(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	release := make(chan struct{})
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	return srv, &n
}

func TestHangingStoreLinkAborts(t *testing.T) {
	t.Parallel()
	srv, n := blocking(t)
	cfg := config(newFake(), srv.URL)
	cfg.RequestTimeout = 200 * time.Millisecond
	rep := check(t, cfg)
	if rep.ExitCode() != 2 || n.Load() != 1 {
		t.Fatalf("exit %d after %d requests; want 2 after one", rep.ExitCode(), n.Load())
	}
	if !strings.Contains(rep.Aborted, "no answer within 200ms") {
		t.Errorf("aborted = %q", rep.Aborted)
	}
}

func TestDeadlineStopsTheCheck(t *testing.T) {
	t.Parallel()
	f := newFake()
	hang := make(chan struct{})
	t.Cleanup(func() { close(hang) })
	// The first request answers, every later one hangs: only the overall
	// deadline can end the check.
	var first atomic.Bool
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if first.CompareAndSwap(false, true) {
			f.ServeHTTP(w, r)
			return
		}
		select {
		case <-r.Context().Done():
		case <-hang:
		}
	}))
	t.Cleanup(srv.Close)
	cfg := config(f, srv.URL)
	cfg.Deadline = 300 * time.Millisecond
	rep := check(t, cfg)
	if rep.ExitCode() != 2 || !strings.Contains(rep.Aborted, "deadline (300ms) passed") {
		t.Fatalf("exit %d, aborted %q", rep.ExitCode(), rep.Aborted)
	}
	if p := rep.Probes[1]; p.Verdict != Error || p.Detail != "no answer before the check's deadline" {
		t.Errorf("second probe = %s %q", p.Verdict, p.Detail)
	}
}

func TestRequestBudget(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t)
	cfg := config(f, srv.URL)
	cfg.MaxRequests = 5
	rep := check(t, cfg)
	if n := len(f.sent()); n != 5 {
		t.Errorf("sent %d requests with a budget of 5", n)
	}
	if rep.ExitCode() != 2 || rep.Summary.Error == 0 {
		t.Errorf("exit %d with %d errors; want 2 and unsent probes as errors", rep.ExitCode(), rep.Summary.Error)
	}
	if p := rep.Probes[5]; p.Verdict != Error || !strings.Contains(p.Detail, "request budget (5) is spent") {
		t.Errorf("sixth probe = %s %q", p.Verdict, p.Detail)
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	t.Parallel()
	var elsewhere atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		elsewhere.Add(1)
	}))
	t.Cleanup(other.Close)
	f := newFake()
	srv := f.serve(t, func(http.Handler) http.Handler {
		return http.RedirectHandler(other.URL+"/v1/stores", http.StatusFound)
	})
	rep := check(t, config(f, srv.URL))
	if elsewhere.Load() != 0 {
		t.Fatalf("the check followed a redirect (and sent the key along) %d times", elsewhere.Load())
	}
	p := findProbe(t, rep, opListStores, "valid key")
	if p.Verdict != Drift || p.Got != http.StatusFound || p.Findings[1].Kind != FindingUndeclaredStatus {
		t.Errorf("redirect probe = %+v", p)
	}
}

// TestServiceTroubleIsNotDrift: a declared 503 with a proper error body
// means StoreLink could not answer, not that it breaks the contract.
func TestServiceTroubleIsNotDrift(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t, rewrite(func(r *http.Request) bool { return r.URL.Path == "/v1/skus/"+fakeSKU },
		func(int, map[string]any) (int, any) {
			return 503, map[string]any{"error": map[string]any{"code": "unavailable", "message": "maintenance"}}
		}))
	rep := check(t, config(f, srv.URL))
	p := findProbe(t, rep, opGetSKU, "valid key")
	if p.Verdict != Error || !strings.Contains(p.Detail, `answered 503 (code "unavailable")`) {
		t.Errorf("probe = %s %q", p.Verdict, p.Detail)
	}
	// Without a supplier id from the SKU the supplier read is skipped.
	if p := findProbe(t, rep, opGetSupplier, "valid key"); p.Verdict != Skipped {
		t.Errorf("supplier probe = %s %q, want skipped", p.Verdict, p.Detail)
	}
	if rep.ExitCode() != 2 {
		t.Errorf("exit %d, want 2", rep.ExitCode())
	}
}

func mustSpec(t *testing.T) *spec {
	t.Helper()
	sp, err := loadSpec()
	if err != nil {
		t.Fatal(err)
	}
	return sp
}
