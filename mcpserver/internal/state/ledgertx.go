package state

import (
	"context"
	"fmt"
	"time"
)

// LedgerTx is one backend write transaction as the shared ledger algorithms
// (ReserveTx, ApplyTx, DecideTx, ExpireTx) use it, so both backends follow
// the same transition table and checks. The backend opens the transaction
// and holds the locks that make it atomic.
type LedgerTx interface {
	// Insert stores e unless its key is held. It returns the stored entry
	// and true, or the entry holding the key (locked) and false.
	Insert(ctx context.Context, e Entry) (Entry, bool, error)
	// Retake writes e over cur, the StateRetryable entry of the same key,
	// conditionally on cur's state; false when cur changed.
	Retake(ctx context.Context, e, cur Entry) (Entry, bool, error)
	// Update writes next (event ev applied to cur), conditionally on cur's
	// state; false when cur changed.
	Update(ctx context.Context, cur, next Entry, ev Event) (Entry, bool, error)
	// InFlight returns another entry of fingerprint hash that is sending
	// or unknown.
	InFlight(ctx context.Context, hash, key string) (Entry, bool, error)
	// OrderIDHolder returns another entry holding orderID at cur's
	// StoreLink.
	OrderIDHolder(ctx context.Context, cur Entry, orderID string) (Entry, bool, error)
}

// NewEntry checks e for Ledger.Reserve, computing an empty RequestHash and
// setting a zero CreatedAt to now.
func NewEntry(e Entry) (Entry, error) {
	if err := checkNew(e); err != nil {
		return Entry{}, err
	}
	if e.RequestHash == "" {
		e.RequestHash = RequestHash(e.StoreID, e.SKU, e.QuantityUnits, e.Reason)
	}
	if e.CreatedAt.IsZero() {
		e.CreatedAt = time.Now()
	}
	return e, nil
}

// ReserveTx is Ledger.Reserve inside tx. A StateRetryable entry of the same
// request is taken over (EventRetry or EventRestage); any other entry under
// the key is returned with false.
func ReserveTx(ctx context.Context, tx LedgerTx, e Entry) (Entry, bool, error) {
	cur, inserted, err := tx.Insert(ctx, e)
	if err != nil {
		return Entry{}, false, err
	}
	if inserted {
		if e.State == StateSending {
			// Rolling back frees the key.
			if err := checkNotInFlight(ctx, tx, e.RequestHash, e.IdempotencyKey); err != nil {
				return Entry{}, false, err
			}
		}
		return cur, true, nil
	}
	if cur.State != StateRetryable || cur.RequestHash != e.RequestHash {
		return cur, false, nil
	}
	ev := EventRetry
	if e.State == StatePendingApproval {
		ev = EventRestage
	}
	if next, ok := Next(cur.State, ev); !ok || next != e.State {
		return Entry{}, false, fmt.Errorf("%w: %q is %s", ErrInvalidTransition, e.IdempotencyKey, cur.State)
	}
	if e.State == StateSending {
		if err := checkNotInFlight(ctx, tx, e.RequestHash, e.IdempotencyKey); err != nil {
			return Entry{}, false, err
		}
	}
	got, ok, err := tx.Retake(ctx, e, cur)
	if err != nil {
		return Entry{}, false, err
	}
	if !ok {
		return Entry{}, false, fmt.Errorf("%w: %q changed state while it was reserved again", ErrInvalidTransition, e.IdempotencyKey)
	}
	return got, true, nil
}

// ApplyTx is Ledger.Apply inside tx on cur (read under the locks),
// refusing in-flight duplicates and order ids held by another entry.
func ApplyTx(ctx context.Context, tx LedgerTx, cur Entry, ev Event, ch Change, now time.Time) (Entry, error) {
	e, err := transition(cur, ev, ch, now)
	if err != nil {
		return Entry{}, err
	}
	if e.State == StateSending {
		if err := checkNotInFlight(ctx, tx, cur.RequestHash, cur.IdempotencyKey); err != nil {
			return Entry{}, err
		}
	}
	if e.OrderID != "" && e.OrderID != cur.OrderID {
		holder, taken, err := tx.OrderIDHolder(ctx, cur, e.OrderID)
		if err != nil {
			return Entry{}, err
		}
		if taken {
			return Entry{}, &OrderIDTakenError{OrderID: e.OrderID, Entry: holder}
		}
	}
	got, ok, err := tx.Update(ctx, cur, e, ev)
	if err != nil {
		return Entry{}, err
	}
	if !ok {
		return Entry{}, fmt.Errorf("%w: %q changed state while %s was applied", ErrInvalidTransition, cur.IdempotencyKey, ev)
	}
	return got, nil
}

// DecideTx is Ledger.Claim (EventClaim) or Ledger.Reject (EventReject)
// inside tx on cur; ErrNotPending unless pending and unexpired at now.
func DecideTx(ctx context.Context, tx LedgerTx, cur Entry, approvalID, decidedBy string, ev Event, now time.Time) (Entry, error) {
	if err := checkDecidable(cur, approvalID, now); err != nil {
		return Entry{}, err
	}
	return ApplyTx(ctx, tx, cur, ev, Change{DecidedBy: decidedBy}, now)
}

// ExpireTx applies EventExpire inside tx to each of due, stopping at the
// first failure.
func ExpireTx(ctx context.Context, tx LedgerTx, due []Entry, now time.Time) error {
	for _, e := range due {
		if _, err := ApplyTx(ctx, tx, e, EventExpire, Change{}, now); err != nil {
			return err
		}
	}
	return nil
}

// checkNotInFlight refuses a send while another entry of the same request
// is sending or unknown: one request is one order.
func checkNotInFlight(ctx context.Context, tx LedgerTx, hash, key string) error {
	e, ok, err := tx.InFlight(ctx, hash, key)
	if err != nil {
		return err
	}
	if ok {
		return &InFlightError{Entry: e}
	}
	return nil
}

// FinishEvent is the event Ledger.Finish applies to record state.
func FinishEvent(key string, state EntryState, orderID string) (Event, error) {
	ev, ok := map[EntryState]Event{StateRaised: EventAccepted, StateFailed: EventRefused, StateRetryable: EventNotSent, StateUnknown: EventLost}[state]
	if !ok {
		return "", fmt.Errorf("%w: %q cannot be finished as %q", ErrInvalidTransition, key, state)
	}
	if state == StateRaised && orderID == "" {
		return "", fmt.Errorf("%w: %q cannot be %s without an order id", ErrInvalidTransition, key, state)
	}
	return ev, nil
}
