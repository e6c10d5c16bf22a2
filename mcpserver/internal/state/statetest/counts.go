package statetest

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// countEntries: the metrics' one query counts every state, and tells the
// approvals that lapsed unmarked from the pending ones and the soonest
// expiry of those.
func countEntries(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	c, ok := s.(state.Counter)
	if !ok {
		t.Fatalf("%T does not count its entries", s)
	}
	empty, err := c.CountEntries(ctx, base)
	if err != nil || len(empty.ByState) != 0 || !empty.NextExpiry.IsZero() {
		t.Fatalf("empty ledger: %+v, %v", empty, err)
	}
	for i, st := range []state.EntryState{state.StateRaised, state.StateUnknown, state.StateExpired, state.StatePendingApproval} {
		reach(ctx, t, s, "k-count-"+string(st), "SKU-C"+string(rune('0'+i)), st)
	}
	// A second pending entry that lapses sooner, and one already past its
	// expiry that Expire has not moved.
	soon := staged("k-count-soon", "SKU-C8")
	soon.ApprovalExpiresAt = base.Add(30 * time.Minute)
	late := staged("k-count-late", "SKU-C9")
	late.ApprovalExpiresAt = base.Add(-time.Minute)
	for _, e := range []state.Entry{soon, late} {
		if _, _, err := s.Reserve(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	got, err := c.CountEntries(ctx, base)
	if err != nil {
		t.Fatal(err)
	}
	want := state.LedgerCounts{
		ByState: map[state.EntryState]int64{state.StateRaised: 1, state.StateUnknown: 1, state.StateExpired: 1, state.StatePendingApproval: 3},
		// The pending entry reach made expires at base+1h.
		PendingLapsed: 1, NextExpiry: base.Add(30 * time.Minute).UTC(),
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("CountEntries (-want +got):\n%s", diff)
	}
}
