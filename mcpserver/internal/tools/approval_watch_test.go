package tools

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// countingLedger answers Pending with its pending entries and
// ByApprovalID from its decided ones, and counts both reads.
type countingLedger struct {
	state.Ledger
	mu      sync.Mutex
	pending map[string]state.Entry
	decided map[string]state.Entry
	lists   atomic.Int64
	byID    atomic.Int64
}

func (l *countingLedger) Pending(context.Context, time.Time) ([]state.Entry, error) {
	l.lists.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]state.Entry, 0, len(l.pending))
	for _, e := range l.pending {
		out = append(out, e)
	}
	return out, nil
}

func (l *countingLedger) ByApprovalID(_ context.Context, id string) (state.Entry, bool, error) {
	l.byID.Add(1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if e, ok := l.decided[id]; ok {
		return e, true, nil
	}
	e, ok := l.pending[id]
	return e, ok, nil
}

func (l *countingLedger) decide(id string, s state.EntryState) {
	l.mu.Lock()
	defer l.mu.Unlock()
	e := l.pending[id]
	delete(l.pending, id)
	e.State = s
	l.decided[id] = e
}

// watcherWith is a watcher over n pending approvals, each watched by one
// of sessions, whose completions are counted per approval.
func watcherWith(t *testing.T, n, sessions int) (*approvalWatcher, *countingLedger, *sync.Map, func()) {
	t.Helper()
	l := &countingLedger{pending: map[string]state.Entry{}, decided: map[string]state.Entry{}}
	// An hour's poll: the test drives the ticks itself.
	s := newServer(Options{Writes: &WriteOptions{Ledger: l, ApprovalPoll: time.Hour}, Now: func() time.Time { return testNow }})
	w := s.approvals
	done := make(chan struct{})
	var completed sync.Map
	for i := range n {
		e := state.Entry{ApprovalID: fmt.Sprintf("apr-%05d", i), State: state.StatePendingApproval, ApprovalExpiresAt: testNow.Add(time.Hour)}
		l.pending[e.ApprovalID] = e
		if !w.watch(i%sessions, func() { <-done }, e, func(context.Context) error {
			v, _ := completed.LoadOrStore(e.ApprovalID, new(atomic.Int64))
			v.(*atomic.Int64).Add(1)
			return nil
		}) {
			t.Fatalf("watch %d of %d refused", i, n)
		}
	}
	return w, l, &completed, func() { close(done) }
}

// The watcher's reads per poll stay flat: one read of the pending list,
// and one by id per approval that left it.
func TestApprovalWatchReadsAreFlat(t *testing.T) {
	for _, n := range []int{1, 3000} {
		w, l, completed, stop := watcherWith(t, n, 30)
		const ticks = 5
		for range ticks {
			w.tick(context.Background())
		}
		if lists, byID := l.lists.Load(), l.byID.Load(); lists != ticks || byID != 0 {
			t.Errorf("%d pending: %d list reads and %d reads by id in %d polls; want %d and 0", n, lists, byID, ticks, ticks)
		}
		// One decision: one read by id, one completion, and the watch ends.
		l.decide("apr-00000", state.StateRejected)
		w.tick(context.Background())
		w.tick(context.Background())
		if byID := l.byID.Load(); byID != 1 {
			t.Errorf("%d pending, one decided: %d reads by id, want 1", n, byID)
		}
		if v, ok := completed.Load("apr-00000"); !ok || v.(*atomic.Int64).Load() != 1 {
			t.Errorf("%d pending: the decided approval was not completed exactly once", n)
		}
		stop()
	}
}

// A session watches at most MaxApprovalWatchesPerSession approvals; a
// closed session's watches end, and an idle watcher stops polling.
func TestApprovalWatchCapAndSessionEnd(t *testing.T) {
	w, l, _, stop := watcherWith(t, MaxApprovalWatchesPerSession, 1)
	if w.room(0) || !w.room(1) {
		t.Errorf("room: session 0 %v (at the cap), session 1 %v", w.room(0), w.room(1))
	}
	e := state.Entry{ApprovalID: "apr-over", ApprovalExpiresAt: testNow.Add(time.Hour)}
	if w.watch(0, func() {}, e, func(context.Context) error { return nil }) {
		t.Error("a watch beyond the cap was taken")
	}
	stop()
	deadline := time.Now().Add(5 * time.Second)
	for w.room(0) == false && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	w.mu.Lock()
	left := len(w.byID)
	w.mu.Unlock()
	if left != 0 {
		t.Fatalf("%d approvals still watched after the session closed", left)
	}
	if w.tick(context.Background()) {
		t.Error("the watcher polls with nothing to watch")
	}
	if l.lists.Load() != 0 {
		t.Errorf("%d list reads with nothing left to watch", l.lists.Load())
	}
}
