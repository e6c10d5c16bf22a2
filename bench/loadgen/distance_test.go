package main

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mockstorelink"
)

func TestLimitForIsTheIssues(t *testing.T) {
	for _, c := range []struct {
		stores int
		master string
		want   distanceLimit
		text   string
	}{
		{1, "cold", distanceLimit{RoundTrips: 2.3}, "≤ 2.3 round trips"},
		{20, "cold", distanceLimit{RoundTrips: 2.3}, "≤ 2.3 round trips"},
		{6, "warm", distanceLimit{RoundTrips: 1.3}, "≤ 1.3 round trips"},
		{0, "cold", distanceLimit{Wall: 2 * time.Second}, "< 2 s"},
		{0, "warm", distanceLimit{Wall: time.Second}, "< 1 s"},
	} {
		got := limitFor(c.stores, c.master)
		if got != c.want || got.String() != c.text {
			t.Errorf("limitFor(%d, %s) = %+v %q, want %+v %q", c.stores, c.master, got, got, c.want, c.text)
		}
	}
}

func TestLimitRatioAndMet(t *testing.T) {
	const delay = 50 * time.Millisecond
	cold := limitFor(6, "cold")
	// 115 ms is 2.3 round trips of 50 ms: exactly at the limit, which is
	// "at most".
	if r := cold.ratio(115, delay); r < 0.9999 || r > 1.0001 || !cold.met(r) {
		t.Errorf("115 ms against ≤ 2.3 round trips: ratio %v, met %v", r, cold.met(r))
	}
	if r := cold.ratio(230, delay); r < 1.9999 || r > 2.0001 || cold.met(r) {
		t.Errorf("230 ms against ≤ 2.3 round trips: ratio %v, met %v", r, cold.met(r))
	}
	sweep := limitFor(0, "warm")
	// The sweep's limit is a wall, strictly under: 1,000 ms is not met.
	if r := sweep.ratio(1000, delay); r != 1 || sweep.met(r) {
		t.Errorf("1000 ms against < 1 s: ratio %v, met %v", r, sweep.met(r))
	}
	if r := sweep.ratio(600, delay); r != 0.6 || !sweep.met(r) {
		t.Errorf("600 ms against < 1 s: ratio %v, met %v", r, sweep.met(r))
	}
	if got := roundTrips(125, delay); got != 2.5 {
		t.Errorf("roundTrips(125 ms) = %v", got)
	}
	if got := roundTrips(125, 0); got != 0 {
		t.Errorf("roundTrips with no delay = %v", got)
	}
}

func TestCountRequests(t *testing.T) {
	req := func(op, store string) mockRequest { return mockRequest{OperationID: op, StoreID: store, Status: 200} }
	got := countRequests([]mockRequest{
		req(mockstorelink.OpGetStore, "47"),
		req(mockstorelink.OpGetInventory, "47"),
		req(mockstorelink.OpListPOSTransactions, "47"),
		req(mockstorelink.OpGetInventory, "102"),
		req(mockstorelink.OpListPOSTransactions, "102"),
		req(mockstorelink.OpListPOSTransactions, "102"), // a second page
		req(mockstorelink.OpListPOSTransactions, "12"),  // POS without inventory
		req(mockstorelink.OpGetSKU, ""),
		req(mockstorelink.OpGetSupplier, ""),
		req(mockstorelink.OpListStores, ""),
	})
	want := requestCounts{Stores: 3, InventoryMin: 0, InventoryMax: 1, POSMin: 1, POSMax: 2,
		StoreReads: 1, SKUReads: 1, SupplierReads: 1, Other: 1, Total: 10}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("counts (-want +got):\n%s", diff)
	}
	if got.asExpected(3) {
		t.Error("a store with two POS pages and one without inventory is as expected")
	}
	if got := countRequests(nil); got != (requestCounts{}) {
		t.Errorf("no requests: %+v", got)
	}
}

func TestAsExpected(t *testing.T) {
	once := requestCounts{Stores: 180, InventoryMin: 1, InventoryMax: 1, POSMin: 1, POSMax: 1, SKUReads: 1, SupplierReads: 1, StoreReads: 180, Total: 542}
	if !once.asExpected(180) {
		t.Error("each store once, master data once: not as expected")
	}
	warm := once
	warm.SKUReads, warm.SupplierReads, warm.StoreReads = 0, 0, 0
	if !warm.asExpected(180) {
		t.Error("warm (no master data): not as expected")
	}
	for name, c := range map[string]requestCounts{
		"a store missing":    func() requestCounts { c := once; c.Stores = 179; return c }(),
		"SKU twice":          func() requestCounts { c := once; c.SKUReads = 2; return c }(),
		"supplier twice":     func() requestCounts { c := once; c.SupplierReads = 2; return c }(),
		"inventory twice":    func() requestCounts { c := once; c.InventoryMax = 2; return c }(),
		"a POS page missing": func() requestCounts { c := once; c.POSMin = 0; return c }(),
		"a store list":       func() requestCounts { c := once; c.Other = 1; return c }(),
	} {
		if c.asExpected(180) {
			t.Errorf("%s: as expected", name)
		}
	}
}

func TestOrderStoresPutsStore47FirstThenByNumber(t *testing.T) {
	got := orderStores([]string{"1008", "210", "47", "1007", "12", "x", "102"})
	want := []string{"47", "12", "102", "210", "1007", "1008", "x"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
}

func TestKeyringStoresReadsTheMocksKeyring(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keyring.json")
	if err := os.WriteFile(path, []byte(`{"1007":"k1","47":"k2","12":"k3"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	got, err := keyringStores(path)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"47", "12", "1007"}, got); diff != "" {
		t.Errorf("stores (-want +got):\n%s", diff)
	}
	if err := os.WriteFile(path, []byte(`not json`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := keyringStores(path); err == nil {
		t.Error("a broken keyring was read")
	}
}

func TestRiskArgs(t *testing.T) {
	stores := []string{"47", "12", "55"}
	got := riskArgs(stores, 2)
	want := map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []string{"47", "12"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("two stores (-want +got):\n%s", diff)
	}
	got["store_ids"].([]string)[0] = "changed"
	if stores[0] != "47" {
		t.Error("riskArgs shares its slice with the store list")
	}
	if diff := cmp.Diff(map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []string{"all"}}, riskArgs(stores, 0)); diff != "" {
		t.Errorf("sweep (-want +got):\n%s", diff)
	}
}

func TestLatencyFaultsAreWhatTheMockParses(t *testing.T) {
	faults, err := mockstorelink.ParseFaults(latencyFaults(50 * time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if len(faults) != 1 || faults[0].Kind != mockstorelink.FaultLatency || faults[0].Delay != 50*time.Millisecond || faults[0].OperationID != "" {
		t.Errorf("faults: %+v", faults)
	}
	faults, err = mockstorelink.ParseFaults(latencyFaults(0))
	if err != nil || len(faults) != 0 {
		t.Errorf("no latency: %+v %v", faults, err)
	}
}

// TestMockAdminAgainstTheMock drives the real mock's admin endpoint:
// latency set and cleared, the request log read and reset.
func TestMockAdminAgainstTheMock(t *testing.T) {
	const token = "test-admin-token-0123456789"
	m, err := mockstorelink.Start(mockstorelink.Options{AdminToken: token, Now: mockstorelink.DefaultNow})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	ctx := context.Background()
	admin := mockAdmin{url: m.URL, token: token}
	if err := admin.setLatency(ctx, 50*time.Millisecond); err != nil {
		t.Fatal(err)
	}
	if f := m.Server.Faults(); len(f) != 1 || f[0].Kind != mockstorelink.FaultLatency || f[0].Delay != 50*time.Millisecond {
		t.Fatalf("faults after setLatency: %+v", f)
	}
	if err := admin.setLatency(ctx, 0); err != nil {
		t.Fatal(err)
	}
	if f := m.Server.Faults(); len(f) != 0 {
		t.Fatalf("faults after setLatency(0): %+v", f)
	}
	key := m.Server.Keys()[mockstorelink.StoreSmichov]
	for range 2 {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, m.URL+"/v1/stores/47/inventory?sku="+mockstorelink.SKUButter, nil)
		req.Header.Set(storeKeyHeader, key)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
	}
	reqs, err := admin.requests(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got := countRequests(reqs); got.Stores != 1 || got.InventoryMax != 2 || got.Total != 2 {
		t.Errorf("counts of two inventory reads: %+v from %+v", got, reqs)
	}
	if err := admin.resetRequests(ctx); err != nil {
		t.Fatal(err)
	}
	if reqs, err := admin.requests(ctx); err != nil || len(reqs) != 0 {
		t.Errorf("after reset: %+v %v", reqs, err)
	}
	bad := mockAdmin{url: m.URL, token: "wrong"}
	if err := bad.setLatency(ctx, 0); err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("a wrong token: %v", err)
	}
}

func TestUnavailableAndRefusal(t *testing.T) {
	// What a server without the sweep answers to store_ids ["all"].
	text := `{"ok":false,"error":{"code":"INVALID_ARGUMENT","message":"invalid arguments: store_ids: store_ids/items: pattern: \"all\" does not match regular expression ^[0-9]{1,10}$ | and more"}}`
	err := fmt.Errorf("%w: %s", errRefused, text)
	if !unavailable(err) {
		t.Fatal("the refusal is not recognised")
	}
	got := refusal(err)
	if !strings.HasPrefix(got, `INVALID_ARGUMENT: invalid arguments: store_ids: store_ids/items: pattern: "all" does not match`) ||
		strings.Contains(got, "|") || len([]rune(got)) > 101 {
		t.Errorf("refusal = %q", got)
	}
	if !unavailable(errors.New(`calling "tools/call": invalid params (-32602)`)) {
		t.Error("the SDK's invalid params are not recognised")
	}
	for _, e := range []error{nil, errors.New("tool error: UPSTREAM_UNAVAILABLE"), context.DeadlineExceeded} {
		if unavailable(e) {
			t.Errorf("%v counted as unavailable", e)
		}
	}
	if got := refusal(errors.New("line one\nline two")); got != "line one" {
		t.Errorf("plain error: %q", got)
	}
}

func TestDistancePlan(t *testing.T) {
	now := time.Now()
	p := planFor(6, 20, now.Add(time.Minute))
	if p.calls != 20 || p.floorCalls != 10 {
		t.Errorf("a store row: %+v", p)
	}
	if s := planFor(0, 20, now); s.calls != 10 || s.floorCalls != 5 {
		t.Errorf("the sweep: %+v", s)
	}
	if q := planFor(0, 2, now); q.calls != distanceMinCalls || q.floorCalls != distanceMinCalls {
		t.Errorf("too few calls: %+v", q)
	}
	if !p.more(19, now) || p.more(20, now) {
		t.Error("the call count does not bound the row")
	}
	late := now.Add(2 * time.Minute)
	if !p.more(distanceMinCalls-1, late) || p.more(distanceMinCalls, late) {
		t.Error("past the deadline a row does not stop after its minimum")
	}
}

// distanceRunOf is a run with the 1-store and sweep rows, cold and warm;
// the sweep warm is not available.
func distanceRunOf(oneCold, oneWarm, sweepCold float64) runResult {
	recv := func(stores, master int) *requestCounts {
		return &requestCounts{Stores: stores, InventoryMin: 1, InventoryMax: 1, POSMin: 1, POSMax: 1,
			StoreReads: master * stores, SKUReads: master, SupplierReads: master, Total: 2*stores + master*(stores+2)}
	}
	return runResult{Distance: &distanceResult{DelayMS: 50, WorldStores: 180, WorldSKUs: 18000, Rows: []distanceRow{
		{Stores: 1, Master: "cold", Available: true, WallMS: []float64{oneCold, oneCold + 10, oneCold - 10}, FloorMS: []float64{10, 10}, Received: recv(1, 1)},
		{Stores: 0, Master: "cold", Available: true, WallMS: []float64{sweepCold}, FloorMS: []float64{100}, Received: recv(180, 1)},
		{Stores: 1, Master: "warm", Available: true, WallMS: []float64{oneWarm}, FloorMS: []float64{5}, Received: recv(1, 0)},
		{Stores: 0, Master: "warm", Note: "INVALID_ARGUMENT: no sweep here"},
	}}}
}

func TestDistanceMarkdown(t *testing.T) {
	r := &report{Config: map[string]any{"distance_calls": 20},
		Runs: []runResult{distanceRunOf(110, 60, 1500), distanceRunOf(120, 70, 2500), distanceRunOf(100, 65, 1000)}}
	rows := r.distanceRows()
	if len(rows) != 4 {
		t.Fatalf("%d rows: %+v", len(rows), rows)
	}
	// The rows come in the phase's order, cold first, whatever the runs'.
	var order []string
	for _, d := range rows {
		order = append(order, d.label+"/"+d.master)
	}
	if diff := cmp.Diff([]string{"1 store/cold", "sweep, all 180/cold", "1 store/warm", "sweep, all 180/warm"}, order); diff != "" {
		t.Errorf("order (-want +got):\n%s", diff)
	}
	var b strings.Builder
	r.distanceMarkdown(func(f string, a ...any) { b.WriteString(fmtS(f, a...) + "\n") })
	md := b.String()
	for _, want := range []string{
		"## StoreLink at a distance: 50 ms on every route, a world of 180 stores and 18000 SKUs",
		// Medians 110, 120, 100 ms: 2.2 (2.0–2.4) round trips, 0.96 (0.87–1.04)x of 2.3.
		"| 1 store | cold | 3 | 110 (100–120) | 120 (110–130) | 2.20 (2.00–2.40) | ≤ 2.3 round trips | 0.96 (0.87–1.04)x | yes | 10.0 | 2.00 (1.80–2.20) |",
		"| sweep, all 180 | cold | 1 | 1500 (1000–2500) | 1500 (1000–2500) | 30.00 (20.00–50.00) | < 2 s | 0.75 (0.50–1.25)x | yes | 100.0 | 28.00 (18.00–48.00) |",
		"| 1 store | warm | 1 | 65 (60–70) |",
		"| sweep, all 180 | warm | 0 | not available: INVALID_ARGUMENT: no sweep here | | | < 1 s | | n/a | | |",
		"| sweep, all 180 | cold | 180 | 1 | 1 | 180 | 1 | 1 | 0 | yes |",
		"| 1 store | warm | 1 | 1 | 1 | 0 | 0 | 0 | 0 | yes |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| sweep, all 180 | warm | 0 | 1 |") {
		t.Errorf("an unavailable row has request counts:\n%s", md)
	}
	// A median over the limit is unmet.
	r.Runs[2] = distanceRunOf(130, 65, 1000)
	for _, d := range r.distanceRows() {
		if d.label == "1 store" && d.master == "cold" && d.met() {
			t.Errorf("median 2.4 round trips against ≤ 2.3 is met: %+v", d)
		}
	}
}

// TestSummaryHoldsTheIssuesTargets: the Targets table carries the distance
// rows with their limits, the 50-client ratio to the floor and the
// single-caller p50 against the figure before group commit.
func TestSummaryHoldsTheIssuesTargets(t *testing.T) {
	run := distanceRunOf(110, 60, 1500)
	run.Scale = scaleRunOf(1000, 850, 20, 22).Scale
	run.Seq = &loadResult{Latency: latencies{Calls: 100, P50MS: 3.0}}
	r := &report{Config: map[string]any{"distance_calls": 20, "callers": 8, "concurrent_calls": 100, "http_calls": 10,
		"scale_calls": 100, "scale_http_args": "serve"}, Runs: []runResult{run},
		Machine: machine{LoadBefore: "1.50 1.00 0.50", LoadAfter: "2.25 1.10 0.60"}}
	md := r.markdown()
	for _, want := range []string{
		"1-minute load average: 1.50 at the start, 2.25 at the end",
		"| StoreLink 50 ms away, 1 store, master data cold: ≤ 2.3 round trips | 2.20 round trips, 0.96x the limit | yes |",
		"| StoreLink 50 ms away, sweep, all 180, master data cold: < 2 s | 1500 ms, 0.75x the limit | yes |",
		"| StoreLink 50 ms away, sweep, all 180, master data warm: < 1 s | not available: INVALID_ARGUMENT: no sweep here | n/a |",
		"| 50 HTTP clients, trivial call: at least 0.8x the bare go-sdk floor's calls/s (same run) | 0.85x | yes |",
		fmt.Sprintf("single caller: p50 no worse than before group commit (issue 35): %.2f ms", seqP50Before),
		"| 3.00 ms (0.90x) | yes |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

func TestLoad1(t *testing.T) {
	if got := load1("0.52 0.58 0.59"); got != "0.52" {
		t.Errorf("load1 = %q", got)
	}
	if got := load1(""); got != "unknown" {
		t.Errorf("load1 of nothing = %q", got)
	}
}
