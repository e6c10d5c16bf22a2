package replenish

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
)

// barrier lets its reads return only once all of them have started: reads
// that are not in flight together never pass it.
type barrier struct {
	mu      sync.Mutex
	waiting map[string]bool
	all     chan struct{}
}

func newBarrier(reads ...string) *barrier {
	b := &barrier{waiting: map[string]bool{}, all: make(chan struct{})}
	for _, r := range reads {
		b.waiting[r] = true
	}
	return b
}

// pass waits for the other reads of b; reads outside b pass at once. The
// time-out only turns a deadlock into an error.
func (b *barrier) pass(read string) error {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	if !b.waiting[read] {
		b.mu.Unlock()
		return nil
	}
	delete(b.waiting, read)
	if len(b.waiting) == 0 {
		close(b.all)
	}
	b.mu.Unlock()
	select {
	case <-b.all:
		return nil
	case <-time.After(5 * time.Second):
		return fmt.Errorf("%s was never in flight together with the other reads of its round", read)
	}
}

// roundsStoreLink is fakeStoreLink whose reads wait at the barrier of
// their round trip.
type roundsStoreLink struct {
	fakeStoreLink
	first, second *barrier
}

func (r *roundsStoreLink) wait(read string) error {
	if err := r.first.pass(read); err != nil {
		return err
	}
	return r.second.pass(read)
}

func (r *roundsStoreLink) Store(ctx context.Context, id string) (domain.Store, error) {
	if err := r.wait("store"); err != nil {
		return domain.Store{}, err
	}
	return r.fakeStoreLink.Store(ctx, id)
}

func (r *roundsStoreLink) Inventory(ctx context.Context, id, sku string) (domain.Inventory, error) {
	if err := r.wait("inventory"); err != nil {
		return domain.Inventory{}, err
	}
	return r.fakeStoreLink.Inventory(ctx, id, sku)
}

func (r *roundsStoreLink) Sales(ctx context.Context, id, sku string, since time.Time, most int) (domain.SalesPage, error) {
	if err := r.wait("sales"); err != nil {
		return domain.SalesPage{}, err
	}
	return r.fakeStoreLink.Sales(ctx, id, sku, since, most)
}

func (r *roundsStoreLink) SKU(ctx context.Context, id, code string) (domain.SKU, error) {
	if err := r.wait("sku"); err != nil {
		return domain.SKU{}, err
	}
	return r.fakeStoreLink.SKU(ctx, id, code)
}

func (r *roundsStoreLink) Supplier(ctx context.Context, id, supplierID string) (domain.Supplier, error) {
	if err := r.wait("supplier"); err != nil {
		return domain.Supplier{}, err
	}
	return r.fakeStoreLink.Supplier(ctx, id, supplierID)
}

// The reads of one store's risk check cost two round trips when nothing is
// cached (the supplier needs the SKU), and one when the master data is,
// also when only the store's entry has expired: each read of a round is in
// flight with the others, however fetchRiskFacts runs them.
func TestRiskReadsOverlapInRoundTrips(t *testing.T) {
	for _, tc := range []struct {
		name          string
		first, second []string
	}{
		// Nothing cached: every read but the supplier's, then the supplier.
		{"cold", []string{"store", "inventory", "sku", "sales"}, nil},
		// The store, SKU and supplier from the cache: the stock and the
		// sales together.
		{"warm", []string{"inventory", "sales"}, nil},
		// The store's cache entry has expired: the store beside them.
		{"store expired", []string{"store", "inventory", "sales"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := &roundsStoreLink{first: newBarrier(tc.first...)}
			if tc.second != nil {
				up.second = newBarrier(tc.second...)
			}
			w := &Workflow{Upstream: up, Now: func() time.Time { return t0 }}
			for _, shared := range []*SharedMaster{nil, NewSharedMaster("")} {
				if shared != nil {
					// Fresh barriers for the second pass.
					up.first = newBarrier(tc.first...)
					if tc.second != nil {
						up.second = newBarrier(tc.second...)
					}
				}
				if _, err := w.fetchRiskFacts(context.Background(), shared, "47", "8847291", t0.Add(-15*24*time.Hour)); err != nil {
					t.Errorf("shared master %v: %v", shared != nil, err)
				}
			}
		})
	}
}

// cachingStoreLink is fakeStoreLink with a master-data cache (MasterCache)
// holding the store, SKU and supplier named in has; it counts the reads
// that reach StoreLink.
type cachingStoreLink struct {
	fakeStoreLink
	has   map[string]bool
	mu    sync.Mutex
	reads map[string]int
}

func (c *cachingStoreLink) count(read string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.reads[read]++
}

func (c *cachingStoreLink) Store(ctx context.Context, id string) (domain.Store, error) {
	c.count("store")
	return c.fakeStoreLink.Store(ctx, id)
}

func (c *cachingStoreLink) SKU(ctx context.Context, id, code string) (domain.SKU, error) {
	c.count("sku")
	return c.fakeStoreLink.SKU(ctx, id, code)
}

func (c *cachingStoreLink) Supplier(ctx context.Context, id, supplierID string) (domain.Supplier, error) {
	c.count("supplier")
	return c.fakeStoreLink.Supplier(ctx, id, supplierID)
}

func (c *cachingStoreLink) CachedStore(ctx context.Context, id string) (domain.Store, bool) {
	if !c.has["store"] {
		return domain.Store{}, false
	}
	st, _ := c.fakeStoreLink.Store(ctx, id)
	return st, true
}

func (c *cachingStoreLink) CachedSKU(ctx context.Context, id, code string) (domain.SKU, bool) {
	if !c.has["sku"] {
		return domain.SKU{}, false
	}
	k, _ := c.fakeStoreLink.SKU(ctx, id, code)
	return k, true
}

func (c *cachingStoreLink) CachedSupplier(ctx context.Context, id, supplierID string) (domain.Supplier, bool) {
	if !c.has["supplier"] {
		return domain.Supplier{}, false
	}
	sup, _ := c.fakeStoreLink.Supplier(ctx, id, supplierID)
	return sup, true
}

// TestRiskReadsTakeWhatTheCacheHolds: the store, SKU and supplier the
// StoreLink adapter's cache holds are not read again; whatever it lacks is,
// and the facts are the same either way. A SKU without its supplier in the
// cache reads both, as readMaster does; a shared master read (several
// stores) keeps its one read for every store.
func TestRiskReadsTakeWhatTheCacheHolds(t *testing.T) {
	all := map[string]bool{"store": true, "sku": true, "supplier": true}
	want := func() riskFacts {
		w := &Workflow{Upstream: &fakeStoreLink{}, Now: func() time.Time { return t0 }}
		f, err := w.fetchRiskFacts(context.Background(), nil, "47", "8847291", t0.Add(-15*24*time.Hour))
		if err != nil {
			t.Fatal(err)
		}
		return f
	}()
	for _, tc := range []struct {
		name   string
		has    map[string]bool
		shared bool
		reads  map[string]int
	}{
		{"all cached", all, false, map[string]int{}},
		{"nothing cached", nil, false, map[string]int{"store": 1, "sku": 1, "supplier": 1}},
		{"store only", map[string]bool{"store": true}, false, map[string]int{"sku": 1, "supplier": 1}},
		{"master only", map[string]bool{"sku": true, "supplier": true}, false, map[string]int{"store": 1}},
		{"SKU without its supplier", map[string]bool{"store": true, "sku": true}, false, map[string]int{"sku": 1, "supplier": 1}},
		{"shared master read", all, true, map[string]int{"sku": 1, "supplier": 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			up := &cachingStoreLink{has: tc.has, reads: map[string]int{}}
			w := &Workflow{Upstream: up, Now: func() time.Time { return t0 }}
			var shared *SharedMaster
			if tc.shared {
				shared = NewSharedMaster("")
			}
			got, err := w.fetchRiskFacts(context.Background(), shared, "47", "8847291", t0.Add(-15*24*time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Errorf("facts %+v, want %+v", got, want)
			}
			if fmt.Sprint(up.reads) != fmt.Sprint(tc.reads) {
				t.Errorf("reads %v, want %v", up.reads, tc.reads)
			}
		})
	}
}
