package state

import (
	"errors"
	"fmt"
	"time"
)

// Event is something that happens to a ledger entry. Every change of an
// entry's state is one event, allowed only from the states the transition
// table lists.
type Event string

// The ledger's events.
const (
	// EventAccepted: StoreLink accepted the order (sending → raised).
	EventAccepted Event = "accepted"
	// EventRefused: StoreLink definitely refused the order, for example a
	// validation error or a supplier minimum (sending → failed).
	EventRefused Event = "refused"
	// EventNotSent: StoreLink certainly did not take the order (the breaker
	// was open, the connection was refused, a 429 or a 401 came back), so the
	// same request may be sent again (sending → retryable).
	EventNotSent Event = "not_sent"
	// EventLost: the send ended without a verdict (sending → unknown).
	EventLost Event = "lost"
	// EventRetry: the same request is sent again under the same key
	// (retryable → sending).
	EventRetry Event = "retry"
	// EventRestage: the same request is staged again under the same key
	// (retryable → pending_approval).
	EventRestage Event = "restage"
	// EventClaim: a person approved the staged order (pending_approval →
	// sending).
	EventClaim Event = "claim"
	// EventUnclaim: an approved order that StoreLink did not take goes back
	// to waiting, so the approval is not consumed (sending →
	// pending_approval).
	EventUnclaim Event = "unclaim"
	// EventReject: a person turned the staged order down (pending_approval →
	// rejected).
	EventReject Event = "reject"
	// EventExpire: nobody decided in time (pending_approval → expired).
	EventExpire Event = "expire"
	// EventResolveRaised: a person found the order at StoreLink (sending or
	// unknown → raised).
	EventResolveRaised Event = "resolve_raised"
	// EventResolveNotRaised: a person found that StoreLink holds no such
	// order (sending or unknown → retryable).
	EventResolveNotRaised Event = "resolve_not_raised"
)

// Events lists every event, for tests that walk the whole table.
func Events() []Event {
	return []Event{EventAccepted, EventRefused, EventNotSent, EventLost, EventRetry, EventRestage,
		EventClaim, EventUnclaim, EventReject, EventExpire, EventResolveRaised, EventResolveNotRaised}
}

// States lists every state, in the order of the lifecycle.
func States() []EntryState {
	return []EntryState{StateSending, StateRaised, StateFailed, StateRetryable, StateUnknown,
		StatePendingApproval, StateRejected, StateExpired}
}

// transitions is the whole lifecycle of a ledger entry: from a state, an
// event leads to the next state. A pair not listed is refused with
// ErrInvalidTransition and changes nothing. New entries start in
// StateSending or StatePendingApproval (Reserve).
var transitions = map[EntryState]map[Event]EntryState{
	StateSending: {
		EventAccepted:         StateRaised,
		EventRefused:          StateFailed,
		EventNotSent:          StateRetryable,
		EventLost:             StateUnknown,
		EventUnclaim:          StatePendingApproval,
		EventResolveRaised:    StateRaised,
		EventResolveNotRaised: StateRetryable,
	},
	StateRetryable: {
		EventRetry:   StateSending,
		EventRestage: StatePendingApproval,
	},
	StateUnknown: {
		EventResolveRaised:    StateRaised,
		EventResolveNotRaised: StateRetryable,
	},
	StatePendingApproval: {
		EventClaim:  StateSending,
		EventReject: StateRejected,
		EventExpire: StateExpired,
	},
	// raised, failed, rejected and expired are final.
}

// Next returns the state event leads to from s, and false when the ledger
// does not allow that event in that state.
func Next(s EntryState, ev Event) (EntryState, bool) {
	next, ok := transitions[s][ev]
	return next, ok
}

// Change is what an event records besides the new state. Empty fields leave
// the entry's value as it is, except that leaving StateSending for
// StateRetryable or StatePendingApproval clears the previous outcome.
type Change struct {
	OrderID      string
	ErrorCode    string
	ErrorMessage string
	DecidedBy    string
}

// ErrInFlight reports that the same request (store, SKU, quantity and
// normalised reason) is already being sent, or was sent with an unknown
// outcome, under another idempotency key. See InFlightError.
var ErrInFlight = errors.New("state: the same order request is already in flight")

// InFlightError names the entry that blocks a second send of the same
// request. It matches ErrInFlight with errors.Is.
type InFlightError struct {
	Entry Entry
}

func (e *InFlightError) Error() string {
	return fmt.Sprintf("%v: idempotency key %s is %s", ErrInFlight, e.Entry.IdempotencyKey, e.Entry.State)
}

// Is makes errors.Is(err, ErrInFlight) true.
func (e *InFlightError) Is(target error) bool { return target == ErrInFlight }

// AsOf returns the entry as it stands at now: a pending approval whose
// expiry has passed reads as StateExpired even before Expire has written
// it, so no reader ever treats a lapsed approval as open.
func (e Entry) AsOf(now time.Time) Entry {
	if e.State == StatePendingApproval && !now.Before(e.ApprovalExpiresAt) {
		e.State = StateExpired
	}
	return e
}

// transition returns cur as event ev leaves it, with ch recorded and
// UpdatedAt set to now, or ErrInvalidTransition when the transition table
// does not allow ev in cur's state or the result would be an entry the
// ledger must not hold. It only computes: the caller writes the result with
// one conditional update on cur.State and, when the result is StateSending,
// first checks that the same request is not in flight under another key.
func transition(cur Entry, ev Event, ch Change, now time.Time) (Entry, error) {
	next, ok := Next(cur.State, ev)
	if !ok {
		return Entry{}, fmt.Errorf("%w: %q is %s, which does not allow %s", ErrInvalidTransition, cur.IdempotencyKey, cur.State, ev)
	}
	if next == StateRaised && ch.OrderID == "" && cur.OrderID == "" {
		return Entry{}, fmt.Errorf("%w: %q cannot be %s without an order id", ErrInvalidTransition, cur.IdempotencyKey, next)
	}
	if next == StatePendingApproval && cur.ApprovalID == "" {
		return Entry{}, fmt.Errorf("%w: %q was never staged for approval", ErrInvalidTransition, cur.IdempotencyKey)
	}
	e := cur
	e.State, e.UpdatedAt = next, now
	if next == StateRetryable || next == StatePendingApproval || next == StateSending {
		// A fresh attempt carries no verdict of an earlier one.
		e.OrderID, e.ErrorCode, e.ErrorMessage = "", "", ""
	}
	if ev == EventUnclaim {
		e.DecidedBy = ""
	}
	if ch.OrderID != "" {
		e.OrderID = ch.OrderID
	}
	if ch.ErrorCode != "" || ch.ErrorMessage != "" {
		e.ErrorCode, e.ErrorMessage = ch.ErrorCode, ch.ErrorMessage
	}
	if ch.DecidedBy != "" {
		e.DecidedBy = ch.DecidedBy
	}
	return e, nil
}

// checkDecidable reports ErrNotPending unless the entry staged under
// approvalID is still pending and unexpired at now.
func checkDecidable(cur Entry, approvalID string, now time.Time) error {
	if cur.State != StatePendingApproval {
		return fmt.Errorf("%w: approval %s is %s", ErrNotPending, approvalID, cur.State)
	}
	if !now.Before(cur.ApprovalExpiresAt) {
		return fmt.Errorf("%w: approval %s expired at %s", ErrNotPending, approvalID, formatTime(cur.ApprovalExpiresAt))
	}
	return nil
}

// timeLayout is how a time appears in the ledger's messages: RFC 3339 in
// UTC with a fixed nine-digit fraction, as the SQLite backend stores it.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }
