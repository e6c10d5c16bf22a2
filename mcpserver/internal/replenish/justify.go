package replenish

import (
	"context"
	"fmt"
	"math"
	"time"

	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// justify is the evidence behind an order of qty units: the risk
// assessment's figures and, when a sell rate and lead time are known, the
// days of cover after delivery.
func justify(risk *Assessment, qty int64) *Justification {
	r := risk.Risk
	j := &Justification{
		OnHandUnits: r.OnHandUnits, EstimatedOnHandNow: r.EstimatedOnHandNow,
		StockoutEarliest: r.ProjectedStockoutWindow.Earliest, StockoutLatest: r.ProjectedStockoutWindow.Latest,
		Confidence: r.Confidence, SupplierLeadTimeDays: r.SupplierLeadTimeDays, ExpectedArrival: r.EarliestReplenishmentArrival,
		WillStockoutBeforeCloseToday: r.WillStockoutBeforeCloseToday, DataQualityFlags: append([]projection.Flag{}, r.DataQualityFlags...),
		Unknown: risk.Unknown.Caveats(),
	}
	if r.UnitsPerTradingHour == nil || r.SupplierLeadTimeDays == nil {
		// No sell rate, or no delivery date to count the cover from.
		return j
	}
	low, high := r.UnitsPerTradingHour.Low, r.UnitsPerTradingHour.High
	j.UnitsPerTradingHourLow, j.UnitsPerTradingHourHigh = &low, &high
	// What is left when the delivery lands, at the slow rate (the case that
	// overstocks), plus the order itself.
	left := float64(max(r.EstimatedOnHandNow, 0))
	if r.EarliestReplenishmentArrival != nil {
		if arrival, err := time.Parse(time.RFC3339, *r.EarliestReplenishmentArrival); err == nil {
			if asOf, err := time.Parse(time.RFC3339, r.AsOf); err == nil && arrival.After(asOf) {
				days := arrival.Sub(asOf).Hours() / 24
				left = math.Max(0, left-r.UnitsPerTradingHour.Low*r.TradingHoursPerDay*days)
			}
		}
	}
	if low, high, ok := r.DaysOfCover(qty + int64(left)); ok {
		j.DaysOfCoverAfterDelivery = &CoverBand{Low: round1(low), High: round1(high)}
	}
	return j
}

func round1(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return -1
	}
	return math.Round(x*10) / 10
}

func (w *Workflow) supplierMinimum(ctx context.Context, storeID, skuCode string) (int64, error) {
	sku, err := w.Upstream.SKU(ctx, storeID, skuCode)
	if err != nil {
		return 0, err
	}
	sup, err := w.Upstream.Supplier(ctx, storeID, sku.SupplierID)
	if err != nil {
		return 0, err
	}
	return sup.MinimumOrderUnit, nil
}

func checkQuantity(risk *Assessment, qty, ceiling, minimum int64, cover *CoverBand) *QuantityCheck {
	q := &QuantityCheck{Verdict: VerdictOK, Reasons: []string{}}
	review := func(format string, args ...any) {
		q.Reasons = append(q.Reasons, fmt.Sprintf(format, args...))
		if q.Verdict == VerdictOK {
			q.Verdict = VerdictReview
		}
	}
	id := risk.Identity
	// The refusing verdict is the confirm's own gate (Gate.Check), so a
	// preview that says refuse is a confirm that is refused.
	for _, r := range (quantityLimits{ceiling: ceiling, minimum: minimum, casePack: id.CasePack}).refusals(qty) {
		q.Verdict = VerdictRefuse
		q.Reasons = append(q.Reasons, r.reason)
	}
	if qty <= ceiling && qty*10 >= ceiling*8 {
		review("%d units is close to this deployment's ceiling of %d", qty, ceiling)
	}
	if id.CasePack > 1 && qty%id.CasePack != 0 {
		review("%d is not a whole number of cases of %d", qty, id.CasePack)
	}
	switch {
	case cover == nil && risk.Risk.UnitsPerTradingHour != nil && risk.Risk.SupplierLeadTimeDays == nil:
		review("the supplier's lead time is unknown, so days of cover after delivery cannot be judged")
	case cover == nil:
		review("the sell rate is unknown, so days of cover cannot be judged")
	default:
		if id.ShelfLifeDays > 0 && cover.Low > float64(id.ShelfLifeDays) {
			review("even at the high sell rate the order lasts %.1f days, beyond the %d-day shelf life", cover.Low, id.ShelfLifeDays)
		} else if id.Chilled && cover.Low > 21 {
			review("%.1f days of cover is a lot for a chilled product; check for a misplaced digit", cover.Low)
		} else if cover.Low > 90 {
			review("%.1f days of cover is more than a quarter's demand", cover.Low)
		}
		if lead := risk.Risk.SupplierLeadTimeDays; lead != nil && cover.High < float64(*lead) {
			review("at the low sell rate the stock lasts only %.1f days after delivery, less than the %d-day lead time of the next order", cover.High, *lead)
		}
	}
	return q
}

func (w *Workflow) openOrders(ctx context.Context, storeID, sku string) ([]OpenOrder, error) {
	entries, err := w.Ledger.Recent(ctx, storeID, sku, w.now().Add(-duplicateLookback))
	if err != nil {
		return nil, err
	}
	refreshed := 0
	now := w.now()
	listed := map[string]bool{}
	out := []OpenOrder{}
	for _, e := range entries {
		// Only the caller's own store, and each StoreLink order once: a
		// ledger written before one order id belonged to one entry may hold
		// it twice.
		if e.StoreID != storeID || !w.Gate.holds(e.StoreID) || e.OrderID != "" && listed[e.OrderID] {
			continue
		}
		listed[e.OrderID] = e.OrderID != ""
		e = e.AsOf(now)
		o := OpenOrder{Reference: e.IdempotencyKey, State: e.State, QuantityUnits: e.QuantityUnits, CreatedAt: e.CreatedAt}
		switch e.State {
		case state.StateRaised:
			o.Reference = e.OrderID
			if refreshed < maxDuplicateRefresh && w.SameUpstream(e) {
				refreshed++
				if got, err := w.Upstream.Order(ctx, storeID, e.OrderID); err == nil && SameOrder(e, got) {
					o.Status = got.Status
				}
			}
			if o.Status != "" && !o.Status.Open() {
				continue
			}
		case state.StateFailed, state.StateRetryable, state.StateRejected, state.StateExpired:
			// Nothing is on its way for these.
			continue
		}
		out = append(out, o)
	}
	return out, nil
}
