package approvals

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
)

// RegisterGauges observes the ledger of db on every collection of mp:
// entries per state and the approvals, in one grouped query of the state
// database. It does nothing without a meter or when db cannot count.
func RegisterGauges(mp metric.MeterProvider, db state.Store, clock func() time.Time) {
	counter, ok := db.(state.Counter)
	if mp == nil || !ok {
		return
	}
	m := telemetry.Meter(mp)
	entries, _ := m.Int64ObservableGauge("storelink.ledger.entries", metric.WithUnit("{entry}"),
		metric.WithDescription("Order ledger entries by state (unknown and pending_approval need a person)."))
	pending, _ := m.Int64ObservableGauge("storelink.approvals.pending", metric.WithUnit("{approval}"),
		metric.WithDescription("Orders staged for approval that have not lapsed."))
	lapsed, _ := m.Int64ObservableGauge("storelink.approvals.lapsed", metric.WithUnit("{approval}"),
		metric.WithDescription("Staged orders whose approval lapsed (expired, or past their expiry and not yet marked)."))
	next, _ := m.Float64ObservableGauge("storelink.approvals.next_expiry", metric.WithUnit("s"),
		metric.WithDescription("Seconds until the soonest pending approval lapses; absent when none is pending."))
	if entries == nil || pending == nil || lapsed == nil || next == nil {
		return
	}
	_, _ = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		now := clock()
		c, err := counter.CountEntries(ctx, now)
		if err != nil {
			// /readyz reports the database.
			return nil
		}
		for _, st := range state.States() {
			o.ObserveInt64(entries, c.ByState[st], metric.WithAttributes(attribute.String("state", string(st))))
		}
		o.ObserveInt64(pending, c.ByState[state.StatePendingApproval]-c.PendingLapsed)
		o.ObserveInt64(lapsed, c.ByState[state.StateExpired]+c.PendingLapsed)
		if !c.NextExpiry.IsZero() {
			o.ObserveFloat64(next, c.NextExpiry.Sub(now).Seconds())
		}
		return nil
	}, entries, pending, lapsed, next)
}
