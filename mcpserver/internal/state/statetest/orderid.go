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
