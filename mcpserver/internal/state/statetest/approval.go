package statetest

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// approvalLifecycle: staged orders wait, oldest first, until the instant
// they expire; each is claimed or rejected once, by one person; Expire
// ends the lapsed ones; Staged lists every order ever staged.
func approvalLifecycle(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, _ := o(t)
	// "old" expires at base+1h, the others at base+4h.
	for i, k := range []string{"old", "mid", "new", "rej"} {
		e := staged(k, "sku-"+k)
		e.CreatedAt = base.Add(time.Duration(i) * time.Minute)
		if k != "old" {
			e.ApprovalExpiresAt = base.Add(4 * time.Hour)
		}
		if _, taken, err := s.Reserve(ctx, e); err != nil || !taken {
			t.Fatalf("stage %s = %v, %v", k, taken, err)
		}
	}
	if _, _, err := s.Reserve(ctx, sending("send", "sku-send")); err != nil {
		t.Fatal(err)
	}
	dup := staged("dup", "sku-dup")
	dup.ApprovalID = "apr-old"
	if _, _, err := s.Reserve(ctx, dup); err == nil {
		t.Error("two entries share one approval id")
	}
	approvalsWaitUntilExpiry(ctx, t, s)
	approvalsAreDecidedOnce(ctx, t, s)
	approvalsExpire(ctx, t, s)
}

// pendingKeys lists the keys of the approvals pending at now.
func pendingKeys(ctx context.Context, t *testing.T, s state.Store, now time.Time) []string {
	t.Helper()
	es, err := s.Pending(ctx, now)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range es {
		keys = append(keys, e.IdempotencyKey)
	}
	return keys
}

// approvalsWaitUntilExpiry: at its expiry instant an approval is no longer
// pending, and can be neither claimed nor rejected, before Expire has run.
func approvalsWaitUntilExpiry(ctx context.Context, t *testing.T, s state.Store) {
	t.Helper()
	if diff := cmp.Diff([]string{"old", "mid", "new", "rej"}, pendingKeys(ctx, t, s, base.Add(10*time.Minute))); diff != "" {
		t.Errorf("Pending, oldest first (-want +got):\n%s", diff)
	}
	exp := base.Add(time.Hour)
	if diff := cmp.Diff([]string{"mid", "new", "rej"}, pendingKeys(ctx, t, s, exp)); diff != "" {
		t.Errorf("Pending at the first expiry (-want +got):\n%s", diff)
	}
	if _, err := s.Claim(ctx, "apr-old", "Jana", exp); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("Claim at expiry: err = %v, want ErrNotPending", err)
	}
	if _, err := s.Reject(ctx, "apr-old", "Jana", exp.Add(time.Hour)); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("Reject after expiry: err = %v, want ErrNotPending", err)
	}
}

// approvalsAreDecidedOnce: the first claim or rejection stands; a claimed
// order then follows the ordinary send path.
func approvalsAreDecidedOnce(ctx context.Context, t *testing.T, s state.Store) {
	t.Helper()
	at := base.Add(20 * time.Minute)
	claimed, err := s.Claim(ctx, "apr-mid", "Jana", at)
	if err != nil || claimed.State != state.StateSending || claimed.DecidedBy != "Jana" || !claimed.UpdatedAt.Equal(at) {
		t.Fatalf("Claim = %+v, %v", claimed, err)
	}
	if _, err := s.Finish(ctx, "mid", state.StateRaised, "ORD-7", "", "", at.Add(time.Second)); err != nil {
		t.Errorf("Finish after Claim: %v", err)
	}
	rejected, err := s.Reject(ctx, "apr-rej", "Petr", at)
	if err != nil || rejected.State != state.StateRejected || rejected.DecidedBy != "Petr" {
		t.Fatalf("Reject = %+v, %v", rejected, err)
	}
	for name, err := range map[string]error{
		"second Claim":       second(s.Claim(ctx, "apr-mid", "Petr", at)),
		"second Reject":      second(s.Reject(ctx, "apr-rej", "Petr", at)),
		"Claim after Reject": second(s.Claim(ctx, "apr-rej", "Jana", at)),
	} {
		if !errors.Is(err, state.ErrNotPending) {
			t.Errorf("%s: err = %v, want ErrNotPending", name, err)
		}
	}
	if _, err := s.Claim(ctx, "apr-zzz", "Petr", at); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("unknown approval: err = %v, want ErrNotFound", err)
	}
	if _, err := s.Reject(ctx, "", "Petr", at); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("empty approval id: err = %v, want ErrNotFound", err)
	}
}

func second(_ state.Entry, err error) error { return err }

// approvalsExpire: Expire ends exactly the approvals lapsed by its time,
// once; Staged lists every staged order, decided or not, oldest first.
func approvalsExpire(ctx context.Context, t *testing.T, s state.Store) {
	t.Helper()
	exp := base.Add(time.Hour)
	if n, err := s.Expire(ctx, exp.Add(-time.Microsecond)); err != nil || n != 0 {
		t.Errorf("Expire before expiry = %d, %v", n, err)
	}
	if n, err := s.Expire(ctx, exp); err != nil || n != 1 {
		t.Errorf("Expire = %d, %v; want 1", n, err)
	}
	if e, _, _ := s.ByApprovalID(ctx, "apr-old"); e.State != state.StateExpired || !e.UpdatedAt.Equal(exp) {
		t.Errorf("apr-old is %s at %v, want expired at %v", e.State, e.UpdatedAt, exp)
	}
	if n, err := s.Expire(ctx, exp); err != nil || n != 0 {
		t.Errorf("Expire again = %d, %v; want 0", n, err)
	}
	if n, err := s.Expire(ctx, base.Add(5*time.Hour)); err != nil || n != 1 {
		t.Errorf("Expire at base+5h = %d, %v; want 1", n, err)
	}
	if keys := pendingKeys(ctx, t, s, base); len(keys) != 0 {
		t.Errorf("Pending after every decision = %v, want none", keys)
	}
	st, err := s.Staged(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var states []state.EntryState
	for _, e := range st {
		states = append(states, e.State)
	}
	if diff := cmp.Diff([]state.EntryState{state.StateExpired, state.StateRaised, state.StateExpired, state.StateRejected}, states); diff != "" {
		t.Errorf("Staged states (-want +got):\n%s", diff)
	}
}

// unclaim: an approved order StoreLink did not take waits again, undecided,
// and can be claimed again; an order never staged has no approval to
// return to.
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
	if _, err := s.Claim(ctx, "apr-k", "Petr", base.Add(time.Second)); err != nil {
		t.Fatalf("claim after unclaim: %v", err)
	}
	if _, _, err := s.Reserve(ctx, sending("plain", "2002")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Apply(ctx, "plain", state.EventUnclaim, state.Change{}, base); !errors.Is(err, state.ErrInvalidTransition) {
		t.Fatalf("unclaim of an order never staged: err = %v, want ErrInvalidTransition", err)
	}
}

// claimRace: approvers in two processes release the same staged orders at
// once; each is claimed exactly once and left sending, with its decider.
func claimRace(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	handles := []state.Store{s, reopen()}
	const approvals, perHandle = 5, 4
	for a := range approvals {
		if _, _, err := s.Reserve(ctx, staged(fmt.Sprint(a), fmt.Sprint("sku-", a))); err != nil {
			t.Fatal(err)
		}
	}
	var wins [approvals]atomic.Int32
	var wg sync.WaitGroup
	for a := range approvals {
		for i := range perHandle * len(handles) {
			wg.Go(func() {
				_, err := handles[i%len(handles)].Claim(ctx, fmt.Sprint("apr-", a), fmt.Sprintf("person-%d", i), base.Add(time.Minute))
				if err == nil {
					wins[a].Add(1)
				} else if !errors.Is(err, state.ErrNotPending) {
					t.Errorf("Claim: %v", err)
				}
			})
		}
	}
	wg.Wait()
	for a := range approvals {
		if n := wins[a].Load(); n != 1 {
			t.Errorf("apr-%d: %d claims won; want 1", a, n)
		}
		if e, _, err := handles[1].ByApprovalID(ctx, fmt.Sprint("apr-", a)); err != nil || e.State != state.StateSending || e.DecidedBy == "" {
			t.Errorf("apr-%d: state %s decided by %q (%v), want sending with a decider", a, e.State, e.DecidedBy, err)
		}
	}
}
