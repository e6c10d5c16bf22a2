package state

import (
	"errors"
	"fmt"
	"time"
)

// Event is something that happens to a ledger entry; each state change is
// one event.
type Event string

// The ledger's events.
const (
	// EventAccepted: StoreLink accepted the order (sending → raised).
	EventAccepted Event = "accepted"
	// EventRefused: StoreLink refused the order (sending → failed).
	EventRefused Event = "refused"
	// EventNotSent: StoreLink did not take the order (sending → retryable).
	EventNotSent Event = "not_sent"
	// EventLost: the send ended without a verdict (sending → unknown).
	EventLost Event = "lost"
	// EventRetry: resend under the same key (retryable → sending).
	EventRetry Event = "retry"
	// EventRestage: restage under the same key (retryable →
	// pending_approval).
	EventRestage Event = "restage"
	// EventClaim: a person approved (pending_approval → sending).
	EventClaim Event = "claim"
	// EventUnclaim: StoreLink did not take an approved order; the approval
	// is not consumed (sending → pending_approval).
	EventUnclaim Event = "unclaim"
	// EventReject: a person rejected it (pending_approval → rejected).
	EventReject Event = "reject"
	// EventExpire: nobody decided in time (pending_approval → expired).
	EventExpire Event = "expire"
	// EventResolveRaised: found at StoreLink (sending/unknown → raised).
	EventResolveRaised Event = "resolve_raised"
	// EventResolveNotRaised: not at StoreLink (sending/unknown →
	// retryable).
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

// transitions is the lifecycle of an entry. A pair not listed gives
// ErrInvalidTransition.
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

// Next returns the state event leads to from s, or false if not allowed.
func Next(s EntryState, ev Event) (EntryState, bool) {
	next, ok := transitions[s][ev]
	return next, ok
}

// Change is what an event records besides the new state. Empty fields are
// kept, except that leaving StateSending for retry or approval clears the
// previous outcome.
type Change struct {
	OrderID      string
	ErrorCode    string
	ErrorMessage string
	DecidedBy    string
}

// ErrInFlight reports that the same request is sending or unknown under
// another key (InFlightError).
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

// AsOf returns the entry at now: a lapsed pending approval reads as
// StateExpired before Expire writes it.
func (e Entry) AsOf(now time.Time) Entry {
	if e.State == StatePendingApproval && !now.Before(e.ApprovalExpiresAt) {
		e.State = StateExpired
	}
	return e
}

// transition returns cur after ev, or ErrInvalidTransition. It only
// computes; the caller writes it with a conditional update on cur.State and
// checks for in-flight duplicates when entering StateSending.
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

// timeLayout is the ledger's time format: RFC 3339 UTC with nine digits.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }
