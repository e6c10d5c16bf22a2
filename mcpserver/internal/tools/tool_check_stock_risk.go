package tools

import (
	"context"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/storelinkclient"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxRiskStores bounds store_ids, each answered in full. The whole chain is
// store_ids ["all"] (sweep.go).
const maxRiskStores = 20

// sweepStoreIDsPattern is an item of store_ids: a store id, or "all".
const sweepStoreIDsPattern = "^([0-9]{1,6}|all)$"

type stockRiskIn struct {
	SKU          string   `json:"sku" jsonschema:"SKU code"`
	StoreID      string   `json:"store_id,omitempty" jsonschema:"optional if one store is authorized"`
	StoreIDs     []string `json:"store_ids,omitempty"`
	LookbackDays int      `json:"lookback_days,omitempty" jsonschema:"days of sales history for the sell rate"`
}

// stockRiskOut is the answer: the product once, then one entry per store.
type stockRiskOut struct {
	SKU     string       `json:"sku"`
	Product *productInfo `json:"product,omitempty"`
	Stores  []storeRisk  `json:"stores"`
	Sweep   *sweepOut    `json:"sweep,omitempty" jsonschema:"for store_ids [\"all\"]: stores holds the most at risk; this, the chain"`
}

type productInfo struct {
	Name                 string `json:"name"`
	Supplier             string `json:"supplier"`
	Chilled              bool   `json:"chilled"`
	CasePack             int64  `json:"case_pack"`
	ShelfLifeDays        int64  `json:"shelf_life_days,omitempty"`
	SupplierLeadTimeDays *int   `json:"lead_time_days"`
	// Unknown lists the SKU's and supplier's unknown qualifiers once (ADR 0030).
	Unknown []string `json:"unknown,omitempty"`
}

type storeRisk struct {
	StoreID   string      `json:"store_id"`
	StoreName string      `json:"store_name,omitempty"`
	Risk      *storeFacts `json:"risk,omitempty"`
	Error     *ErrorBody  `json:"error,omitempty"`
}

// storeFacts is projection.Result trimmed for the model; times are
// store-local RFC 3339.
type storeFacts struct {
	Headline                     string                `json:"headline" jsonschema:"the decision in words, store-local times"`
	AsOf                         string                `json:"as_of"`
	OnHandUnits                  int64                 `json:"on_hand_units"`
	OnHandAsOf                   string                `json:"on_hand_as_of"`
	EstimatedOnHandNow           int64                 `json:"estimated_on_hand_now"`
	UnitsSoldToday               int64                 `json:"units_sold_today"`
	UnitsSoldLast24h             int64                 `json:"units_sold_last_24h"`
	UnitsPerTradingHour          []float64             `json:"units_per_trading_hour" jsonschema:"[low, high]" nullable:"true"`
	VelocityBasis                string                `json:"velocity_basis"`
	StockoutWindow               [2]*string            `json:"stockout_window" jsonschema:"[earliest, latest]"`
	Confidence                   projection.Confidence `json:"confidence"`
	WillStockoutBeforeCloseToday projection.Answer     `json:"will_stockout_before_close_today"`
	UnitsShortByClose            *int64                `json:"units_short_by_close"`
	ClosesAtToday                *string               `json:"closes_at_today"`
	OrderCutoffPassed            bool                  `json:"order_cutoff_passed"`
	EarliestArrival              *string               `json:"earliest_delivery"`
	ArrivalBeatsStockout         projection.Answer     `json:"arrival_beats_stockout"`
	Evidence                     table                 `json:"evidence"`
	DataQualityFlags             []projection.Flag     `json:"data_quality_flags"`
	DataQualityNotes             []string              `json:"data_quality_notes" jsonschema:"data_quality_flags in words, same order"`
	Caveat                       string                `json:"caveat"`
	Unknown                      []string              `json:"unknown,omitempty"`

	// closesAt holds what ClosesAtToday points to.
	closesAt string
}

// evidenceColumns name the cells of an evidence row; flags is omitted on a
// day without flags. Days flagged closed, possible_stockout or no_history
// are outside the sell-rate band.
var evidenceColumns = []string{"day", "units_sold", "bulk_units", "trading_hours", "units_per_trading_hour", "flags"}

// compactEvidence is the per-day evidence as a table. The numeric cells
// point into days and one array of rates, so that no cell is boxed on its
// own; they encode as the values they point to.
func compactEvidence(days []projection.DayEvidence) table {
	t := table{Columns: evidenceColumns, Rows: make([][]any, len(days))}
	// One array holds every row's cells, each row a full slice of its own.
	cells := make([]any, len(days)*len(evidenceColumns))
	rates := make([]float64, len(days))
	for i := range days {
		d := &days[i]
		var rate any
		if d.UnitsPerHour != nil {
			rates[i] = math.Round(*d.UnitsPerHour*100) / 100
			rate = &rates[i]
		}
		row := cells[i*len(evidenceColumns) : (i+1)*len(evidenceColumns) : (i+1)*len(evidenceColumns)]
		row[0], row[1], row[2], row[3], row[4] = dayLabel(d.Weekday, d.Date), &d.UnitsSold, &d.BulkUnits, &d.TradingHours, rate
		if len(d.Flags) > 0 {
			row[5] = &d.Flags
		} else {
			row = row[:5]
		}
		t.Rows[i] = row
	}
	return t
}

// dayLabels are the evidence rows' day labels, "Fri 13", by weekday (as
// time.Weekday) and day of the month.
var dayLabels = func() (l [7][32]any) {
	for w := range l {
		for d := 1; d < 32; d++ {
			l[w][d] = time.Weekday(w).String()[:3] + " " + strconv.Itoa(d)
		}
	}
	return l
}()

// dayLabel is an evidence day as "Fri 13": velocity_basis names the dates
// in full. The label comes from dayLabels when weekday and date are what
// the projection writes.
func dayLabel(weekday, date string) any {
	if len(date) == len("2006-01-02") && date[8] >= '0' && date[8] <= '3' && date[9] >= '0' && date[9] <= '9' {
		d := int(date[8]-'0')*10 + int(date[9]-'0')
		for w := range dayLabels {
			if d >= 1 && d < 32 && time.Weekday(w).String()[:3] == weekday {
				return dayLabels[w][d]
			}
		}
	}
	return weekday + " " + strings.TrimPrefix(date[8:], "0")
}

// The resources whose unknown qualifiers are given per store, and once.
var (
	storeResources   = []string{"store", "inventory", "pos"}
	productResources = []string{"sku", "supplier"}
)

func compactFacts(a *replenish.Assessment) *storeFacts {
	r := a.Risk
	f := &storeFacts{
		AsOf: r.AsOf, OnHandUnits: r.OnHandUnits, OnHandAsOf: r.OnHandAsOf, EstimatedOnHandNow: r.EstimatedOnHandNow,
		UnitsSoldToday: r.UnitsSoldToday, UnitsSoldLast24h: a.UnitsSoldLast24h,
		VelocityBasis:  r.VelocityBasis,
		StockoutWindow: [2]*string{r.ProjectedStockoutWindow.Earliest, r.ProjectedStockoutWindow.Latest}, Confidence: r.Confidence,
		WillStockoutBeforeCloseToday: r.WillStockoutBeforeCloseToday, UnitsShortByClose: r.UnitsShortByClose,
		OrderCutoffPassed: r.OrderCutoffPassed, EarliestArrival: r.EarliestReplenishmentArrival,
		ArrivalBeatsStockout: r.ArrivalBeatsStockout, Evidence: compactEvidence(r.Evidence),
		DataQualityFlags: r.DataQualityFlags, DataQualityNotes: projection.DataQualityNotes(r),
		Caveat: r.Caveat, Unknown: a.Unknown.Of(storeResources...).Caveats(),
		Headline: projection.Headline(r, a.Unknown),
	}
	if b := r.UnitsPerTradingHour; b != nil {
		f.UnitsPerTradingHour = []float64{b.Low, b.High}
	}
	if r.ClosesAtToday != nil {
		// A valid RFC 3339 time has its clock, as written, at [11:16]:
		// what Format("15:04") of the parsed time gives.
		if _, err := time.Parse(time.RFC3339, *r.ClosesAtToday); err == nil {
			f.closesAt = (*r.ClosesAtToday)[11:16]
			f.ClosesAtToday = &f.closesAt
		}
	}
	return f
}

func addCheckStockRisk(ms *mcp.Server, s *server) {
	register(ms, s, toolSpec[stockRiskIn, stockRiskOut]{
		tool: &mcp.Tool{
			Name:  "korral_check_stock_risk",
			Title: "Check stock risk",
			Description: "Will this SKU run out at the store(s) before close today, and can a delivery beat it? " +
				"Per store, a deterministic projection: stockout window, confidence, flags, caveat, per-day evidence, units sold in 24 h. " +
				"Relay it; don't recompute. For the sales behind a flag or an evidence day, call korral_list_recent_sales. " +
				"store_ids [\"all\"] sweeps every store you may use: the most at risk first, the rest counted.",
			Annotations: readAnnotations(),
		},
		shape: func(p map[string]*jsonschema.Schema) {
			shapeSKU(p)
			shapeStoreID(p)
			p["store_ids"].Items.Pattern = sweepStoreIDsPattern
			p["store_ids"].MinItems = ptr(1)
			p["store_ids"].MaxItems = ptr(maxRiskStores)
			p["store_ids"].Description = fmt.Sprintf(`up to %d stores instead of store_id, or ["all"]`, maxRiskStores)
			p["store_ids"].UniqueItems = true
			p["lookback_days"].Minimum = ptr(1.0)
			p["lookback_days"].Maximum = ptr(float64(storelinkclient.HistoryDays))
			p["lookback_days"].Default = []byte(fmt.Sprint(s.opts.DefaultLookbackDays))
		},
		handle: s.checkStockRisk,
	})
}

func (s *server) checkStockRisk(ctx context.Context, c *call, in stockRiskIn) (*stockRiskOut, error) {
	c.sku = in.SKU
	if in.LookbackDays == 0 {
		in.LookbackDays = s.opts.DefaultLookbackDays
	}
	out := &stockRiskOut{SKU: in.SKU}
	var found []*replenish.Assessment
	if len(in.StoreIDs) == 0 {
		// One store: its failure is the call's failure, as for every tool.
		storeID, err := s.resolveStore(c, in.StoreID)
		if err != nil {
			return nil, err
		}
		a, err := s.workflow().Assess(ctx, storeID, in.SKU, in.LookbackDays)
		if err != nil {
			return nil, err
		}
		found = []*replenish.Assessment{a}
		out.Stores = []storeRisk{{StoreID: storeID, StoreName: a.Identity.StoreName, Risk: compactFacts(a)}}
	} else {
		if in.StoreID != "" {
			return nil, apperr.New(apperr.InvalidArgument, "both store_id and store_ids were given", "Pass store_ids alone; put the one store in it if you mean one.")
		}
		if slices.Contains(in.StoreIDs, sweepAll) {
			return s.sweepStores(ctx, c, in)
		}
		found = s.assessStores(ctx, c, out, in)
	}
	markRiskAnswer(out, found, nil)
	c.summary = riskSummary(in.SKU, out.Stores, found)
	return out, nil
}

// markRiskAnswer fills the product from the first assessment and marks all
// StoreLink text in the answer as untrusted.
func markRiskAnswer(out *stockRiskOut, found []*replenish.Assessment, extra []sweepEntry) {
	texts := make([]*string, 0, 2+len(out.Stores)+len(extra))
	if len(found) > 0 {
		id := found[0].Identity
		out.Product = &productInfo{Name: id.ProductName, Supplier: id.SupplierName,
			Chilled: id.Chilled, CasePack: id.CasePack, ShelfLifeDays: id.ShelfLifeDays,
			SupplierLeadTimeDays: found[0].Risk.SupplierLeadTimeDays, Unknown: found[0].Unknown.Of(productResources...).Caveats()}
		texts = append(texts, &out.Product.Name, &out.Product.Supplier)
	}
	for i := range out.Stores {
		texts = append(texts, &out.Stores[i].StoreName)
	}
	for i := range extra {
		texts = append(texts, &extra[i].risk.StoreName)
	}
	markUntrusted(texts...)
}

// sweepStores answers store_ids ["all"]: the SKU at every store in scope,
// ranked (sweep.go). A scope over maxSweepStores is refused up front.
func (s *server) sweepStores(ctx context.Context, c *call, in stockRiskIn) (*stockRiskOut, error) {
	if len(in.StoreIDs) != 1 {
		return nil, apperr.New(apperr.InvalidArgument, `store_ids "all" was given with other stores`,
			fmt.Sprintf(`Pass store_ids ["all"] alone for every store you may use, or name up to %d stores.`, maxRiskStores))
	}
	sc := s.callStores(c)
	if sc == nil {
		return nil, apperr.New(apperr.InternalError, "no keyring loaded", "")
	}
	c.storeID = sweepAll
	ids := sc.StoreIDs()
	if len(ids) == 0 {
		// The scope's own refusal: no store at all may be used.
		_, err := sc.Resolve("")
		return nil, err
	}
	if len(ids) > maxSweepStores {
		return nil, apperr.New(apperr.InvalidArgument,
			fmt.Sprintf("a sweep checks at most %d stores; you may use %d", maxSweepStores, len(ids)),
			fmt.Sprintf("Name up to %d stores in store_ids, or ask for an access token limited to the stores you look after.", maxRiskStores))
	}
	entries := make([]sweepEntry, len(ids))
	shared := replenish.NewSharedMaster(ids[0])
	fanOut(len(ids), len(ids), func(i int) {
		entries[i].risk.StoreID = ids[i]
		entries[i].a, entries[i].risk.Error = s.assessOne(ctx, c, shared, ids[i], in)
		if entries[i].a != nil {
			entries[i].risk.StoreName = entries[i].a.Identity.StoreName
		}
	})
	stores, _, sw, listed := sweepAnswer(entries)
	out := &stockRiskOut{SKU: in.SKU, Stores: stores, Sweep: sw}
	// The product is the same at every store; take it from the first.
	var product []*replenish.Assessment
	if i := slices.IndexFunc(entries, func(e sweepEntry) bool { return e.a != nil }); i >= 0 {
		product = []*replenish.Assessment{entries[i].a}
	}
	markRiskAnswer(out, product, listed)
	fillMoreAtRisk(sw, listed)
	c.summary = sweepSummary(productLabel(in.SKU, product), sw, stores)
	return out, nil
}

// assessOne assesses one store of several; a failure is that store's error.
func (s *server) assessOne(ctx context.Context, c *call, shared *replenish.SharedMaster, storeID string, in stockRiskIn) (*replenish.Assessment, *ErrorBody) {
	a, err := s.workflow().AssessShared(ctx, shared, storeID, in.SKU, in.LookbackDays)
	if err != nil {
		return nil, s.storeError(ctx, c, storeID, err)
	}
	return a, nil
}

// productLabel is the product's name and SKU, or the SKU alone.
func productLabel(sku string, found []*replenish.Assessment) string {
	if len(found) > 0 && found[0].Identity.ProductName != "" {
		return fmt.Sprintf("%s (SKU %s)", found[0].Identity.ProductName, sku)
	}
	return "SKU " + sku
}

// riskSummary is the audit sentence for a risk check: the product name if
// known, each store's verdict or error code, in the order asked.
func riskSummary(sku string, stores []storeRisk, found []*replenish.Assessment) string {
	b := make([]byte, 0, 96+80*len(stores))
	b = append(b, "Checked stock risk of "...)
	if len(found) > 0 && found[0].Identity.ProductName != "" {
		b = append(b, found[0].Identity.ProductName...)
		b = append(b, " (SKU "...)
		b = append(b, sku...)
		b = append(b, ')')
	} else {
		b = append(b, "SKU "...)
		b = append(b, sku...)
	}
	b = append(b, " at "...)
	b = strconv.AppendInt(b, int64(len(stores)), 10)
	b = append(b, " store(s): "...)
	failed, next := 0, 0
	for i, st := range stores {
		if i > 0 {
			b = append(b, "; "...)
		}
		b = append(b, "store "...)
		switch {
		case st.Risk != nil && next < len(found):
			// found holds the assessed stores in the order asked.
			a := found[next]
			next++
			r := a.Risk
			b = append(b, a.Identity.StoreID...)
			b = append(b, ": on hand "...)
			b = strconv.AppendInt(b, r.OnHandUnits, 10)
			b = append(b, ", stockout before close today: "...)
			b = append(b, r.WillStockoutBeforeCloseToday...)
			b = append(b, ", confidence "...)
			b = append(b, r.Confidence...)
		case st.Error != nil:
			failed++
			b = append(b, st.StoreID...)
			b = append(b, ": "...)
			b = append(b, st.Error.Code...)
		default:
			// Neither an answer nor an error: not expected, but never a blank.
			failed++
			b = append(b, st.StoreID...)
			b = append(b, ": not checked"...)
		}
	}
	b = append(b, '.')
	if failed > 0 {
		b = append(b, ' ')
		b = strconv.AppendInt(b, int64(failed), 10)
		b = append(b, " store(s) could not be checked."...)
	}
	return string(b)
}

// assessStores checks several stores at once. A store outside the keyring
// gets STORE_NOT_AUTHORIZED and is never asked; a failed store carries its
// own error. It returns the successes in the order asked.
func (s *server) assessStores(ctx context.Context, c *call, out *stockRiskOut, in stockRiskIn) []*replenish.Assessment {
	kr := s.callStores(c)
	out.Stores = make([]storeRisk, len(in.StoreIDs))
	done := make([]*replenish.Assessment, len(in.StoreIDs))
	// Scope is resolved before any request; the SKU and supplier are read
	// once, with the first allowed store's key.
	resolved := make([]string, len(in.StoreIDs))
	refused := make([]error, len(in.StoreIDs))
	reader := ""
	for i, id := range in.StoreIDs {
		if kr == nil {
			resolved[i], refused[i] = id, apperr.New(apperr.InternalError, "no keyring loaded", "")
		} else if resolved[i], refused[i] = kr.Resolve(id); refused[i] == nil && reader == "" {
			reader = resolved[i]
		}
	}
	shared := replenish.NewSharedMaster(reader)
	fanOut(len(in.StoreIDs), len(in.StoreIDs), func(i int) {
		out.Stores[i].StoreID = in.StoreIDs[i]
		if refused[i] != nil {
			out.Stores[i].Error = s.storeError(ctx, c, resolved[i], refused[i])
			return
		}
		if done[i], out.Stores[i].Error = s.assessOne(ctx, c, shared, resolved[i], in); done[i] != nil {
			out.Stores[i].StoreName = done[i].Identity.StoreName
			out.Stores[i].Risk = compactFacts(done[i])
		}
	})
	c.storeID = strings.Join(in.StoreIDs, ",")
	var found []*replenish.Assessment
	for _, a := range done {
		if a != nil {
			found = append(found, a)
		}
	}
	return found
}
