package approvals

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// justify is the evidence of e as the workflow's preview computes it now:
// the preview runs under a key of its own, so the staged entry is neither
// replayed nor touched, and the entry itself is not its own duplicate.
func (b *consoleBackend) justify(ctx context.Context, e state.Entry) (console.Justification, []console.EvidenceDay, error) {
	var j console.Justification
	out, err := b.flow.Preview(ctx, replenish.Order{StoreID: e.StoreID, SKU: e.SKU, QuantityUnits: e.QuantityUnits, Reason: e.Reason,
		IdempotencyKey: "console-preview-" + randomHex(12), RequestedBy: e.RequestedBy})
	if err != nil {
		return j, nil, err
	}
	if out.Assessment == nil || out.Justification == nil {
		return j, nil, errors.New("the preview returned no assessment")
	}
	r := out.Assessment.Risk
	j.OnHandUnits = r.OnHandUnits
	j.OnHandAsOf = parseTime(&r.OnHandAsOf)
	j.StockoutEarliest = parseTime(r.ProjectedStockoutWindow.Earliest)
	j.StockoutLatest = parseTime(r.ProjectedStockoutWindow.Latest)
	j.Confidence = string(r.Confidence)
	j.LeadTimeDays = r.SupplierLeadTimeDays
	j.EarliestDelivery = parseTime(r.EarliestReplenishmentArrival)
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
		if o.Reference != e.IdempotencyKey {
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
	return j, ev, nil
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

func (n *namer) summary(ctx context.Context, e state.Entry) console.OrderSummary {
	st, ok := n.stores[e.StoreID]
	if !ok {
		st.loc = time.UTC
		if s, err := n.b.flow.Upstream.Store(ctx, e.StoreID); err == nil {
			st.name = s.Name
			if loc, err := time.LoadLocation(s.Timezone); err == nil {
				st.loc = loc
			}
		}
		n.stores[e.StoreID] = st
	}
	key := e.StoreID + "\x1f" + e.SKU
	sk, ok := n.skus[key]
	if !ok {
		if s, err := n.b.flow.Upstream.SKU(ctx, e.StoreID, e.SKU); err == nil {
			sk = skuName{name: s.Name, casePack: s.CasePack}
		}
		n.skus[key] = sk
	}
	return console.OrderSummary{ApprovalID: e.ApprovalID, StoreID: e.StoreID, StoreName: st.name, SKU: e.SKU, ProductName: sk.name,
		QuantityUnits: e.QuantityUnits, CasePack: sk.casePack, Reason: e.Reason, RequestedBy: e.RequestedBy,
		RequestedAt: e.CreatedAt.In(st.loc), ExpiresAt: e.ApprovalExpiresAt.In(st.loc)}
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

func decision(e state.Entry, reason string) console.Decision {
	d := console.Decision{By: e.DecidedBy, At: e.UpdatedAt, OrderID: e.OrderID, Note: reason}
	switch e.State {
	case state.StateExpired:
		d.By, d.At = "", e.ApprovalExpiresAt
	case state.StateFailed, state.StateRetryable:
		d.Note = e.ErrorMessage
	}
	return d
}

func parseTime(s *string) time.Time {
	if s == nil || *s == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, *s)
	if err != nil {
		return time.Time{}
	}
	return t
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
