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
