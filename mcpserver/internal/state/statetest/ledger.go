package statetest

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/korral/storelink/mcpserver/internal/state"
)

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
			if next, tableOK := state.Next(st, ev); next != want || tableOK != ok {
				t.Errorf("Next(%s, %s) = %s, %v; want %s, %v", st, ev, next, tableOK, want, ok)
			}
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
			if stored, _, _ := s.Get(ctx, key); stored.State != want || want == state.StateRaised && stored.OrderID == "" {
				t.Errorf("%s + %s: stored state %s with order id %q, want %s", st, ev, stored.State, stored.OrderID, want)
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
	if read, ok, err := s.Get(ctx, "k1"); err != nil || !ok || !cmp.Equal(want, read) {
		t.Errorf("Get = %+v, %v, %v; want the stored entry", read, ok, err)
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
}

// finish: a send's verdict is recorded once, and only on a sending entry;
// a raised verdict needs an order id; a refused verdict changes nothing.
func finish(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	later := base.Add(3 * time.Second)
	for i, tc := range []struct {
		st                 state.EntryState
		orderID, code, msg string
	}{
		{st: state.StateRaised, orderID: "ORD-9"},
		{st: state.StateFailed, code: "UPSTREAM_REJECTED", msg: "supplier blocked"},
		{st: state.StateUnknown, code: "WRITE_OUTCOME_UNKNOWN", msg: "timed out"},
	} {
		key := fmt.Sprint("k", i)
		want, _, err := s.Reserve(ctx, sending(key, key))
		if err != nil {
			t.Fatal(err)
		}
		want.State, want.OrderID, want.ErrorCode, want.ErrorMessage, want.UpdatedAt = tc.st, tc.orderID, tc.code, tc.msg, later
		if got, err := s.Finish(ctx, key, tc.st, tc.orderID, tc.code, tc.msg, later); err != nil || !cmp.Equal(want, got) {
			t.Errorf("Finish %s: %v (-want +got):\n%s", tc.st, err, cmp.Diff(want, got))
		}
		if _, err := s.Finish(ctx, key, state.StateFailed, "", "X", "again", later); !errors.Is(err, state.ErrInvalidTransition) {
			t.Errorf("second verdict on a %s entry: err = %v, want ErrInvalidTransition", tc.st, err)
		}
		if read, _, _ := s.Get(ctx, key); !cmp.Equal(want, read) {
			t.Errorf("a refused Finish changed the entry (-want +got):\n%s", cmp.Diff(want, read))
		}
	}
	for _, e := range []state.Entry{sending("send", "send"), staged("pend", "pend")} {
		if _, _, err := s.Reserve(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		key     string
		st      state.EntryState
		orderID string
		want    error
	}{
		{"send", state.StateSending, "", state.ErrInvalidTransition},
		{"send", state.StatePendingApproval, "", state.ErrInvalidTransition},
		{"send", state.StateRejected, "", state.ErrInvalidTransition},
		{"send", "bogus", "", state.ErrInvalidTransition},
		{"send", state.StateRaised, "", state.ErrInvalidTransition}, // no order id
		{"pend", state.StateRaised, "ORD-1", state.ErrInvalidTransition},
		{"nope", state.StateRaised, "ORD-1", state.ErrNotFound},
	} {
		if _, err := s.Finish(ctx, tc.key, tc.st, tc.orderID, "", "", base); !errors.Is(err, tc.want) {
			t.Errorf("Finish(%s, %s): err = %v, want %v", tc.key, tc.st, err, tc.want)
		}
	}
	for key, want := range map[string]state.EntryState{"send": state.StateSending, "pend": state.StatePendingApproval} {
		if e, _, err := s.Get(ctx, key); err != nil || e.State != want {
			t.Errorf("%s: state %s after refusals (%v), want %s", key, e.State, err, want)
		}
	}
}

// reserveRaceOneKey is what the ledger is for: of many concurrent
// reservations of one key, through two handles as two replicas would hold
// them, exactly one takes it, and every other caller is handed its entry.
func reserveRaceOneKey(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen()}
	const keys, perKey = 4, 8
	var wg sync.WaitGroup
	var mu sync.Mutex
	winner, handed := map[string]string{}, map[string][]string{}
	for k := range keys {
		key := fmt.Sprintf("race-%d", k)
		for i := range perKey {
			who := fmt.Sprintf("caller-%d", i)
			wg.Go(func() {
				e := sending(key, key) // one request per key
				e.RequestedBy = who
				got, ok, err := handles[i%2].Reserve(ctx, e)
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err != nil:
					t.Errorf("Reserve %s: %v", key, err)
				case ok && winner[key] != "":
					t.Errorf("%s: both %s and %s took the key", key, winner[key], who)
				case ok:
					winner[key] = who
				}
				if err == nil {
					handed[key] = append(handed[key], got.RequestedBy)
				}
			})
		}
	}
	wg.Wait()
	for k := range keys {
		key := fmt.Sprintf("race-%d", k)
		if winner[key] == "" {
			t.Fatalf("%s: no reservation took the key", key)
		}
		for _, by := range handed[key] {
			if by != winner[key] {
				t.Errorf("%s: a caller was handed the entry of %s, want the winner %s", key, by, winner[key])
			}
		}
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

// retryableTakeover: a key whose send may be repeated is taken over by the
// same request only, keeping its creation time; a sending or failed entry
// is handed back untouched.
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
	again := e
	again.CreatedAt, again.RequestedBy = base.Add(time.Minute), "agent-2"
	got, taken, err := s.Reserve(ctx, again)
	if err != nil || !taken || got.State != state.StateSending || got.ErrorCode != "" || got.ErrorMessage != "" ||
		!got.CreatedAt.Equal(base) || !got.UpdatedAt.Equal(again.CreatedAt) || got.RequestedBy != "agent-2" {
		t.Fatalf("the same request again = %+v, %v, %v; want taken over and sending, created at %v", got, taken, err, base)
	}
	if _, taken, _ := s.Reserve(ctx, again); taken {
		t.Fatal("a sending entry was taken over")
	}
	// A definite refusal spends the key.
	if _, err := s.Finish(ctx, "k1", state.StateFailed, "", "UPSTREAM_REJECTED", "below minimum", base); err != nil {
		t.Fatal(err)
	}
	if got, taken, err := s.Reserve(ctx, again); err != nil || taken || got.State != state.StateFailed {
		t.Fatalf("a failed entry: %s, %v, %v; want it back untouched", got.State, taken, err)
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
	if _, _, err := s.Reserve(ctx, staged("st", "2002")); err != nil {
		t.Fatal(err)
	}
	if e, ok, err := s.ByApprovalID(ctx, "apr-st"); err != nil || !ok || e.IdempotencyKey != "st" {
		t.Errorf("ByApprovalID = %s, %v, %v", e.IdempotencyKey, ok, err)
	}
	for name, lookup := range map[string]func() (state.Entry, bool, error){
		"Get missing":          func() (state.Entry, bool, error) { return s.Get(ctx, "missing") },
		"ByOrderID missing":    func() (state.Entry, bool, error) { return s.ByOrderID(ctx, "ORD-404") },
		"ByOrderID empty":      func() (state.Entry, bool, error) { return s.ByOrderID(ctx, "") },
		"ByApprovalID missing": func() (state.Entry, bool, error) { return s.ByApprovalID(ctx, "apr-404") },
		"ByApprovalID empty":   func() (state.Entry, bool, error) { return s.ByApprovalID(ctx, "") },
	} {
		if e, ok, err := lookup(); err != nil || ok {
			t.Errorf("%s = %q, %v, %v; want not found, no error", name, e.IdempotencyKey, ok, err)
		}
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
