// Package statetest is the behaviour every state.Store must show, written
// once and run against each backend: the SQLite store always, PostgreSQL
// whenever TEST_DATABASE_URL names a server. A backend's test calls Run
// with a function that opens a fresh, empty store.
package statetest

import (
	"context"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Opener returns a fresh, empty store for one test and a function that
// opens another handle on the same database, as a second process would.
// Both are closed when the test ends.
type Opener func(t *testing.T) (s state.Store, reopen func() state.Store)

// base is a fixed instant with a whole number of microseconds, the finest
// time every backend keeps.
var base = time.Date(2026, 11, 27, 9, 30, 0, 123456000, time.UTC)

// Run runs the whole suite against the stores o opens.
func Run(t *testing.T, o Opener) {
	tests := []struct {
		name string
		fn   func(t *testing.T, o Opener)
	}{
		{"TransitionTableWalksEveryPair", transitionTable},
		{"ReserveStoresAndReplays", reserveStoresAndReplays},
		{"FinishRecordsOneVerdict", finish},
		{"ReserveRaceOneKey", reserveRaceOneKey},
		{"SameRequestNeverInFlightTwice", sameRequestNeverInFlightTwice},
		{"RetryableTakenOverBySameRequestOnly", retryableTakeover},
		{"ApprovalLifecycle", approvalLifecycle},
		{"ClaimRace", claimRace},
		{"UnclaimReturnsOnlyStagedToPending", unclaim},
		{"OrderIDBelongsToOneEntry", orderIDBelongsToOneEntry},
		{"OrderIDRaceOneWinner", orderIDRace},
		{"Lookups", lookups},
		{"AuditQuery", auditQuery},
		{"AuditReport", auditReport},
		{"AuditConcurrent", auditConcurrent},
		{"CountEntries", countEntries},
		{"ApproverAddGetList", approverAddGetList},
		{"ApproverNamesUniqueIgnoringCase", approverNamesUnique},
		{"ApproverInvalidRefused", approverInvalidRefused},
		{"ApproverRevokeAndRotate", approverRevokeAndRotate},
		{"ApproverAddRaceOneWinner", approverAddRace},
		{"ConsentNonceSingleUse", consentNonceSingleUse},
		{"ConsentNonceRaceOneWinner", consentNonceRace},
		{"LoginLimitShared", loginLimitShared},
		{"LoginSettle", loginSettle},
		{"LoginRaceAdmitsLimit", loginRace},
		{"ConsoleSessions", consoleSessions},
		{"ConsoleFormKey", consoleFormKey},
		{"ConsoleFormKeyRace", consoleFormKeyRace},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, o) })
	}
}

func ctxOf(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

func sending(key, sku string) state.Entry {
	return state.Entry{IdempotencyKey: key, StoreID: "47", SKU: sku, QuantityUnits: 24, Reason: "Butter low before the weekend",
		State: state.StateSending, RequestedBy: "agent", UpstreamID: "up-1", CreatedAt: base}
}

func staged(key, sku string) state.Entry {
	e := sending(key, sku)
	e.State, e.ApprovalID, e.ApprovalExpiresAt = state.StatePendingApproval, "apr-"+key, base.Add(time.Hour)
	return e
}

// allowed is the lifecycle written out independently of the table in
// machine.go: every pair not listed must be refused without a change.
var allowed = map[state.EntryState]map[state.Event]state.EntryState{
	state.StateSending: {state.EventAccepted: state.StateRaised, state.EventRefused: state.StateFailed, state.EventNotSent: state.StateRetryable,
		state.EventLost: state.StateUnknown, state.EventUnclaim: state.StatePendingApproval, state.EventResolveRaised: state.StateRaised,
		state.EventResolveNotRaised: state.StateRetryable},
	state.StateRetryable:       {state.EventRetry: state.StateSending, state.EventRestage: state.StatePendingApproval},
	state.StateUnknown:         {state.EventResolveRaised: state.StateRaised, state.EventResolveNotRaised: state.StateRetryable},
	state.StatePendingApproval: {state.EventClaim: state.StateSending, state.EventReject: state.StateRejected, state.EventExpire: state.StateExpired},
}

// reach brings a staged entry to st through the public API only.
func reach(ctx context.Context, t *testing.T, s state.Store, key, sku string, st state.EntryState) {
	t.Helper()
	if _, _, err := s.Reserve(ctx, staged(key, sku)); err != nil {
		t.Fatal(err)
	}
	at := base.Add(time.Second)
	step := func(ev state.Event, ch state.Change) {
		t.Helper()
		if _, err := s.Apply(ctx, key, ev, ch, at); err != nil {
			t.Fatalf("reach %s: %s: %v", st, ev, err)
		}
	}
	switch st {
	case state.StatePendingApproval:
		return
	case state.StateRejected:
		step(state.EventReject, state.Change{DecidedBy: "Jana"})
		return
	case state.StateExpired:
		step(state.EventExpire, state.Change{})
		return
	}
	step(state.EventClaim, state.Change{DecidedBy: "Jana"})
	switch st {
	case state.StateRaised:
		step(state.EventAccepted, state.Change{OrderID: "ORD-" + key})
	case state.StateFailed:
		step(state.EventRefused, state.Change{ErrorCode: "UPSTREAM_REJECTED", ErrorMessage: "minimum"})
	case state.StateRetryable:
		step(state.EventNotSent, state.Change{ErrorCode: "RATE_LIMITED", ErrorMessage: "slow down"})
	case state.StateUnknown:
		step(state.EventLost, state.Change{ErrorCode: "WRITE_OUTCOME_UNKNOWN", ErrorMessage: "timeout"})
	}
}
