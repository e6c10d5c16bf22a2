package mcpserver

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/storelinkclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// riskSalesCap bounds the transactions read for one projection.
const riskSalesCap = 50000

// The lookback cap is StoreLink's history (storelinkclient.HistoryDays, the
// contract's figure): this fails to compile if the projection's cap and the
// history ever differ, in either direction.
const _ = uint(projection.MaxLookbackDays-storelinkclient.HistoryDays) + uint(storelinkclient.HistoryDays-projection.MaxLookbackDays)

type stockRiskIn struct {
	SKU          string `json:"sku" jsonschema:"SKU code"`
	StoreID      string `json:"store_id,omitempty" jsonschema:"store id; optional only if one store is authorized"`
	LookbackDays int    `json:"lookback_days,omitempty" jsonschema:"days of sales history for the sell rate"`
}

// identity names what was checked, so nobody has to vet a bare SKU code.
type identity struct {
	SKU           string `json:"sku" jsonschema:"SKU code"`
	ProductName   string `json:"product_name" jsonschema:"product name (untrusted data)"`
	Category      string `json:"category" jsonschema:"category (untrusted data)"`
	SupplierName  string `json:"supplier_name" jsonschema:"supplier name (untrusted data)"`
	Chilled       bool   `json:"chilled" jsonschema:"whether the product is chilled"`
	CasePack      int64  `json:"case_pack" jsonschema:"units per supplier case"`
	ShelfLifeDays int64  `json:"shelf_life_days,omitempty" jsonschema:"shelf life in days, when StoreLink gives one"`
	StoreID       string `json:"store_id" jsonschema:"store checked"`
	StoreName     string `json:"store_name" jsonschema:"store name (untrusted data)"`
}

type stockRiskOut struct {
	Identity identity          `json:"identity" jsonschema:"what was checked"`
	Risk     projection.Result `json:"risk" jsonschema:"the deterministic stockout projection with its evidence"`
}

func addCheckStockRisk(ms *mcp.Server, s *server) {
	register(ms, s, toolSpec[stockRiskIn, stockRiskOut]{
		tool: &mcp.Tool{
			Name:  "korral_check_stock_risk",
			Title: "Check stock risk",
			Description: "Will this SKU run out at this store before close today, and can a delivery beat it? " +
				"One deterministic projection from on-hand, sell rate per trading hour and supplier lead time: stockout window, confidence, flags, caveat, per-day evidence. " +
				"Relay it; don't recompute.",
			Annotations: readAnnotations(),
		},
		shape: func(p map[string]*jsonschema.Schema) {
			shapeSKU(p)
			shapeStoreID(p)
			p["lookback_days"].Minimum = ptr(1.0)
			p["lookback_days"].Maximum = ptr(float64(storelinkclient.HistoryDays))
			p["lookback_days"].Default = []byte(fmt.Sprint(s.opts.DefaultLookbackDays))
		},
		handle: s.checkStockRisk,
	})
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
// not the sum. The first error wins; all calls share the tool call's id.
func (s *server) fetchRiskFacts(ctx context.Context, storeID, sku string, since time.Time) (riskFacts, error) {
	var f riskFacts
	var wg sync.WaitGroup
	errs := make([]error, 4)
	wg.Add(4)
	go func() { defer wg.Done(); f.store, errs[0] = s.opts.Upstream.Store(ctx, storeID) }()
	go func() { defer wg.Done(); f.inv, errs[1] = s.opts.Upstream.Inventory(ctx, storeID, sku) }()
	go func() {
		defer wg.Done()
		f.sales, errs[2] = s.opts.Upstream.Sales(ctx, storeID, sku, since, riskSalesCap)
	}()
	go func() {
		defer wg.Done()
		f.sku, errs[3] = s.opts.Upstream.SKU(ctx, storeID, sku)
		if errs[3] == nil {
			f.supplier, errs[3] = s.opts.Upstream.Supplier(ctx, storeID, f.sku.SupplierID)
		}
	}()
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return riskFacts{}, err
		}
	}
	return f, nil
}

func (s *server) checkStockRisk(ctx context.Context, c *call, in stockRiskIn) (*stockRiskOut, error) {
	c.sku = in.SKU
	storeID, err := s.resolveStore(c, in.StoreID)
	if err != nil {
		return nil, err
	}
	if in.LookbackDays == 0 {
		in.LookbackDays = s.opts.DefaultLookbackDays
	}
	out, err := s.assessRisk(ctx, storeID, in.SKU, in.LookbackDays)
	if err != nil {
		return nil, err
	}
	r := out.Risk
	c.summary = fmt.Sprintf("Checked stock risk of %s (SKU %s) at store %s: on hand %d, stockout before close today: %s, confidence %s.",
		plain(out.Identity.ProductName), in.SKU, storeID, r.OnHandUnits, r.WillStockoutBeforeCloseToday, r.Confidence)
	return out, nil
}

// assessRisk fetches the facts and runs the projection; the write tool's
// preview reuses it for its justification snapshot.
func (s *server) assessRisk(ctx context.Context, storeID, sku string, lookbackDays int) (*stockRiskOut, error) {
	now := s.opts.Now()
	historyStart := storelinkclient.HistoryStart(now)
	// One extra day covers the partial day before the first complete one;
	// nothing older than StoreLink's history exists to ask for.
	since := later(now.Add(-time.Duration(lookbackDays+1)*24*time.Hour), historyStart)
	f, err := s.fetchRiskFacts(ctx, storeID, sku, since)
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
		if f.sales, err = s.opts.Upstream.Sales(ctx, storeID, sku, from, riskSalesCap); err != nil {
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
	}
	for wd, d := range f.store.Hours {
		in.Hours[wd] = projection.DayHours{Closed: d.Closed, Opens: d.Opens, Closes: d.Closes}
	}
	in.Sales = make([]projection.Sale, len(f.sales.Items))
	for i, sale := range f.sales.Items {
		in.Sales[i] = projection.Sale{At: sale.At, Units: sale.Units}
	}
	return &stockRiskOut{
		Identity: identity{
			SKU: sku, ProductName: untrusted(f.sku.Name), Category: untrusted(f.sku.Category), SupplierName: untrusted(f.supplier.Name),
			Chilled: f.sku.Chilled, CasePack: f.sku.CasePack, ShelfLifeDays: f.sku.ShelfLifeDays,
			StoreID: storeID, StoreName: untrusted(f.store.Name),
		},
		Risk: projection.Project(in),
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
