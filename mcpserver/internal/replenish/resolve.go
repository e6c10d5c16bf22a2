package replenish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Resolution is what a person found at StoreLink about an order whose
// outcome is unknown (or that a crash left sending).
type Resolution struct {
	// Ref is the entry's idempotency key or approval id.
	Ref string
	// Name and Secret identify the person to the Verifier.
	Name, Secret string
	// OrderID is the StoreLink order the entry became; "" when StoreLink
	// holds no such order.
	OrderID string
}

// Resolve records a Resolution. An order id is checked against StoreLink
// first (same store, SKU and quantity, submitted no earlier than the entry,
// held by no other entry); a finding that StoreLink holds no such order
// lets the same request be sent again. It returns the entry as recorded.
func (w *Workflow) Resolve(ctx context.Context, r Resolution) (state.Entry, error) {
	e, found, err := w.Ledger.Get(ctx, r.Ref)
	if err != nil {
		return state.Entry{}, err
	}
	if !found {
		if e, found, err = w.Ledger.ByApprovalID(ctx, r.Ref); err != nil {
			return state.Entry{}, err
		}
	}
	who, err := w.verify(ctx, r.Name, r.Secret, e.StoreID)
	if err != nil {
		return state.Entry{}, err
	}
	if !found {
		return state.Entry{}, &NotFoundError{Ref: r.Ref, Ledger: true}
	}
	ev, ch := state.EventResolveNotRaised, state.Change{DecidedBy: who.Name, ErrorCode: string(apperr.WriteOutcomeUnknown),
		ErrorMessage: who.Name + " found no such order at StoreLink"}
	if r.OrderID != "" {
		if _, ok := state.Next(e.State, state.EventResolveRaised); !ok {
			return state.Entry{}, fmt.Errorf("%s is %s, not unknown; nothing changed", e.IdempotencyKey, e.State)
		}
		up, _, err := w.reach(ctx, e)
		if err != nil {
			return state.Entry{}, err
		}
		o, err := up.Order(ctx, e.StoreID, r.OrderID)
		if err != nil {
			ae := apperr.From(err)
			return state.Entry{}, fmt.Errorf("order %s could not be read at StoreLink (%s: %s); nothing changed", r.OrderID, ae.Code, ae.Message)
		}
		if err := checkFoundOrder(e, o); err != nil {
			return state.Entry{}, err
		}
		ev, ch = state.EventResolveRaised, state.Change{DecidedBy: who.Name, OrderID: o.ID}
	}
	got, err := w.Ledger.Apply(ctx, e.IdempotencyKey, ev, ch, w.now())
	if taken := orderTaken(err, ch.OrderID); taken != nil {
		return state.Entry{}, taken
	}
	if err != nil {
		return state.Entry{}, fmt.Errorf("resolve %s: %w; nothing changed", e.IdempotencyKey, err)
	}
	summary := fmt.Sprintf("%s resolved %s (%d unit(s) of SKU %s at store %s): now %s.", who.Name, e.IdempotencyKey, e.QuantityUnits, e.SKU, e.StoreID, got.State)
	w.audit(ctx, state.AuditRecord{Time: w.now().UTC(), CallID: "resolve-" + e.IdempotencyKey, Client: "person:" + who.Name, Tool: "approvals.resolve",
		StoreID: e.StoreID, SKU: e.SKU, Outcome: "ok", Summary: summary})
	return got, nil
}

// resolveClockSkew is how much earlier than its ledger entry an order may
// say it was submitted and still be the order the entry became. The entry
// is written before the POST leaves, so its order can only be younger; the
// margin absorbs a StoreLink clock that runs behind this host's, not an
// order raised before anyone here asked for it.
const resolveClockSkew = 5 * time.Minute

// checkFoundOrder reports why StoreLink's order o cannot be the order that
// entry e became, naming each field that disagrees, or nil when it can be.
// A person's finding is checked against what the ledger knows, because a
// wrong one makes another order read as ours everywhere.
func checkFoundOrder(e state.Entry, o domain.Order) error {
	var diffs []string
	if o.StoreID != e.StoreID {
		diffs = append(diffs, fmt.Sprintf("its store is %s, the entry's is %s", o.StoreID, e.StoreID))
	}
	if o.SKU != e.SKU {
		diffs = append(diffs, fmt.Sprintf("its SKU is %s, the entry's is %s", o.SKU, e.SKU))
	}
	if o.QuantityUnits != e.QuantityUnits {
		diffs = append(diffs, fmt.Sprintf("it is for %d unit(s), the entry for %d", o.QuantityUnits, e.QuantityUnits))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("order %s is not this entry's order: %s; nothing changed", o.ID, strings.Join(diffs, "; "))
	}
	if earliest := e.CreatedAt.Add(-resolveClockSkew); o.SubmittedAt.Before(earliest) {
		return fmt.Errorf("order %s is not this entry's order: StoreLink says it was submitted at %s, %s before the entry was created at %s (only %s is allowed for a difference of clocks); nothing changed",
			o.ID, o.SubmittedAt.UTC().Format(time.RFC3339), e.CreatedAt.Sub(o.SubmittedAt).Round(time.Second), e.CreatedAt.UTC().Format(time.RFC3339), resolveClockSkew)
	}
	return nil
}

// orderTaken turns the ledger's refusal of an order id that another entry
// already holds into the person's answer; other errors give nil.
func orderTaken(err error, orderID string) error {
	var taken *state.OrderIDTakenError
	if !errors.As(err, &taken) {
		return nil
	}
	return fmt.Errorf("order %s is already recorded for another entry (idempotency key %s, %s): one StoreLink order belongs to one entry; nothing changed",
		orderID, taken.Entry.IdempotencyKey, taken.Entry.State)
}
