package upstream

import (
	"context"
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
)

// Operation ids, as the contract names them.
const (
	opStore     = "getStore"
	opInventory = "getInventory"
	opPOS       = "listPOSTransactions"
	opSKU       = "getSKU"
	opSupplier  = "getSupplier"
)

// standIn is a loopback StoreLink for the cache tests. It keeps StoreLink's
// key rules (unknown key 401, another store's path 403) and counts requests
// by operation and key's store. A test can add headers, make an operation
// fail, answer with another store's id, and hold master-data requests.
type standIn struct {
	srv *httptest.Server

	mu      sync.Mutex
	keys    map[string]string // store id -> its key at StoreLink
	counts  map[string]int    // operation -> requests
	byKey   map[string]int    // operation + " " + store of the key -> requests
	headers map[string]string // operation -> Cache-Control to send
	age     string            // Age to send with every answer
	fail    map[string]int    // operation -> status to answer with
	broken  map[string]bool   // operation -> answer a body that breaks the contract
	otherID map[string]string // operation -> the id to answer with instead of the one asked
	gate    chan struct{}     // when set, master-data requests wait for it to close
	arrived chan string       // receives the operation of each held request
}

func newStandIn(t *testing.T, keys map[string]string) *standIn {
	t.Helper()
	s := &standIn{keys: keys, counts: map[string]int{}, byKey: map[string]int{}, headers: map[string]string{},
		fail: map[string]int{}, broken: map[string]bool{}, otherID: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.srv.Close)
	return s
}

func (s *standIn) serve(w http.ResponseWriter, r *http.Request) {
	parts := strings.Split(strings.TrimPrefix(r.URL.Path, "/v1/"), "/")
	var op, pathStore, id string
	switch {
	case len(parts) == 2 && parts[0] == "stores":
		op, pathStore, id = opStore, parts[1], parts[1]
	case len(parts) == 3 && parts[0] == "stores" && parts[2] == "inventory":
		op, pathStore = opInventory, parts[1]
	case len(parts) == 3 && parts[0] == "stores" && parts[2] == "pos":
		op, pathStore = opPOS, parts[1]
	case len(parts) == 2 && parts[0] == "skus":
		op, id = opSKU, parts[1]
	case len(parts) == 2 && parts[0] == "suppliers":
		op, id = opSupplier, parts[1]
	default:
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	keyStore := ""
	for store, k := range s.keys {
		if k == r.Header.Get("X-Korral-Store-Key") {
			keyStore = store
		}
	}
	s.counts[op]++
	s.byKey[op+" "+keyStore]++
	cacheControl, age, status, broken, otherID, gate, arrived := s.headers[op], s.age, s.fail[op], s.broken[op], s.otherID[op], s.gate, s.arrived
	s.mu.Unlock()

	if gate != nil && (op == opStore || op == opSKU || op == opSupplier) {
		arrived <- op
		<-gate
	}
	w.Header().Set("Content-Type", "application/json")
	if cacheControl != "" {
		w.Header().Set("Cache-Control", cacheControl)
	}
	if age != "" {
		w.Header().Set("Age", age)
	}
	switch {
	case keyStore == "":
		w.WriteHeader(401)
		_, _ = io.WriteString(w, errorBody("invalid_key"))
		return
	case pathStore != "" && pathStore != keyStore:
		w.WriteHeader(403)
		_, _ = io.WriteString(w, errorBody("store_forbidden"))
		return
	case status != 0:
		w.WriteHeader(status)
		_, _ = io.WriteString(w, errorBody("not_found"))
		return
	case broken:
		_, _ = io.WriteString(w, `{"store_id":`)
		return
	}
	if otherID != "" {
		id = otherID
	}
	switch op {
	case opStore:
		day := `{"closed":false,"opens":"07:00","closes":"22:00"}`
		_, _ = fmt.Fprintf(w, `{"store_id":%q,"name":"Store %s","timezone":"Europe/Prague","opening_hours":{"monday":%s,"tuesday":%s,"wednesday":%s,"thursday":%s,"friday":%s,"saturday":%s,"sunday":{"closed":true}}}`,
			id, id, day, day, day, day, day, day)
	case opSKU:
		_, _ = fmt.Fprintf(w, `{"sku":%q,"name":"Product %s","category":"dairy","supplier_id":"SUP-%s","unit":"piece","case_pack":12,"chilled":true}`, id, id, id)
	case opSupplier:
		_, _ = fmt.Fprintf(w, `{"supplier_id":%q,"name":"Supplier %s","lead_time_days":2}`, id, id)
	case opInventory:
		_, _ = fmt.Fprintf(w, `{"store_id":%q,"sku":"1","on_hand_units":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, pathStore)
	case opPOS:
		q := r.URL.Query()
		_, _ = fmt.Fprintf(w, `{"store_id":%q,"sku":%q,"since":%q,"transactions":[],"total_count":0}`, pathStore, q.Get("sku"), q.Get("since"))
	}
}

// count is an operation's requests; with a store, only those with its key.
func (s *standIn) count(op string, keyOf ...string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(keyOf) == 1 {
		return s.byKey[op+" "+keyOf[0]]
	}
	return s.counts[op]
}

func (s *standIn) set(f func(s *standIn)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f(s)
}

// cachedClient is a client of the stand-in whose cache runs on clock.
func cachedClient(t *testing.T, s *standIn, keys Keys, clock *mcptest.Clock, mutate func(*Options)) *Client {
	t.Helper()
	c, _ := newClient(t, s.srv.URL, keys, func(o *Options) {
		o.Now = clock.Now
		if mutate != nil {
			mutate(o)
		}
	})
	return c
}

func newClock() *mcptest.Clock {
	return mcptest.NewClock(time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC))
}

// riskReads are the reads of one risk check, as fetchRiskFacts makes them.
func riskReads(t *testing.T, c *Client, store, sku string) (domain.Store, domain.SKU, domain.Supplier) {
	t.Helper()
	ctx := context.Background()
	st, err := c.Store(ctx, store)
	if err != nil {
		t.Fatalf("store %s: %v", store, err)
	}
	if _, err := c.Inventory(ctx, store, sku); err != nil {
		t.Fatalf("inventory: %v", err)
	}
	if _, err := c.Sales(ctx, store, sku, time.Now().Add(-24*time.Hour), 100); err != nil {
		t.Fatalf("sales: %v", err)
	}
	k, err := c.SKU(ctx, store, sku)
	if err != nil {
		t.Fatalf("sku: %v", err)
	}
	sup, err := c.Supplier(ctx, store, k.SupplierID)
	if err != nil {
		t.Fatalf("supplier: %v", err)
	}
	return st, k, sup
}

// wantCounts compares the stand-in's counts by operation.
func wantCounts(t *testing.T, s *standIn, when string, want map[string]int) {
	t.Helper()
	for op, n := range want {
		if got := s.count(op); got != n {
			t.Errorf("%s: %d %s requests, want %d", when, got, op, n)
		}
	}
}

func TestMasterDataColdWarmAndAfterTheTTL(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47"})
	clock := newClock()
	c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47"}}, clock, nil)

	riskReads(t, c, "47", "1")
	wantCounts(t, s, "cold", map[string]int{opStore: 1, opSKU: 1, opSupplier: 1, opInventory: 1, opPOS: 1})

	// Warm: only stock and sales.
	riskReads(t, c, "47", "1")
	clock.Advance(DefaultMasterDataTTL - time.Second)
	st, k, sup := riskReads(t, c, "47", "1")
	wantCounts(t, s, "warm", map[string]int{opStore: 1, opSKU: 1, opSupplier: 1, opInventory: 3, opPOS: 3})
	if st.ID != "47" || st.Name != "Store 47" || k.Name != "Product 1" || sup.Name != "Supplier SUP-1" {
		t.Fatalf("warm answers: %+v %+v %+v", st, k, sup)
	}

	// At the TTL the entry is stale: asked again.
	clock.Advance(time.Second)
	riskReads(t, c, "47", "1")
	wantCounts(t, s, "after the TTL", map[string]int{opStore: 2, opSKU: 2, opSupplier: 2, opInventory: 4, opPOS: 4})
}

func TestMasterDataTTLIsConfigurableAndErrorsAreNotKept(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47"})
	clock := newClock()
	keys := &fakeKeys{current: map[string]string{"47": "k47"}}
	ctx := context.Background()

	c := cachedClient(t, s, keys, clock, func(o *Options) { o.MasterDataTTL = time.Minute })
	s.set(func(s *standIn) { s.fail[opSKU] = 503 })
	if _, err := c.SKU(ctx, "47", "1"); apperr.CodeOf(err) != apperr.UpstreamUnavailable {
		t.Fatalf("503: %v", err)
	}
	s.set(func(s *standIn) { delete(s.fail, opSKU) })
	for range 3 {
		if _, err := c.SKU(ctx, "47", "1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := s.count(opSKU); n != 2 {
		t.Fatalf("%d requests: an error must not be kept, a success must", n)
	}
	clock.Advance(time.Minute)
	if _, err := c.SKU(ctx, "47", "1"); err != nil || s.count(opSKU) != 3 {
		t.Fatalf("after a one-minute TTL: %v, %d requests", err, s.count(opSKU))
	}

	for name, mutate := range map[string]func(*Options){
		"reuse off":       func(o *Options) { o.MasterDataTTL = -1 },
		"cache bypassed":  func(o *Options) { o.NoCache = true },
		"bypass with TTL": func(o *Options) { o.NoCache = true; o.MasterDataTTL = time.Hour },
	} {
		before := s.count(opSKU)
		c := cachedClient(t, s, keys, clock, mutate)
		for range 3 {
			if _, err := c.SKU(ctx, "47", "1"); err != nil {
				t.Fatal(err)
			}
		}
		if n := s.count(opSKU) - before; n != 3 {
			t.Errorf("%s: %d requests for 3 reads, want 3", name, n)
		}
	}
}

// TestConcurrentMissesShareOneRequest: eight overlapping risk checks of one
// store and SKU on a cold cache send one request per master-data item.
func TestConcurrentMissesShareOneRequest(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47"})
	gate := make(chan struct{})
	s.set(func(s *standIn) { s.gate, s.arrived = gate, make(chan string, 64) })
	c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47"}}, newClock(), nil)

	const checks = 8
	var started, done sync.WaitGroup
	started.Add(checks)
	done.Add(checks)
	errs := make(chan error, 3*checks)
	for range checks {
		go func() {
			defer done.Done()
			ctx := context.Background()
			var inner sync.WaitGroup
			inner.Add(2)
			go func() {
				defer inner.Done()
				if st, err := c.Store(ctx, "47"); err != nil || st.ID != "47" {
					errs <- fmt.Errorf("store: %+v %v", st, err)
				}
			}()
			go func() {
				defer inner.Done()
				k, err := c.SKU(ctx, "47", "1")
				if err == nil {
					_, err = c.Supplier(ctx, "47", k.SupplierID)
				}
				if err != nil {
					errs <- err
				}
			}()
			started.Done()
			inner.Wait()
		}()
	}
	started.Wait()
	// The store and SKU reads have reached StoreLink and are held there.
	for range 2 {
		<-s.arrived
	}
	close(gate)
	done.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	wantCounts(t, s, "8 concurrent cold checks", map[string]int{opStore: 1, opSKU: 1, opSupplier: 1})
}

// TestWaiterThatGivesUpLeavesTheSharedRequest: a waiter whose context ends
// gets its cancellation at once; the request goes on for the others.
func TestWaiterThatGivesUpLeavesTheSharedRequest(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47"})
	gate := make(chan struct{})
	s.set(func(s *standIn) { s.gate, s.arrived = gate, make(chan string, 8) })
	c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47"}}, newClock(), nil)

	first := make(chan error, 1)
	go func() { _, err := c.Store(context.Background(), "47"); first <- err }()
	<-s.arrived
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Store(ctx, "47"); apperr.CodeOf(err) != apperr.UpstreamUnavailable {
		t.Fatalf("a cancelled waiter: %v", err)
	}
	close(gate)
	if err := <-first; err != nil {
		t.Fatalf("the first caller: %v", err)
	}
	if _, err := c.Store(context.Background(), "47"); err != nil || s.count(opStore) != 1 {
		t.Fatalf("after: %v, %d store requests, want 1", err, s.count(opStore))
	}
}

// TestNotFoundAndContractErrorDropTheEntry: once the entry is due, a 404 or
// broken answer reaches the caller and drops the entry.
func TestNotFoundAndContractErrorDropTheEntry(t *testing.T) {
	for _, tc := range []struct {
		name  string
		spoil func(s *standIn)
		want  apperr.Code
	}{
		{"404", func(s *standIn) { s.fail[opSKU] = 404 }, apperr.NotFound},
		{"contract error", func(s *standIn) { s.broken[opSKU] = true }, apperr.UpstreamContractError},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newStandIn(t, map[string]string{"47": "k47"})
			clock := newClock()
			c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47"}}, clock, nil)
			ctx := context.Background()
			if _, err := c.SKU(ctx, "47", "1"); err != nil {
				t.Fatal(err)
			}
			clock.Advance(DefaultMasterDataTTL)
			s.set(tc.spoil)
			for range 2 {
				if k, err := c.SKU(ctx, "47", "1"); apperr.CodeOf(err) != tc.want {
					t.Fatalf("got %+v %v, want %s", k, err, tc.want)
				}
			}
			s.set(func(s *standIn) { s.fail, s.broken = map[string]int{}, map[string]bool{} })
			if _, err := c.SKU(ctx, "47", "1"); err != nil {
				t.Fatal(err)
			}
			if n := s.count(opSKU); n != 4 {
				t.Fatalf("%d requests, want 4: the failures must not be kept", n)
			}
		})
	}
}

// TestStoreDetailsAreOnlyForTheStoreAsked: an answer naming another store,
// SKU or supplier is a contract error, kept nowhere.
func TestStoreDetailsAreOnlyForTheStoreAsked(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47", "102": "k102"})
	c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47", "102": "k102"}}, newClock(), nil)
	ctx := context.Background()
	s.set(func(s *standIn) { s.otherID[opStore] = "102" })
	for range 2 {
		_, err := c.Store(ctx, "47")
		if apperr.CodeOf(err) != apperr.UpstreamContractError || !strings.Contains(err.Error(), "store.store_id") {
			t.Fatalf("47 answered as 102: %v", err)
		}
	}
	s.set(func(s *standIn) { delete(s.otherID, opStore) })
	st, err := c.Store(ctx, "47")
	if err != nil || st.ID != "47" {
		t.Fatalf("47: %+v %v", st, err)
	}
	st, err = c.Store(ctx, "102")
	if err != nil || st.ID != "102" || st.Name != "Store 102" {
		t.Fatalf("102: %+v %v", st, err)
	}
	if n := s.count(opStore); n != 4 {
		t.Fatalf("%d store requests, want 4", n)
	}

	s.set(func(s *standIn) { s.otherID[opSKU], s.otherID[opSupplier] = "2", "SUP-2" })
	if _, err := c.SKU(ctx, "47", "1"); apperr.CodeOf(err) != apperr.UpstreamContractError || !strings.Contains(err.Error(), "sku.sku") {
		t.Fatalf("SKU 1 answered as 2: %v", err)
	}
	if _, err := c.Supplier(ctx, "47", "SUP-1"); apperr.CodeOf(err) != apperr.UpstreamContractError || !strings.Contains(err.Error(), "supplier.supplier_id") {
		t.Fatalf("SUP-1 answered as SUP-2: %v", err)
	}
}

func TestLeastRecentlyUsedIsEvictedAtTheBound(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47"})
	c := cachedClient(t, s, &fakeKeys{current: map[string]string{"47": "k47"}}, newClock(), func(o *Options) { o.MasterDataEntries = 3 })
	ctx := context.Background()
	read := func(kind, id string) {
		t.Helper()
		var err error
		switch kind {
		case "store":
			_, err = c.Store(ctx, id)
		case "sku":
			_, err = c.SKU(ctx, "47", id)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	read("store", "47")
	read("sku", "1")
	read("sku", "2")
	read("store", "47") // now the most recent: "sku 1" is the least
	read("sku", "3")    // one over the bound
	wantCounts(t, s, "filling", map[string]int{opStore: 1, opSKU: 3})
	read("store", "47")
	read("sku", "2")
	read("sku", "3")
	wantCounts(t, s, "kept entries", map[string]int{opStore: 1, opSKU: 3})
	read("sku", "1")
	wantCounts(t, s, "the evicted entry", map[string]int{opStore: 1, opSKU: 4})
}

// TestRotatedKeyStillReadsItsOwnStore: after store 47's key rotates, the
// next read is retried with the new key, and master data kept under the old
// key is read again.
func TestRotatedKeyStillReadsItsOwnStore(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "old", "102": "k102"})
	keys := &fakeKeys{current: map[string]string{"47": "old", "102": "k102"}}
	c := cachedClient(t, s, keys, newClock(), nil)
	riskReads(t, c, "47", "1")
	riskReads(t, c, "102", "1")

	s.set(func(s *standIn) { s.keys["47"] = "new" })
	keys.mu.Lock()
	keys.onDisk = map[string]string{"47": "new", "102": "k102"}
	keys.mu.Unlock()
	st, k, sup := riskReads(t, c, "47", "1")
	if st.ID != "47" || st.Name != "Store 47" || k.Code != "1" || sup.ID != "SUP-1" {
		t.Fatalf("after the rotation: %+v %+v %+v", st, k, sup)
	}
	st, _, _ = riskReads(t, c, "47", "1")
	if st.ID != "47" {
		t.Fatalf("47 read as %+v", st)
	}
	for _, op := range []string{opStore, opSKU, opSupplier} {
		if n := s.count(op, "47"); n != 2 {
			t.Errorf("%s with 47's keys: %d requests, want 2 (old key, then new)", op, n)
		}
	}
	if n := s.count(opStore); n != 3 {
		t.Errorf("%d store requests, want 3: store 102 kept its entry", n)
	}
}

// TestOneStoresKeyNeverReadsAnothersMasterData: chain-wide records are kept
// per store, and a store removed from the keyring is refused although its
// data is still kept.
func TestOneStoresKeyNeverReadsAnothersMasterData(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47", "102": "k102"})
	keys := &fakeKeys{current: map[string]string{"47": "k47", "102": "k102"}}
	c := cachedClient(t, s, keys, newClock(), nil)
	ctx := context.Background()
	riskReads(t, c, "47", "1")
	riskReads(t, c, "102", "1")
	riskReads(t, c, "47", "1")
	riskReads(t, c, "102", "1")
	for _, store := range []string{"47", "102"} {
		for _, op := range []string{opStore, opSKU, opSupplier} {
			if n := s.count(op, store); n != 1 {
				t.Errorf("%s with %s's key: %d requests, want 1", op, store, n)
			}
		}
	}

	keys.mu.Lock()
	keys.current = map[string]string{"102": "k102"}
	keys.mu.Unlock()
	before := s.count(opSKU)
	for name, read := range map[string]func() error{
		"store":    func() error { _, err := c.Store(ctx, "47"); return err },
		"sku":      func() error { _, err := c.SKU(ctx, "47", "1"); return err },
		"supplier": func() error { _, err := c.Supplier(ctx, "47", "SUP-1"); return err },
	} {
		if err := read(); apperr.CodeOf(err) != apperr.StoreNotAuthorized {
			t.Errorf("%s of store 47 without its key: %v", name, err)
		}
	}
	if _, err := c.SKU(ctx, "102", "1"); err != nil || s.count(opSKU) != before {
		t.Fatalf("102's own entry: %v, %d requests", err, s.count(opSKU)-before)
	}
}

// TestCachedReadsNeverSend: CachedStore, CachedSKU and CachedSupplier
// answer what Store, SKU and Supplier kept, and report a miss (sending
// nothing) when the cache holds no live copy read with the store's key:
// cold, after the TTL, for another store, or without the store's key.
func TestCachedReadsNeverSend(t *testing.T) {
	s := newStandIn(t, map[string]string{"47": "k47", "102": "k102"})
	clock := newClock()
	keys := &fakeKeys{current: map[string]string{"47": "k47", "102": "k102"}}
	c := cachedClient(t, s, keys, clock, nil)
	ctx := context.Background()
	all := func() (domain.Store, domain.SKU, domain.Supplier, [3]bool) {
		st, okSt := c.CachedStore(ctx, "47")
		k, okK := c.CachedSKU(ctx, "47", "1")
		sup, okSup := c.CachedSupplier(ctx, "47", "SUP-1")
		return st, k, sup, [3]bool{okSt, okK, okSup}
	}
	if _, _, _, ok := all(); ok != [3]bool{} {
		t.Fatalf("cold cache answered %v", ok)
	}
	wantCounts(t, s, "cold look-ups", map[string]int{opStore: 0, opSKU: 0, opSupplier: 0})

	wantSt, wantK, wantSup := riskReads(t, c, "47", "1")
	st, k, sup, ok := all()
	if ok != [3]bool{true, true, true} || st.ID != wantSt.ID || st.Name != wantSt.Name || k.Name != wantK.Name || sup.Name != wantSup.Name {
		t.Fatalf("warm: %v %+v %+v %+v", ok, st, k, sup)
	}
	if _, ok := c.CachedStore(ctx, "102"); ok {
		t.Fatal("store 102 answered from 47's entry")
	}
	if _, ok := c.CachedSKU(ctx, "102", "1"); ok {
		t.Fatal("47's SKU served to store 102")
	}

	keys.mu.Lock()
	keys.current = map[string]string{"102": "k102"}
	keys.mu.Unlock()
	if _, _, _, ok := all(); ok != [3]bool{} {
		t.Fatalf("without 47's key: %v", ok)
	}
	keys.mu.Lock()
	keys.current = map[string]string{"47": "k47", "102": "k102"}
	keys.mu.Unlock()
	clock.Advance(DefaultMasterDataTTL)
	if _, _, _, ok := all(); ok != [3]bool{} {
		t.Fatalf("after the TTL: %v", ok)
	}
	wantCounts(t, s, "after every look-up", map[string]int{opStore: 1, opSKU: 1, opSupplier: 1})

	off := cachedClient(t, s, keys, clock, func(o *Options) { o.NoCache = true })
	if _, err := off.Store(ctx, "47"); err != nil {
		t.Fatal(err)
	}
	if _, ok := off.CachedStore(ctx, "47"); ok {
		t.Fatal("a client without a cache answered from one")
	}
}

// BenchmarkWarmStore is a master-data read answered from the cache.
func BenchmarkWarmStore(b *testing.B) {
	s := &standIn{keys: map[string]string{"47": "k47"}, counts: map[string]int{}, byKey: map[string]int{},
		headers: map[string]string{}, fail: map[string]int{}, broken: map[string]bool{}, otherID: map[string]string{}}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	defer s.srv.Close()
	c, err := New(Options{BaseURL: s.srv.URL, Keys: &fakeKeys{current: map[string]string{"47": "k47"}}})
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.Store(ctx, "47"); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, err := c.Store(ctx, "47"); err != nil {
			b.Fatal(err)
		}
	}
	if n := s.count(opStore); n != 1 {
		b.Fatalf("%d requests, want 1", n)
	}
}
