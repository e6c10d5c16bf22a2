package e2e_test

import (
	"fmt"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// TestRiskCheckComparesStoresInOneCall: stores compared in one call; a store
// without a key is STORE_NOT_AUTHORIZED and is not asked.
func TestRiskCheckComparesStoresInOneCall(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	env := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"47", "55", "102"}})
	stores := data(t, env)["stores"].([]any)
	if len(stores) != 3 {
		t.Fatalf("%d store entries, want 3", len(stores))
	}
	for i, want := range map[int]float64{0: 17, 2: 6} {
		r := storeRisk(t, env, i)
		if gap := num(r["units_sold_last_24h"]) - num(r["on_hand_units"]); gap != want {
			t.Errorf("entry %d: gap %v, want %v", i, gap, want)
		}
	}
	if c := e2etest.Code(stores[1].(map[string]any)); c != "STORE_NOT_AUTHORIZED" {
		t.Fatalf("store 55: %v", stores[1])
	}
	if n := w.Requests(func(r mockstorelink.RequestRecord) bool { return r.StoreID == "55" }); n != 0 {
		t.Fatalf("%d requests for store 55, which holds no key", n)
	}
}

// TestStoreListFanOutIsBounded: with 180 stores, listing or checking 20 never
// exceeds UPSTREAM_MAX_IN_FLIGHT open requests (ADR 0024), counted by a
// delaying proxy.
func TestStoreListFanOutIsBounded(t *testing.T) {
	const maxInFlight = 12
	w := e2etest.NewWorld(t)
	proxy := &flightProxy{next: w.Mock.Server, delay: 5 * time.Millisecond}
	srv := httptest.NewServer(proxy)
	defer srv.Close()
	keys := map[string]string{}
	for id, k := range w.Mock.Server.DefaultKeyring() {
		keys[id] = k
	}
	for i := 0; len(keys) < 180; i++ {
		keys[fmt.Sprint(5000+i)] = fmt.Sprintf("key-%d-not-issued", i)
	}
	w.WriteKeyring(t, keys)
	env := w.Env()
	env[0] = "UPSTREAM_BASE_URL=" + srv.URL
	env = append(env, fmt.Sprintf("UPSTREAM_MAX_IN_FLIGHT=%d", maxInFlight))
	p := e2etest.StartServer(t, env)
	list := p.Call("korral_list_authorized_stores", map[string]any{})
	stores := data(t, list)["stores"].([]any)
	starts, _ := proxy.take()
	if len(stores) != 180 || len(starts) < 180 {
		t.Fatalf("%d stores listed after %d requests, want 180", len(stores), len(starts))
	}
	if listPeak := peakOf(starts); listPeak > maxInFlight || listPeak < 2 {
		t.Fatalf("list: %d requests in flight at once, want 2..%d", listPeak, maxInFlight)
	}
	ids := []any{"47", "102"}
	for i := 0; len(ids) < 20; i++ {
		ids = append(ids, fmt.Sprint(5000+i))
	}
	risk := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": ids})
	if n := len(data(t, risk)["stores"].([]any)); n != 20 {
		t.Fatalf("%d store entries, want 20", n)
	}
	storeRisk(t, risk, 0)
	starts, _ = proxy.take()
	if peak := peakOf(starts); peak > maxInFlight || peak < 2 || len(starts) < 20 {
		t.Fatalf("risk: %d requests in flight at once (of %d), want 2..%d", peak, len(starts), maxInFlight)
	}
}
