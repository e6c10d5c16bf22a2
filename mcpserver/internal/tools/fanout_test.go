package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
)

// TestFanOutRunsEachIndexOnceWithinTheLimit: each index runs once, at most
// limit at a time, and fanOut returns after all.
func TestFanOutRunsEachIndexOnceWithinTheLimit(t *testing.T) {
	for _, c := range []struct{ n, limit int }{{0, 4}, {1, 4}, {3, 16}, {50, 4}, {7, 1}, {5, 0}} {
		var mu sync.Mutex
		seen := make([]int, c.n)
		var inFlight, most atomic.Int64
		fanOut(c.n, c.limit, func(i int) {
			now := inFlight.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			runtime.Gosched()
			mu.Lock()
			seen[i]++
			mu.Unlock()
			inFlight.Add(-1)
		})
		for i, k := range seen {
			if k != 1 {
				t.Errorf("n=%d limit=%d: index %d done %d times", c.n, c.limit, i, k)
			}
		}
		if lim := int64(max(c.limit, 1)); most.Load() > lim {
			t.Errorf("n=%d limit=%d: %d at once", c.n, c.limit, most.Load())
		}
		if inFlight.Load() != 0 {
			t.Errorf("n=%d limit=%d: returned with %d still running", c.n, c.limit, inFlight.Load())
		}
	}
}

// gaugeUpstream is the fake StoreLink that counts calls in
// flight. Each call waits until want are in flight (or two seconds), so
// the count shows whether a tool starts all stores at once.
type gaugeUpstream struct {
	*fakeUpstream
	want     int
	mu       sync.Mutex
	inFlight int
	peak     int
	all      chan struct{}
}

func (g *gaugeUpstream) enter() func() {
	g.mu.Lock()
	g.inFlight++
	g.peak = max(g.peak, g.inFlight)
	if g.peak == g.want {
		close(g.all)
	}
	all := g.all
	g.mu.Unlock()
	select {
	case <-all:
	case <-time.After(2 * time.Second):
	}
	return func() { g.mu.Lock(); g.inFlight--; g.mu.Unlock() }
}

// reset starts a new count that waits for want calls.
func (g *gaugeUpstream) reset(want int) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.want, g.peak, g.all = want, 0, make(chan struct{})
}

func (g *gaugeUpstream) Store(ctx context.Context, id string) (domain.Store, error) {
	defer g.enter()()
	return g.fakeUpstream.Store(ctx, id)
}

func (g *gaugeUpstream) Inventory(ctx context.Context, id, sku string) (domain.Inventory, error) {
	defer g.enter()()
	return g.fakeUpstream.Inventory(ctx, id, sku)
}

// TestFanOutStartsEveryStoreAtOnce: tools do not pace stores themselves;
// the StoreLink budget (internal/upstream) does.
func TestFanOutStartsEveryStoreAtOnce(t *testing.T) {
	f := newFake()
	keys := map[string]string{}
	for i := 1; i <= 180; i++ {
		id := fmt.Sprint(1000 + i)
		keys[id] = "k" + id
		f.stores[id] = pragueStore(id, "Store "+id)
	}
	kb, _ := json.Marshal(keys)
	g := &gaugeUpstream{fakeUpstream: f}
	s := connect(t, g, mustKeyring(t, string(kb)), nil)
	g.reset(min(180, storesPerAnswer))
	env, _ := callTool(t, s, "korral_list_authorized_stores", map[string]any{})
	listed := len(env["data"].(map[string]any)["stores"].([]any))
	if listed != min(180, storesPerAnswer) {
		t.Fatalf("%d stores listed, want %d", listed, min(180, storesPerAnswer))
	}
	if g.peak != listed {
		t.Fatalf("list: %d store reads in flight at once, want all %d", g.peak, listed)
	}
	ids := make([]string, maxRiskStores)
	for i := range ids {
		ids[i] = fmt.Sprint(1001 + i)
	}
	// Store and Inventory pass the gauge, one each per store.
	g.reset(2 * maxRiskStores)
	env, _ = callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": ids})
	for _, st := range env["data"].(map[string]any)["stores"].([]any) {
		if st.(map[string]any)["risk"] == nil {
			t.Fatalf("store not checked: %v", st)
		}
	}
	if g.peak != 2*maxRiskStores {
		t.Fatalf("risk: %d gauged reads in flight at once, want all %d", g.peak, 2*maxRiskStores)
	}
}

// masterCounter counts SKU and supplier reads.
type masterCounter struct {
	*fakeUpstream
	skus, suppliers atomic.Int64
	// failFirst fails the first SKU read, as for a refused key.
	failFirst bool
}

func (m *masterCounter) SKU(ctx context.Context, id, sku string) (domain.SKU, error) {
	if m.skus.Add(1) == 1 && m.failFirst {
		return domain.SKU{}, apperr.New(apperr.AuthKeyInvalid, "refused", "")
	}
	return m.fakeUpstream.SKU(ctx, id, sku)
}

func (m *masterCounter) Supplier(ctx context.Context, id, supplier string) (domain.Supplier, error) {
	m.suppliers.Add(1)
	return m.fakeUpstream.Supplier(ctx, id, supplier)
}

// TestRiskCheckReadsMasterDataOncePerCall: a 20-store check reads SKU and
// supplier once, even with an unauthorized store among them.
func TestRiskCheckReadsMasterDataOncePerCall(t *testing.T) {
	f := newFake()
	keys := map[string]string{}
	ids := make([]string, maxRiskStores)
	for i := range ids {
		id := fmt.Sprint(1001 + i)
		ids[i] = id
		keys[id] = "k" + id
		f.stores[id] = pragueStore(id, "Store "+id)
	}
	kb, _ := json.Marshal(keys)
	m := &masterCounter{fakeUpstream: f}
	s := connect(t, m, mustKeyring(t, string(kb)), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": ids})
	for _, st := range env["data"].(map[string]any)["stores"].([]any) {
		if st.(map[string]any)["risk"] == nil {
			t.Fatalf("store not checked: %v", st)
		}
	}
	if n, k := m.skus.Load(), m.suppliers.Load(); n != 1 || k != 1 {
		t.Fatalf("%d stores: %d SKU and %d supplier reads, want 1 and 1", len(ids), n, k)
	}

	// If the shared read fails, each store reads its own.
	m.skus.Store(0)
	m.failFirst = true
	env, _ = callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": ids})
	for _, st := range env["data"].(map[string]any)["stores"].([]any) {
		if st.(map[string]any)["risk"] == nil {
			t.Fatalf("store not checked after the shared read failed: %v", st)
		}
	}
	if n := m.skus.Load(); n != 1+int64(len(ids)) {
		t.Fatalf("after a failed shared read: %d SKU reads, want %d", n, 1+len(ids))
	}
}
