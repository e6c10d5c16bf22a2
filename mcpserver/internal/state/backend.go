package state

import (
	"errors"
	"fmt"
	"time"
)

// The rules every Store applies alike, exported so that a backend in another
// package (state/postgres) decides exactly as *DB does: the transition table
// and its side effects, what a new entry must hold, and when an approval can
// still be decided. A backend adds only the storage: the conditional update
// of each transition and the locking that makes it atomic.

// ErrUnavailable reports that the state database could not be reached or
// lost the connection mid-statement. Nothing the failed call asked for can
// be assumed recorded; a later call may succeed once the database is back.
var ErrUnavailable = errors.New("state: database unavailable")

// Transition returns cur as event ev leaves it, with ch recorded and
// UpdatedAt set to now, or ErrInvalidTransition when the transition table
// does not allow ev in cur's state or the result would be an entry the
// ledger must not hold. It only computes: the caller writes the result with
// one conditional update on cur.State and, when the result is StateSending,
// first checks that the same request is not in flight under another key.
func Transition(cur Entry, ev Event, ch Change, now time.Time) (Entry, error) {
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

// CheckNew reports why Reserve must not store e, or nil.
func CheckNew(e Entry) error { return checkNew(e) }

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

// CheckDecidable reports ErrNotPending unless the entry staged under
// approvalID is still pending and unexpired at now.
func CheckDecidable(cur Entry, approvalID string, now time.Time) error {
	if cur.State != StatePendingApproval {
		return fmt.Errorf("%w: approval %s is %s", ErrNotPending, approvalID, cur.State)
	}
	if !now.Before(cur.ApprovalExpiresAt) {
		return fmt.Errorf("%w: approval %s expired at %s", ErrNotPending, approvalID, formatTime(cur.ApprovalExpiresAt))
	}
	return nil
}

// NearestRank returns the p-th percentile of sorted, non-empty values by the
// nearest-rank method, as Report computes P50, P95 and P99.
func NearestRank(sorted []float64, p int) float64 { return nearestRank(sorted, p) }

// AuditDay returns the half-open UTC interval [start, end) that
// AuditFilter.Day selects.
func AuditDay(day time.Time) (start, end time.Time) {
	d := day.UTC()
	start = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}

// timeLayout is how a time appears in the ledger's messages: RFC 3339 in
// UTC with a fixed nine-digit fraction, as the SQLite backend stores it.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }
