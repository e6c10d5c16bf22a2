package mockstorelink

import (
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"testing"
	"time"
)

// TestLargeWorldLookups pins the edges and spellings of generated ids.
func TestLargeWorldLookups(t *testing.T) {
	w := newSizedWorld(DefaultSeed, 180, 18000)
	for id, want := range map[string]bool{
		"1007": true, "1180": true, "1181": false, "1006": false, "01180": false, "1000": false, "47": true, "48": false,
	} {
		if _, ok := w.store(id); ok != want {
			t.Errorf("store %q exists = %v, want %v", id, ok, want)
		}
	}
	for code, want := range map[string]bool{
		"9000013": true, "9018000": true, "9018001": false, "9000012": false, "09018000": false, SKUButter: true, SKUUnknown: false,
	} {
		if _, ok := w.sku(code); ok != want {
			t.Errorf("sku %q exists = %v, want %v", code, ok, want)
		}
	}
	if w.nSuppliers != 180 {
		t.Errorf("%d generated suppliers, want 180 (17,988 generated SKUs, one supplier per 100)", w.nSuppliers)
	}
	for id, want := range map[string]bool{
		"SUP-G0001": true, "SUP-G0180": true, "SUP-G0181": false, "SUP-G0000": false, "SUP-G180": false, "SUP-G+180": false, SupplierMadeta: true,
	} {
		if _, ok := w.supplier(id); ok != want {
			t.Errorf("supplier %q exists = %v, want %v", id, ok, want)
		}
	}
	small := newSizedWorld(DefaultSeed, 0, 0)
	if _, ok := small.store("1007"); ok || small.large() {
		t.Error("the fixture world has a generated store")
	}
	if _, ok := small.sku("9000013"); ok {
		t.Error("the fixture world has a generated SKU")
	}
}

// TestLargeWorldFactsInRange walks every generated store and SKU of the
// largest world: the facts are inside the contract's ranges and every SKU's
// supplier exists.
func TestLargeWorldFactsInRange(t *testing.T) {
	w := newSizedWorld(DefaultSeed, MaxStores, MaxSKUs)
	for i := FixtureStores + 1; i <= MaxStores; i++ {
		st, ok := w.store(StoreIDAt(i))
		if !ok || st.name == "" || len(st.name) > 200 || st.loc == nil {
			t.Fatalf("store %d: %+v", i, st)
		}
		for d, h := range st.week {
			if !h.closed && (h.open >= h.close || h.open < 0 || h.close > 23*60+59) {
				t.Errorf("store %s weekday %d: %+v", st.id, d, h)
			}
		}
	}
	for i := FixtureSKUs + 1; i <= MaxSKUs; i++ {
		k, ok := w.sku(SKUAt(i))
		if !ok || k.name == "" || len(k.name) > 200 || k.casePack < 1 || k.casePack > 1000 ||
			k.shelfLifeDays < 0 || k.shelfLifeDays > 3650 || k.usual < 1 {
			t.Fatalf("sku %d: %+v", i, k)
		}
		sup, ok := w.supplier(k.supplier)
		if !ok {
			t.Fatalf("sku %s names supplier %s, which does not exist", k.code, k.supplier)
		}
		if sup.leadTimeDays < 0 || sup.leadTimeDays > 60 {
			t.Fatalf("supplier %+v", sup)
		}
	}
}

// TestLargeWorldStaysLazy: random reads of a large world store nothing
// generated, keep the cache in bounds and grow the heap boundedly.
func TestLargeWorldStaysLazy(t *testing.T) {
	s, err := New(Options{Now: DefaultNow, Stores: 180, SKUs: 18000})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keys := s.Keys()
	since := url.QueryEscape(DefaultNow().Add(-14 * 24 * time.Hour).Format(time.RFC3339))
	r := rand.New(rand.NewPCG(35, 4))
	for i := 0; i < 2000; i++ {
		store, sku := StoreIDAt(1+r.IntN(180)), SKUAt(1+r.IntN(18000))
		paths := []string{
			"/v1/stores/" + store,
			"/v1/stores/" + store + "/inventory?sku=" + sku,
			"/v1/stores/" + store + "/pos?sku=" + sku + "&since=" + since + "&limit=1000",
			"/v1/skus/" + sku,
		}
		req := httptest.NewRequest(http.MethodGet, paths[i%len(paths)], nil)
		req.Header.Set(StoreKeyHeader, keys[store])
		rec := httptest.NewRecorder()
		s.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			t.Fatalf("GET %s: %d %s", req.URL, rec.Code, rec.Body)
		}
	}
	w := s.world
	if len(w.stores) != FixtureStores || len(w.skus) != FixtureSKUs || len(w.suppliers) != 7 {
		t.Errorf("the world stored generated entries: %d stores, %d SKUs, %d suppliers", len(w.stores), len(w.skus), len(w.suppliers))
	}
	s.ResetRequests()
	runtime.GC()
	runtime.ReadMemStats(&after)
	growth := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	// The server must stay alive until after the measure, or the GC
	// frees it and the growth reads as nothing.
	t.Logf("heap after 2,000 random reads: %.1f MiB (%+.1f MiB since New); history cache: %d histories, %d transactions",
		float64(after.HeapAlloc)/(1<<20), float64(growth)/(1<<20), len(s.handler.historyCache), s.handler.historyTxns)
	if growth > 64<<20 {
		t.Errorf("the heap grew by %d MiB", growth>>20)
	}
}

// TestHistoryCacheBound: histories of a busy SKU at many stores do not pile
// up: the cache starts over before it holds historyCacheTxns transactions.
func TestHistoryCacheBound(t *testing.T) {
	w := newSizedWorld(DefaultSeed, 180, 18000)
	h := &server{world: w, now: DefaultNow}
	busy, _ := w.sku(SKUAt(busyEvery))
	anchor := DefaultNow().Truncate(time.Minute)
	most := 0
	for i := 1; i <= 40; i++ {
		st, _ := w.store(StoreIDAt(i))
		if n := len(h.history(st, busy, anchor)); i > FixtureStores && n < 5000 {
			t.Fatalf("busy SKU at store %s: %d transactions in 28 days, want thousands", st.id, n)
		}
		most = max(most, h.historyTxns)
		if h.historyTxns > historyCacheTxns {
			t.Fatalf("the cache holds %d transactions, over its bound %d", h.historyTxns, historyCacheTxns)
		}
	}
	t.Logf("the cache held at most %d transactions", most)
}
