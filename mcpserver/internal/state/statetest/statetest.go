// Package statetest is the behaviour every state.Store must show, written
// once and run against each backend: the SQLite store always, PostgreSQL
// whenever TEST_DATABASE_URL names a server. A backend's test calls Run
// with a function that opens a fresh, empty store.
package statetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
		{"ReserveRaceOneKey", reserveRaceOneKey},
		{"SameRequestNeverInFlightTwice", sameRequestNeverInFlightTwice},
		{"RetryableTakenOverBySameRequestOnly", retryableTakeover},
		{"ApprovalLifecycle", approvalLifecycle},
		{"ClaimRace", claimRace},
		{"UnclaimReturnsOnlyStagedToPending", unclaim},
		{"OrderIDBelongsToOneEntry", orderIDBelongsToOneEntry},
		{"OrderIDRaceOneWinner", orderIDRace},
		{"Lookups", lookups},
		{"Audit", audit},
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

func transitionTable(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	later := base.Add(time.Minute)
	i := 0
	for _, st := range state.States() {
		for _, ev := range state.Events() {
			i++
			key, sku := fmt.Sprintf("k%03d", i), fmt.Sprintf("sku-%03d", i)
			reach(ctx, t, s, key, sku, st)
			before, _, err := s.Get(ctx, key)
			if err != nil || before.State != st {
				t.Fatalf("%s: got %s, %v", key, before.State, err)
			}
			// Each entry gets an order id of its own: one order id is one entry.
			got, err := s.Apply(ctx, key, ev, state.Change{OrderID: "ORD-new-" + key, ErrorCode: "CODE", ErrorMessage: "msg", DecidedBy: "Petr"}, later)
			want, ok := allowed[st][ev]
			if !ok {
				if !errors.Is(err, state.ErrInvalidTransition) {
					t.Errorf("%s + %s: err = %v, want ErrInvalidTransition", st, ev, err)
				}
				after, _, _ := s.Get(ctx, key)
				if diff := cmp.Diff(before, after); diff != "" {
					t.Errorf("%s + %s: a refused event changed the entry (-before +after):\n%s", st, ev, diff)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s + %s: %v", st, ev, err)
				continue
			}
			if got.State != want || !got.UpdatedAt.Equal(later) {
				t.Errorf("%s + %s: state %s at %v, want %s at %v", st, ev, got.State, got.UpdatedAt, want, later)
			}
			if stored, _, _ := s.Get(ctx, key); stored.State != want {
				t.Errorf("%s + %s: stored state %s, want %s", st, ev, stored.State, want)
			}
		}
	}
}

func reserveStoresAndReplays(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	in := sending("k1", "1001")
	got, taken, err := s.Reserve(ctx, in)
	if err != nil || !taken {
		t.Fatalf("Reserve = %v, %v", taken, err)
	}
	want := in
	want.RequestHash = state.RequestHash(in.StoreID, in.SKU, in.QuantityUnits, in.Reason)
	want.UpdatedAt = in.CreatedAt
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored entry (-want +got):\n%s", diff)
	}
	again := in
	again.QuantityUnits = 99
	got2, taken, err := s.Reserve(ctx, again)
	if err != nil || taken {
		t.Fatalf("second Reserve = %v, %v; want the existing entry", taken, err)
	}
	if diff := cmp.Diff(got, got2); diff != "" {
		t.Errorf("second Reserve changed the entry (-first +second):\n%s", diff)
	}
	if _, _, err := s.Reserve(ctx, state.Entry{IdempotencyKey: "bad", StoreID: "47", SKU: "1", QuantityUnits: 0, State: state.StateSending}); err == nil {
		t.Error("Reserve accepted a zero quantity")
	}
	if _, err := s.Finish(ctx, "k1", state.StateRaised, "", "", "", base); !errors.Is(err, state.ErrInvalidTransition) {
		t.Errorf("raised without an order id: err = %v", err)
	}
	fin, err := s.Finish(ctx, "k1", state.StateRaised, "ORD-1", "", "", base.Add(time.Second))
	if err != nil || fin.State != state.StateRaised || fin.OrderID != "ORD-1" {
		t.Fatalf("Finish = %+v, %v", fin, err)
	}
	if _, err := s.Finish(ctx, "k1", state.StateFailed, "", "X", "y", base); !errors.Is(err, state.ErrInvalidTransition) {
		t.Errorf("finishing a raised entry: err = %v", err)
	}
	if _, err := s.Finish(ctx, "nope", state.StateRaised, "ORD-2", "", "", base); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("finishing an unknown key: err = %v", err)
	}
}

// reserveRaceOneKey is the ledger's reason to exist: of many concurrent
// reservations of one key, through two handles as two replicas would hold
// them, exactly one takes it.
func reserveRaceOneKey(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen()}
	const n = 16
	var wg sync.WaitGroup
	var mu sync.Mutex
	taken, failed := 0, 0
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, ok, err := handles[i%2].Reserve(ctx, sending("race", "1001"))
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed++
				t.Errorf("Reserve: %v", err)
			}
			if ok {
				taken++
			}
		}()
	}
	wg.Wait()
	if taken != 1 || failed != 0 {
		t.Fatalf("%d of %d concurrent reservations took the key (%d failed); want exactly 1", taken, n, failed)
	}
}

func sameRequestNeverInFlightTwice(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen(), reopen()}
	// The race is between different keys for one request, so its window
	// is narrow; many rounds make a missing lock show.
	const rounds, n = 25, 9
	for round := range rounds {
		sku := fmt.Sprintf("sku-%d", round)
		var wg sync.WaitGroup
		var mu sync.Mutex
		taken := 0
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				// Different keys, the same request spelt differently: one order.
				e := sending(fmt.Sprintf("key-%d-%d", round, i), sku)
				if i%2 == 1 {
					e.Reason = "  butter LOW before the weekend "
				}
				<-start
				_, ok, err := handles[i%len(handles)].Reserve(ctx, e)
				var fl *state.InFlightError
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil && ok:
					taken++
				case errors.As(err, &fl) && errors.Is(err, state.ErrInFlight):
				default:
					t.Errorf("Reserve %s = %v, %v; want taken or in flight", e.IdempotencyKey, ok, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if taken != 1 {
			t.Fatalf("round %d: %d keys were reserved for one request; want 1", round, taken)
		}
	}
}

func retryableTakeover(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	e := sending("k1", "1001")
	if _, _, err := s.Reserve(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(ctx, "k1", state.StateRetryable, "", "RATE_LIMITED", "slow", base); err != nil {
		t.Fatal(err)
	}
	other := e
	other.QuantityUnits = 12
	if got, taken, err := s.Reserve(ctx, other); err != nil || taken || got.State != state.StateRetryable {
		t.Fatalf("a different request took over a retryable key: %s, %v, %v", got.State, taken, err)
	}
	got, taken, err := s.Reserve(ctx, e)
	if err != nil || !taken || got.State != state.StateSending || got.ErrorCode != "" {
		t.Fatalf("the same request again = %+v, %v, %v; want taken over and sending", got, taken, err)
	}
	if !got.CreatedAt.Equal(base) {
		t.Errorf("taking over changed CreatedAt to %v", got.CreatedAt)
	}
}

func approvalLifecycle(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	for _, k := range []string{"a", "b", "c"} {
		if _, _, err := s.Reserve(ctx, staged(k, "sku-"+k)); err != nil {
			t.Fatal(err)
		}
	}
	dup := staged("d", "sku-d")
	dup.ApprovalID = "apr-a"
	if _, _, err := s.Reserve(ctx, dup); err == nil {
		t.Error("two entries share one approval id")
	}
	if p, err := s.Pending(ctx, base); err != nil || len(p) != 3 {
		t.Fatalf("Pending = %d, %v; want 3", len(p), err)
	}
	got, err := s.Claim(ctx, "apr-a", "Jana", base.Add(time.Minute))
	if err != nil || got.State != state.StateSending || got.DecidedBy != "Jana" {
		t.Fatalf("Claim = %+v, %v", got, err)
	}
	if _, err := s.Claim(ctx, "apr-a", "Petr", base.Add(time.Minute)); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("second Claim: err = %v, want ErrNotPending", err)
	}
	if _, err := s.Reject(ctx, "apr-b", "Petr", base.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, "apr-zzz", "Petr", base); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("unknown approval: err = %v, want ErrNotFound", err)
	}
	// At the instant of expiry the approval is over, for every method.
	exp := base.Add(time.Hour)
	if _, err := s.Claim(ctx, "apr-c", "Jana", exp); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("Claim at expiry: err = %v, want ErrNotPending", err)
	}
	if p, _ := s.Pending(ctx, exp); len(p) != 0 {
		t.Errorf("Pending at expiry lists %d", len(p))
	}
	if n, err := s.Expire(ctx, exp.Add(-time.Microsecond)); err != nil || n != 0 {
		t.Errorf("Expire before expiry = %d, %v", n, err)
	}
	if n, err := s.Expire(ctx, exp); err != nil || n != 1 {
		t.Errorf("Expire = %d, %v; want 1", n, err)
	}
	if e, _, _ := s.ByApprovalID(ctx, "apr-c"); e.State != state.StateExpired {
		t.Errorf("apr-c is %s, want expired", e.State)
	}
	st, err := s.Staged(ctx)
	if err != nil || len(st) != 3 {
		t.Fatalf("Staged = %d, %v; want 3", len(st), err)
	}
	var states []state.EntryState
	for _, e := range st {
		states = append(states, e.State)
	}
	if diff := cmp.Diff([]state.EntryState{state.StateSending, state.StateRejected, state.StateExpired}, states); diff != "" {
		t.Errorf("Staged states (-want +got):\n%s", diff)
	}
}

// unclaim: an approved order StoreLink did not take waits again, undecided;
// an order never staged has no approval to return to.
func unclaim(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	if _, _, err := s.Reserve(ctx, staged("k", "1001")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Claim(ctx, "apr-k", "Jana", base); err != nil {
		t.Fatal(err)
	}
	got, err := s.Apply(ctx, "k", state.EventUnclaim, state.Change{ErrorCode: "RATE_LIMITED", ErrorMessage: "slow"}, base)
	if err != nil || got.State != state.StatePendingApproval || got.DecidedBy != "" || got.ErrorCode != "RATE_LIMITED" {
		t.Fatalf("unclaim = %+v, %v; want pending, undecided, with the reason", got, err)
	}
	if _, _, err := s.Reserve(ctx, sending("plain", "2002")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, "plain", state.EventUnclaim, state.Change{}, base); !errors.Is(err, state.ErrInvalidTransition) {
		t.Fatalf("unclaim of an order never staged: err = %v, want ErrInvalidTransition", err)
	}
}

func claimRace(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	if _, _, err := s.Reserve(ctx, staged("k", "1001")); err != nil {
		t.Fatal(err)
	}
	handles := []state.Store{s, reopen()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	won := 0
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := handles[i%2].Claim(ctx, "apr-k", fmt.Sprintf("person-%d", i), base.Add(time.Minute))
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				won++
			case !errors.Is(err, state.ErrNotPending):
				t.Errorf("Claim: %v", err)
			}
		}()
	}
	wg.Wait()
	if won != 1 {
		t.Fatalf("%d claims won; want 1", won)
	}
}

func lookups(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	for i, k := range []string{"old", "new"} {
		e := sending(k, "1001")
		e.QuantityUnits = int64(10 + i)
		e.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		if _, _, err := s.Reserve(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Finish(ctx, "new", state.StateRaised, "ORD-9", "", "", base); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := s.ByOrderID(ctx, "ORD-9"); err != nil || !ok || e.IdempotencyKey != "new" {
		t.Errorf("ByOrderID = %s, %v, %v", e.IdempotencyKey, ok, err)
	}
	if _, ok, err := s.Get(ctx, "missing"); err != nil || ok {
		t.Errorf("Get missing = %v, %v", ok, err)
	}
	r, err := s.Recent(ctx, "47", "1001", base.Add(time.Minute))
	if err != nil || len(r) != 1 || r[0].IdempotencyKey != "new" {
		t.Errorf("Recent since +1m = %v, %v; want [new]", r, err)
	}
	r, _ = s.Recent(ctx, "47", "1001", base)
	if len(r) != 2 || r[0].IdempotencyKey != "new" {
		t.Errorf("Recent since base: %d entries, want 2 newest first", len(r))
	}
}

func audit(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	other := reopen()
	day2 := base.Add(24 * time.Hour)
	recs := []state.AuditRecord{
		{Time: base, CallID: "c1", Client: "a", Session: "s", Tool: "read", StoreID: "47", Outcome: state.OutcomeOK, DurationMS: 3},
		{Time: base.Add(time.Second), CallID: "c2", Client: "a", Session: "s", Tool: "read", StoreID: "47", Outcome: "error", ErrorCode: "NOT_FOUND", DurationMS: 1},
		{Time: base.Add(2 * time.Second), CallID: "c3", Client: "b", Session: "t", Tool: "write", StoreID: "12", Outcome: state.OutcomeOK, DurationMS: 20},
		{Time: day2, CallID: "c4", Client: "b", Session: "t", Tool: "read", StoreID: "47", Outcome: "error", ErrorCode: "NOT_FOUND", DurationMS: 2,
			TraceID: "4bf92f3577b34da6a3ce929d0e0e4736"},
	}
	for i, r := range recs {
		// Two handles write, as two replicas would; both see everything.
		if err := []state.Store{s, other}[i%2].RecordAudit(ctx, r); err != nil {
			t.Fatal(err)
		}
	}
	all, err := other.QueryAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(recs, all); diff != "" {
		t.Errorf("QueryAudit (-want +got):\n%s", diff)
	}
	last, _ := s.QueryAudit(ctx, state.AuditFilter{Limit: 2})
	if len(last) != 2 || last[0].CallID != "c3" || last[1].CallID != "c4" {
		t.Errorf("Limit 2 = %v; want c3, c4", last)
	}
	day, _ := s.QueryAudit(ctx, state.AuditFilter{Day: base, StoreID: "47"})
	if len(day) != 2 {
		t.Errorf("day and store filter: %d records, want 2", len(day))
	}
	rep, err := s.Report(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	want := []state.ToolStats{
		{Tool: "read", Calls: 3, OK: 1, Errors: 2, ErrorRate: 2.0 / 3, P50: 2, P95: 3, P99: 3, ErrorCodes: map[string]int{"NOT_FOUND": 2}},
		{Tool: "write", Calls: 1, OK: 1, P50: 20, P95: 20, P99: 20, ErrorCodes: map[string]int{}},
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("Report (-want +got):\n%s", diff)
	}
	empty, err := s.Report(ctx, state.AuditFilter{Tool: "none"})
	if err != nil || len(empty) != 0 {
		t.Errorf("Report of nothing = %v, %v", empty, err)
	}
	if err := s.Ping(ctx); err != nil {
		t.Errorf("Ping: %v", err)
	}
}

// unknownEntry reserves a sending entry for its own SKU and loses its
// outcome, as a timed-out POST would leave it for a person to resolve.
func unknownEntry(ctx context.Context, t *testing.T, s state.Store, key, sku, upstream string) state.Entry {
	t.Helper()
	e := sending(key, sku)
	e.UpstreamID = upstream
	if _, _, err := s.Reserve(ctx, e); err != nil {
		t.Fatal(err)
	}
	got, err := s.Finish(ctx, key, state.StateUnknown, "", "WRITE_OUTCOME_UNKNOWN", "timeout", base)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// orderIDBelongsToOneEntry: a StoreLink order id, once recorded for one
// entry, is refused for another entry of the same StoreLink, by a
// person's resolution and by a send's verdict alike, and the refusal
// changes nothing. Another StoreLink's order of the same id is another
// order.
func orderIDBelongsToOneEntry(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	unknownEntry(ctx, t, s, "first", "1001", "up-1")
	if _, err := s.Apply(ctx, "first", state.EventResolveRaised, state.Change{OrderID: "RO-47-000900", DecidedBy: "Jana"}, base); err != nil {
		t.Fatal(err)
	}
	second := unknownEntry(ctx, t, s, "second", "1002", "up-1")
	_, err := s.Apply(ctx, "second", state.EventResolveRaised, state.Change{OrderID: "RO-47-000900", DecidedBy: "Jana"}, base.Add(time.Minute))
	var taken *state.OrderIDTakenError
	if !errors.As(err, &taken) || !errors.Is(err, state.ErrOrderIDTaken) || taken.Entry.IdempotencyKey != "first" || taken.OrderID != "RO-47-000900" {
		t.Fatalf("second entry resolved to the first one's order: err = %v", err)
	}
	if after, _, _ := s.Get(ctx, "second"); !cmp.Equal(second, after) {
		t.Errorf("a refused resolution changed the entry:\n%s", cmp.Diff(second, after))
	}
	// A send's verdict is held to the same rule.
	e := sending("third", "1003")
	if _, _, err := s.Reserve(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Finish(ctx, "third", state.StateRaised, "RO-47-000900", "", "", base); !errors.Is(err, state.ErrOrderIDTaken) {
		t.Errorf("Finish with a recorded order id: err = %v", err)
	}
	if after, _, _ := s.Get(ctx, "third"); after.State != state.StateSending || after.OrderID != "" {
		t.Errorf("a refused Finish changed the entry: %+v", after)
	}
	if got, ok, _ := s.ByOrderID(ctx, "RO-47-000900"); !ok || got.IdempotencyKey != "first" {
		t.Errorf("ByOrderID = %s, %v; want first", got.IdempotencyKey, ok)
	}
	// The same id at another StoreLink is another order.
	unknownEntry(ctx, t, s, "elsewhere", "1004", "up-2")
	if _, err := s.Apply(ctx, "elsewhere", state.EventResolveRaised, state.Change{OrderID: "RO-47-000900", DecidedBy: "Jana"}, base); err != nil {
		t.Errorf("the same order id at another StoreLink: %v", err)
	}
	// An entry that names no StoreLink may be at any, so it clashes with all.
	unknownEntry(ctx, t, s, "unnamed", "1005", "")
	if _, err := s.Apply(ctx, "unnamed", state.EventResolveRaised, state.Change{OrderID: "RO-47-000900", DecidedBy: "Jana"}, base); !errors.Is(err, state.ErrOrderIDTaken) {
		t.Errorf("an entry without a StoreLink took a recorded order id: err = %v", err)
	}
}

// orderIDRace: people resolving several entries to one order id at once,
// through handles of their own as separate processes would, leave exactly
// one entry holding it.
func orderIDRace(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen(), reopen()}
	const rounds, n = 10, 6
	for round := range rounds {
		orderID := fmt.Sprintf("RO-47-%06d", round)
		for i := range n {
			// Different SKUs: different requests, each one entry of its own.
			unknownEntry(ctx, t, s, fmt.Sprintf("r%d-%d", round, i), fmt.Sprintf("sku-%d-%d", round, i), "up-1")
		}
		var wg sync.WaitGroup
		var mu sync.Mutex
		won := 0
		start := make(chan struct{})
		for i := range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := handles[i%len(handles)].Apply(ctx, fmt.Sprintf("r%d-%d", round, i), state.EventResolveRaised,
					state.Change{OrderID: orderID, DecidedBy: "Jana"}, base)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					won++
				case !errors.Is(err, state.ErrOrderIDTaken):
					t.Errorf("resolve: %v", err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if won != 1 {
			t.Fatalf("round %d: %d entries took order %s; want exactly 1", round, won, orderID)
		}
		holders := 0
		for i := range n {
			if e, _, _ := s.Get(ctx, fmt.Sprintf("r%d-%d", round, i)); e.OrderID == orderID {
				holders++
			}
		}
		if holders != 1 {
			t.Fatalf("round %d: %d entries hold order %s", round, holders, orderID)
		}
	}
}
