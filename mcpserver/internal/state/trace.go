package state

import (
	"context"
	"time"

	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// LedgerCounts is the ledger at a glance, for the metrics: entries per
// state, and how the approvals stand.
type LedgerCounts struct {
	ByState map[EntryState]int64
	// PendingLapsed counts the entries still pending whose approval has
	// run out at now (Expire has not moved them yet): they read as expired.
	PendingLapsed int64
	// NextExpiry is when the soonest unexpired approval lapses; zero when
	// none is pending.
	NextExpiry time.Time
}

// Counter counts the ledger's entries in one cheap query. Both backends
// implement it.
type Counter interface {
	CountEntries(ctx context.Context, now time.Time) (LedgerCounts, error)
}

// TracedLedger wraps l so that every transition of an entry (Reserve,
// Finish, Apply, Claim, Reject, Expire) is a span of the call that caused
// it. The reads pass through untraced. A nil tp returns l itself.
func TracedLedger(l Ledger, tp trace.TracerProvider) Ledger {
	if tp == nil || l == nil {
		return l
	}
	return tracedLedger{Ledger: l, tr: telemetry.Tracer(tp)}
}

type tracedLedger struct {
	Ledger
	tr trace.Tracer
}

// span starts a ledger span; end closes it with the entry's new state. The
// idempotency key, SKU and reason are left out: they are the buyer's data,
// and the call's span already names the store.
func (t tracedLedger) span(ctx context.Context, op string) (context.Context, func(e Entry, err error)) {
	ctx, sp := t.tr.Start(ctx, "ledger "+op, trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(attribute.String("storelink.ledger.operation", op)))
	return ctx, func(e Entry, err error) {
		if e.State != "" {
			sp.SetAttributes(attribute.String("storelink.ledger.state", string(e.State)))
		}
		if err != nil {
			sp.SetStatus(codes.Error, "ledger "+op+" refused or failed")
		}
		sp.End()
	}
}

func (t tracedLedger) Reserve(ctx context.Context, e Entry) (Entry, bool, error) {
	ctx, end := t.span(ctx, "reserve")
	got, ok, err := t.Ledger.Reserve(ctx, e)
	end(got, err)
	return got, ok, err
}

func (t tracedLedger) Finish(ctx context.Context, key string, st EntryState, orderID, errCode, errMsg string, now time.Time) (Entry, error) {
	ctx, end := t.span(ctx, "finish")
	got, err := t.Ledger.Finish(ctx, key, st, orderID, errCode, errMsg, now)
	end(got, err)
	return got, err
}

func (t tracedLedger) Apply(ctx context.Context, key string, ev Event, ch Change, now time.Time) (Entry, error) {
	ctx, end := t.span(ctx, "apply")
	got, err := t.Ledger.Apply(ctx, key, ev, ch, now)
	end(got, err)
	return got, err
}

func (t tracedLedger) Claim(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error) {
	ctx, end := t.span(ctx, "claim")
	got, err := t.Ledger.Claim(ctx, approvalID, decidedBy, now)
	end(got, err)
	return got, err
}

func (t tracedLedger) Reject(ctx context.Context, approvalID, decidedBy string, now time.Time) (Entry, error) {
	ctx, end := t.span(ctx, "reject")
	got, err := t.Ledger.Reject(ctx, approvalID, decidedBy, now)
	end(got, err)
	return got, err
}

func (t tracedLedger) Expire(ctx context.Context, now time.Time) (int, error) {
	ctx, end := t.span(ctx, "expire")
	n, err := t.Ledger.Expire(ctx, now)
	end(Entry{}, err)
	return n, err
}
