package replenish

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/workers"
)

// riskSalesCap bounds the transactions read for one projection.
const riskSalesCap = 50000

// RequestsPerAssessment is how many upstream requests one Assess keeps open.
const RequestsPerAssessment = 4

// historyStart is the oldest instant StoreLink's sales history covers at
// now (projection.MaxLookbackDays).
func historyStart(now time.Time) time.Time {
	return now.Add(-projection.MaxLookbackDays * 24 * time.Hour)
}

// Identity names what was checked. Its texts come from StoreLink and are
// untrusted.
type Identity struct {
	SKU           string
	ProductName   string
	Category      string
	SupplierName  string
	Chilled       bool
	CasePack      int64
	ShelfLifeDays int64
	StoreID       string
	StoreName     string
}

// Assessment is one store's stock-risk projection and its inputs.
type Assessment struct {
	Identity Identity
	Risk     projection.Result
	// UnitsSoldLast24h is the units sold in the 24 hours before now.
	UnitsSoldLast24h int64
	// Unknown lists qualifiers StoreLink left out or sent unreadable
	// (ADR 0030).
	Unknown domain.Unknown
}

// riskFacts is everything one projection needs, fetched concurrently.
type riskFacts struct {
	store    domain.Store
	inv      domain.Inventory
	sales    domain.SalesPage
	sku      domain.SKU
	supplier domain.Supplier
}

// riskReaders run the reads of fetchRiskFacts that leave the calling
// goroutine, on workers that keep their grown stacks.
var riskReaders = workers.New()

// MasterCache is implemented by an Upstream that keeps master data
// (upstream.Client): each method answers from its cache alone, or reports
// a miss, and never sends a request.
type MasterCache interface {
	CachedStore(ctx context.Context, storeID string) (domain.Store, bool)
	CachedSKU(ctx context.Context, storeID, sku string) (domain.SKU, bool)
	CachedSupplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, bool)
}

// fetchRiskFacts runs the upstream reads concurrently. The first error
// wins, naming every read's broken fields (apperr.JoinBroken).
//
// The store, the stock count and the SKU then its supplier are read on
// workers (package workers), and the sales, the largest answer, on the
// calling goroutine: all four start at once, as with a goroutine each,
// without starting a goroutine or growing its stack per read. The store,
// SKU and supplier the cache holds are taken on the calling goroutine
// first: handing a cache look-up to a worker costs more than the look-up.
func (w *Workflow) fetchRiskFacts(ctx context.Context, shared *SharedMaster, storeID, sku string, since time.Time) (riskFacts, error) {
	// The reads' results and their wait group share one allocation (the
	// closures that fill them outlive this frame as far as escape
	// analysis can tell).
	st := &struct {
		f    riskFacts
		wg   sync.WaitGroup
		errs [RequestsPerAssessment]error
	}{}
	haveStore, haveMaster := false, false
	if mc, ok := w.Upstream.(MasterCache); ok {
		st.f.store, haveStore = mc.CachedStore(ctx, storeID)
		if shared == nil {
			st.f.sku, st.f.supplier, haveMaster = cachedMaster(ctx, mc, storeID, sku)
		}
	}
	if !haveStore {
		st.wg.Add(1)
		riskReaders.Go(func() { defer st.wg.Done(); st.f.store, st.errs[0] = w.Upstream.Store(ctx, storeID) })
	}
	st.wg.Add(1)
	riskReaders.Go(func() { defer st.wg.Done(); st.f.inv, st.errs[1] = w.Upstream.Inventory(ctx, storeID, sku) })
	if !haveMaster {
		st.wg.Add(1)
		riskReaders.Go(func() {
			defer st.wg.Done()
			st.f.sku, st.f.supplier, st.errs[3] = w.readMaster(ctx, shared, storeID, sku)
		})
	}
	st.f.sales, st.errs[2] = w.Upstream.Sales(ctx, storeID, sku, since, riskSalesCap)
	st.wg.Wait()
	// A contract error names the broken fields of every read (ADR 0030).
	if err := apperr.JoinBroken(st.errs[:]...); err != nil {
		return riskFacts{}, err
	}
	return st.f, nil
}

// cachedMaster is the SKU and its supplier when mc holds both.
func cachedMaster(ctx context.Context, mc MasterCache, storeID, sku string) (domain.SKU, domain.Supplier, bool) {
	s, ok := mc.CachedSKU(ctx, storeID, sku)
	if !ok {
		return domain.SKU{}, domain.Supplier{}, false
	}
	sup, ok := mc.CachedSupplier(ctx, storeID, s.SupplierID)
	if !ok {
		return domain.SKU{}, domain.Supplier{}, false
	}
	return s, sup, true
}

// readMaster reads the SKU and its supplier, through shared when set.
func (w *Workflow) readMaster(ctx context.Context, shared *SharedMaster, storeID, sku string) (domain.SKU, domain.Supplier, error) {
	if shared != nil {
		if s, sup, err := shared.read(ctx, w, storeID, sku); err == nil {
			return s, sup, nil
		}
		// The shared read failed: read our own, so one store's fault is
		// not every store's.
	}
	s, err := w.Upstream.SKU(ctx, storeID, sku)
	if err != nil {
		return domain.SKU{}, domain.Supplier{}, err
	}
	sup, err := w.Upstream.Supplier(ctx, storeID, s.SupplierID)
	return s, sup, err
}

// Assess runs the stock-risk projection of sku at storeID over
// lookbackDays of sales.
func (w *Workflow) Assess(ctx context.Context, storeID, sku string, lookbackDays int) (*Assessment, error) {
	return w.AssessShared(ctx, nil, storeID, sku, lookbackDays)
}

// SharedMaster shares one call's SKU and supplier reads among its stores.
// Stock, sales and the store are still read per store with its own key.
// Make one per call (NewSharedMaster).
type SharedMaster struct {
	reader   string
	once     sync.Once
	sku      domain.SKU
	supplier domain.Supplier
	err      error
}

// NewSharedMaster returns a SharedMaster whose reads use reader's key, so
// a repeated call hits that store's cache (ADR 0013). An empty reader uses
// the first store that asks.
func NewSharedMaster(reader string) *SharedMaster { return &SharedMaster{reader: reader} }

func (m *SharedMaster) read(ctx context.Context, w *Workflow, storeID, sku string) (domain.SKU, domain.Supplier, error) {
	m.once.Do(func() {
		reader := m.reader
		if reader == "" {
			reader = storeID
		}
		m.sku, m.err = w.Upstream.SKU(ctx, reader, sku)
		if m.err == nil {
			m.supplier, m.err = w.Upstream.Supplier(ctx, reader, m.sku.SupplierID)
		}
	})
	return m.sku, m.supplier, m.err
}

// AssessShared is Assess sharing master-data reads through shared (nil:
// read its own).
func (w *Workflow) AssessShared(ctx context.Context, shared *SharedMaster, storeID, sku string, lookbackDays int) (*Assessment, error) {
	now := w.now()
	historyStart := historyStart(now)
	// One extra day covers the partial first day.
	since := later(now.Add(-time.Duration(lookbackDays+1)*24*time.Hour), historyStart)
	f, err := w.fetchRiskFacts(ctx, shared, storeID, sku, since)
	if err != nil {
		return nil, err
	}
	from := since
	if !f.inv.CountedAt.IsZero() && f.inv.CountedAt.Before(from) {
		// A stale count: the projection needs every sale since the count.
		from = f.inv.CountedAt
	}
	if first := earliestSale(f.sales); !f.sales.Truncated && (first.IsZero() || first.After(since.Add(24*time.Hour))) {
		// The window opens without a sale: only the whole history tells a
		// newly listed SKU from one that stopped selling.
		from = historyStart
	}
	if from = later(from, historyStart); from.Before(since) {
		if f.sales, err = w.Upstream.Sales(ctx, storeID, sku, from, riskSalesCap); err != nil {
			return nil, err
		}
	}
	if f.sales.Truncated {
		// A partial history would skew the band; refuse.
		return nil, apperr.New(apperr.InvalidArgument,
			fmt.Sprintf("SKU %s sells too often to read %d days of its sales in one call (over %d transactions)", sku, lookbackDays, riskSalesCap),
			"Call again with a shorter lookback_days.")
	}
	loc, err := domain.Location(f.store.Timezone)
	if err != nil {
		return nil, fmt.Errorf("store %s timezone %q: %w", storeID, f.store.Timezone, err)
	}
	in := projection.Input{
		Now: now, Location: loc, OnHand: f.inv.OnHand, CountedAt: f.inv.CountedAt,
		SalesFrom: from, HistoryStart: historyStart,
		LookbackDays: lookbackDays, LeadTimeDays: f.supplier.LeadTimeDays, OrderCutoff: f.supplier.OrderCutoff,
		HoursUnknown: f.store.Unknown.Has("store.opening_hours"),
	}
	if f.supplier.Unknown.Has("supplier.lead_time_days") {
		in.LeadTimeDays = -1
	}
	for wd, d := range f.store.Hours {
		in.Hours[wd] = projection.DayHours{Closed: d.Closed, Opens: d.Opens, Closes: d.Closes}
	}
	in.Sales = make([]projection.Sale, len(f.sales.Items))
	for i, sale := range f.sales.Items {
		in.Sales[i] = projection.Sale{At: sale.At, Units: sale.Units}
	}
	var last24h int64
	for _, sale := range f.sales.Items {
		if !sale.At.Before(now.Add(-24*time.Hour)) && !sale.At.After(now) {
			last24h += sale.Units
		}
	}
	return &Assessment{
		Identity: Identity{
			SKU: sku, ProductName: f.sku.Name, Category: f.sku.Category, SupplierName: f.supplier.Name,
			Chilled: f.sku.Chilled, CasePack: f.sku.CasePack, ShelfLifeDays: f.sku.ShelfLifeDays,
			StoreID: storeID, StoreName: f.store.Name,
		},
		Risk:             projection.Project(in),
		UnitsSoldLast24h: last24h,
		Unknown:          domain.Merge(f.store.Unknown, f.inv.Unknown, f.sales.Unknown, f.sku.Unknown, f.supplier.Unknown),
	}, nil
}

func later(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// earliestSale is the oldest sale on the page; zero when there is none.
func earliestSale(p domain.SalesPage) time.Time {
	var first time.Time
	for _, s := range p.Items {
		if first.IsZero() || s.At.Before(first) {
			first = s.At
		}
	}
	return first
}
