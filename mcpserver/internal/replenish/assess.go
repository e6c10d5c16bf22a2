package replenish

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
)

// riskSalesCap bounds the transactions read for one projection.
const riskSalesCap = 50000

// RequestsPerAssessment is how many upstream requests one Assess keeps open
// at once, for a caller that assesses several stores in parallel.
const RequestsPerAssessment = 4

// historyStart is the oldest instant StoreLink's point-of-sale history
// covers at now. Its length is projection.MaxLookbackDays, which the risk
// tool holds equal to the contract's figure (storelinkclient.HistoryDays)
// at compile time.
func historyStart(now time.Time) time.Time {
	return now.Add(-projection.MaxLookbackDays * 24 * time.Hour)
}

// Identity names what was checked, so nobody has to vet a bare SKU code.
// Its texts are StoreLink's, as typed there: a caller that shows them marks
// them as untrusted.
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

// Assessment is one store's stock-risk projection with what it was
// computed for.
type Assessment struct {
	Identity Identity
	Risk     projection.Result
	// UnitsSoldLast24h is the units sold in the 24 hours before the
	// projection's now, the buyer's usual yardstick.
	UnitsSoldLast24h int64
	// Unknown lists the qualifiers StoreLink left out or sent unreadable
	// in the reads behind this assessment (ADR 0030); the projection made
	// no claim that needs them.
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

// fetchRiskFacts fans the upstream calls out: store, inventory, sales and the
// SKU (then its supplier) run at once, so the answer costs the slowest call,
// not the sum. The first error wins, naming every read's broken fields
// (apperr.JoinBroken); all calls share the caller's context.
func (w *Workflow) fetchRiskFacts(ctx context.Context, shared *SharedMaster, storeID, sku string, since time.Time) (riskFacts, error) {
	var f riskFacts
	var wg sync.WaitGroup
	errs := make([]error, RequestsPerAssessment)
	wg.Add(RequestsPerAssessment)
	go func() { defer wg.Done(); f.store, errs[0] = w.Upstream.Store(ctx, storeID) }()
	go func() { defer wg.Done(); f.inv, errs[1] = w.Upstream.Inventory(ctx, storeID, sku) }()
	go func() {
		defer wg.Done()
		f.sales, errs[2] = w.Upstream.Sales(ctx, storeID, sku, since, riskSalesCap)
	}()
	go func() {
		defer wg.Done()
		if shared != nil {
			if f.sku, f.supplier, errs[3] = shared.read(ctx, w, storeID, sku); errs[3] == nil {
				return
			}
			// The store that read it for the others failed: this store
			// reads its own, so that one store's key or fault is not
			// every store's answer.
		}
		f.sku, errs[3] = w.Upstream.SKU(ctx, storeID, sku)
		if errs[3] == nil {
			f.supplier, errs[3] = w.Upstream.Supplier(ctx, storeID, f.sku.SupplierID)
		}
	}()
	wg.Wait()
	// The first error decides, as it always has; a contract error names
	// the broken fields of every read, not only its own (ADR 0030).
	if err := apperr.JoinBroken(errs...); err != nil {
		return riskFacts{}, err
	}
	return f, nil
}

// Assess fetches the facts and runs the stock-risk projection of sku at
// storeID over lookbackDays of sales; the preview reuses it for its
// justification snapshot.
func (w *Workflow) Assess(ctx context.Context, storeID, sku string, lookbackDays int) (*Assessment, error) {
	return w.AssessShared(ctx, nil, storeID, sku, lookbackDays)
}

// SharedMaster is the SKU and supplier master data of one call that
// assesses one SKU at several stores: they are read once, with the key of
// the store the call names as reader, and the stores of the call take that answer
// instead of sending the same two requests each. Stock, sales and the
// store itself are still read per store, with each store's key, so a store
// whose key StoreLink refuses still fails. Make one per call (NewSharedMaster).
type SharedMaster struct {
	reader   string
	once     sync.Once
	sku      domain.SKU
	supplier domain.Supplier
	err      error
}

// NewSharedMaster returns an empty SharedMaster for one call whose SKU and
// supplier are read with reader's key: always the same store of the call
// (its first), so that the same call repeated while master data is warm
// finds them in that store's cache (entries are per store, ADR 0013)
// instead of reading them again for whichever store came first. An empty
// reader reads with the key of the first store that asks.
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

// AssessShared is Assess for one of several stores of a call, sharing the
// call's SKU and supplier reads through shared (nil: read its own).
func (w *Workflow) AssessShared(ctx context.Context, shared *SharedMaster, storeID, sku string, lookbackDays int) (*Assessment, error) {
	now := w.now()
	historyStart := historyStart(now)
	// One extra day covers the partial day before the first complete one;
	// nothing older than StoreLink's history exists to ask for.
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
		// SKU listed since then (those days are no evidence) from one that
		// stopped selling (they are). A truncated page is refused below.
		from = historyStart
	}
	if from = later(from, historyStart); from.Before(since) {
		if f.sales, err = w.Upstream.Sales(ctx, storeID, sku, from, riskSalesCap); err != nil {
			return nil, err
		}
	}
	if f.sales.Truncated {
		// A partial history would read as zero-sale days and skew the band;
		// refuse rather than guess.
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

// later is the later of two instants.
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
