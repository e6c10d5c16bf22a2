package approvals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// justify is the evidence of e as the workflow's preview computes it now,
// its times in loc (the store's): the preview runs under a key of its own,
// so the staged entry is neither replayed nor touched, and the entry
// itself is not its own duplicate.
func (b *consoleBackend) justify(ctx context.Context, e state.Entry, loc *time.Location) (console.Justification, []console.EvidenceDay, console.Stockout, error) {
	var j console.Justification
	out, err := b.flow.Preview(ctx, replenish.Order{StoreID: e.StoreID, SKU: e.SKU, QuantityUnits: e.QuantityUnits, Reason: e.Reason,
		IdempotencyKey: "console-preview-" + randomHex(12), RequestedBy: e.RequestedBy})
	if err != nil {
		return j, nil, console.Stockout{}, err
	}
	if out.Assessment == nil || out.Justification == nil {
		return j, nil, console.Stockout{}, errors.New("the preview returned no assessment")
	}
	r := out.Assessment.Risk
	j.Headline = projection.Headline(r, out.Assessment.Unknown)
	j.OnHandUnits = r.OnHandUnits
	j.OnHandAsOf = parseTime(&r.OnHandAsOf, loc)
	j.StockoutEarliest = parseTime(r.ProjectedStockoutWindow.Earliest, loc)
	j.StockoutLatest = parseTime(r.ProjectedStockoutWindow.Latest, loc)
	j.Confidence = string(r.Confidence)
	j.LeadTimeDays = r.SupplierLeadTimeDays
	j.EarliestDelivery = parseTime(r.EarliestReplenishmentArrival, loc)
	if q := out.QuantityCheck; q != nil {
		j.Check = console.QuantityCheck{Verdict: string(q.Verdict), Reasons: q.Reasons}
	}
	if c := out.Justification.DaysOfCoverAfterDelivery; c != nil && c.Low >= 0 && c.High >= 0 {
		j.CoverAfterDelivery = &console.CoverBand{Low: c.Low, High: c.High}
	}
	j.CasePack = out.Assessment.Identity.CasePack
	for _, f := range r.DataQualityFlags {
		j.Flags = append(j.Flags, string(f))
	}
	j.Caveat = r.Caveat
	var others []string
	for _, o := range out.OpenOrders {
		// The order itself is listed under its key, or once raised under
		// StoreLink's order id.
		if o.Reference != e.IdempotencyKey && (e.OrderID == "" || o.Reference != e.OrderID) {
			others = append(others, fmt.Sprintf("%s (%s, %d units)", o.Reference, o.State, o.QuantityUnits))
		}
	}
	if len(others) > 0 {
		j.DuplicateWarning = fmt.Sprintf("%d other order(s) of this SKU for this store are open or pending: %s. Check them before approving.", len(others), strings.Join(others, "; "))
	}
	// The supplier's minimum and the last 24 hours' sales: master data the
	// preview has just cached, and one bounded read of sales.
	if sku, err := b.flow.Upstream.SKU(ctx, e.StoreID, e.SKU); err == nil {
		if sup, err := b.flow.Upstream.Supplier(ctx, e.StoreID, sku.SupplierID); err == nil {
			j.SupplierMinimumUnits = sup.MinimumOrderUnit
		}
	}
	if page, err := b.flow.Upstream.Sales(ctx, e.StoreID, e.SKU, b.now().Add(-24*time.Hour), consoleSalesMax); err == nil {
		for _, s := range page.Items {
			j.UnitsSoldLast24h += s.Units
		}
	}
	ev := make([]console.EvidenceDay, 0, len(r.Evidence))
	for _, d := range r.Evidence {
		day := console.EvidenceDay{Date: d.Date, UnitsSold: d.UnitsSold}
		for _, f := range d.Flags {
			day.Flags = append(day.Flags, string(f))
		}
		ev = append(ev, day)
	}
	return j, ev, stockoutOf(r, loc), nil
}

// stockoutOf is the projection's stockout window for a page, in loc.
func stockoutOf(r projection.Result, loc *time.Location) console.Stockout {
	if r.Confidence == projection.ConfidenceNone || r.Confidence == "" {
		return console.Stockout{}
	}
	return console.Stockout{Known: true, HorizonDays: r.HorizonDays,
		Earliest: parseTime(r.ProjectedStockoutWindow.Earliest, loc), Latest: parseTime(r.ProjectedStockoutWindow.Latest, loc)}
}

// stockoutReaders bounds the projections an inbox runs at once.
const stockoutReaders = 4

// stockouts fills in each order's projected stockout, one projection per
// store and SKU, at most stockoutReaders at a time. An order whose
// projection fails keeps an unknown stockout, and the inbox lists it last.
func (b *consoleBackend) stockouts(ctx context.Context, list []console.OrderSummary) {
	type key struct{ store, sku string }
	found := map[key]console.Stockout{}
	var mu sync.Mutex
	var g errgroup.Group
	g.SetLimit(stockoutReaders)
	seen := map[key]bool{}
	for _, o := range list {
		k := key{o.StoreID, o.SKU}
		if seen[k] || !b.holds(o.StoreID) {
			continue
		}
		seen[k] = true
		loc := o.RequestedAt.Location()
		g.Go(func() error {
			a, err := b.flow.Assess(ctx, k.store, k.sku, b.flow.LookbackDays)
			if err != nil {
				b.log.Warn("console.stockout_unavailable", "store_id", k.store, "sku", k.sku, "error", err.Error())
				return nil
			}
			mu.Lock()
			found[k] = stockoutOf(a.Risk, loc)
			mu.Unlock()
			return nil
		})
	}
	_ = g.Wait()
	for i := range list {
		list[i].Stockout = found[key{list[i].StoreID, list[i].SKU}]
	}
}

// namer fills in StoreLink's names of stores and SKUs for one page, each
// read once (the adapter caches master data too).
type namer struct {
	b      *consoleBackend
	stores map[string]storeName
	skus   map[string]skuName
}

type storeName struct {
	name string
	loc  *time.Location
}

type skuName struct {
	name     string
	casePack int64
}

func (b *consoleBackend) namer() *namer {
	return &namer{b: b, stores: map[string]storeName{}, skus: map[string]skuName{}}
}

// store returns a store's name and timezone (UTC when unknown).
func (n *namer) store(ctx context.Context, storeID string) storeName {
	st, ok := n.stores[storeID]
	if !ok {
		st.loc = time.UTC
		if s, err := n.b.flow.Upstream.Store(ctx, storeID); err == nil {
			st.name = s.Name
			if loc, err := time.LoadLocation(s.Timezone); err == nil {
				st.loc = loc
			}
		}
		n.stores[storeID] = st
	}
	return st
}

// location is a store's timezone, UTC when unknown.
func (n *namer) location(ctx context.Context, storeID string) *time.Location {
	return n.store(ctx, storeID).loc
}

func (n *namer) summary(ctx context.Context, e state.Entry) console.OrderSummary {
	st := n.store(ctx, e.StoreID)
	key := e.StoreID + "\x1f" + e.SKU
	sk, ok := n.skus[key]
	if !ok {
		if s, err := n.b.flow.Upstream.SKU(ctx, e.StoreID, e.SKU); err == nil {
			sk = skuName{name: s.Name, casePack: s.CasePack}
		}
		n.skus[key] = sk
	}
	notSending, _ := n.b.notSending(e.StoreID)
	return console.OrderSummary{ApprovalID: e.ApprovalID, StoreID: e.StoreID, StoreName: st.name, SKU: e.SKU, ProductName: sk.name,
		QuantityUnits: e.QuantityUnits, CasePack: sk.casePack, Reason: e.Reason, RequestedBy: e.RequestedBy,
		RequestedAt: e.CreatedAt.In(st.loc), ExpiresAt: e.ApprovalExpiresAt.In(st.loc), NotSending: notSending}
}

// consoleStatus maps a ledger state onto a page's status.
func consoleStatus(s state.EntryState) console.Status {
	switch s {
	case state.StatePendingApproval:
		return console.StatusPending
	case state.StateSending:
		return console.StatusSending
	case state.StateRaised:
		return console.StatusRaised
	case state.StateUnknown:
		return console.StatusUnknown
	case state.StateRejected:
		return console.StatusRejected
	case state.StateExpired:
		return console.StatusLapsed
	}
	return console.StatusFailed
}

// decision is what became of e, its time in loc (the store's).
func decision(e state.Entry, reason string, loc *time.Location) console.Decision {
	d := console.Decision{By: e.DecidedBy, At: e.UpdatedAt.In(loc), OrderID: e.OrderID, Note: reason}
	switch e.State {
	case state.StateExpired:
		d.By, d.At = "", e.ApprovalExpiresAt.In(loc)
	case state.StateFailed, state.StateRetryable:
		d.Note = e.ErrorMessage
	}
	return d
}

// parseTime reads an RFC 3339 time into loc; zero when absent or
// unreadable.
func parseTime(s *string, loc *time.Location) time.Time {
	if s == nil || *s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return time.Time{}
	}
	return t.In(loc)
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
