package tools

import (
	"context"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// MaxApprovalWatchesPerSession bounds the approvals one session waits on.
// Beyond it the answer carries the link in next_step instead, as for a
// host without URL elicitation.
const MaxApprovalWatchesPerSession = 100

// approvalWatcher is the one ledger reader for every approval the sessions
// wait on (ADR 0021): each poll reads the pending approvals once, and
// reads by id only an approval that left the pending list. It runs a
// goroutine only while anything is watched.
type approvalWatcher struct {
	s *server

	mu       sync.Mutex
	byID     map[string][]*approvalWatch
	sessions map[any]int // watches per session
	running  bool
}

// approvalWatch is one session waiting on one approval.
type approvalWatch struct {
	id      string
	session any
	notify  func(ctx context.Context) error
	// until is when the watch ends regardless (real time): a minute after
	// the approval lapses.
	until time.Time
}

func newApprovalWatcher(s *server) *approvalWatcher {
	return &approvalWatcher{s: s, byID: map[string][]*approvalWatch{}, sessions: map[any]int{}}
}

// room reports whether session may start another watch.
func (w *approvalWatcher) room(session any) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.sessions[session] < MaxApprovalWatchesPerSession
}

// watch waits on the approval staged as e for session: notify runs once
// when it is settled; wait returns when the session ends. It reports false
// and watches nothing at MaxApprovalWatchesPerSession.
func (w *approvalWatcher) watch(session any, wait func(), e state.Entry, notify func(context.Context) error) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := w.sessions[session]
	if n >= MaxApprovalWatchesPerSession {
		return false
	}
	w.sessions[session] = n + 1
	if n == 0 {
		go func() {
			wait()
			w.dropSession(session)
		}()
	}
	until := time.Now().Add(e.ApprovalExpiresAt.Sub(w.s.opts.Now()) + time.Minute)
	w.byID[e.ApprovalID] = append(w.byID[e.ApprovalID], &approvalWatch{id: e.ApprovalID, session: session, notify: notify, until: until})
	if !w.running {
		w.running = true
		go w.loop()
	}
	return true
}

// dropSession ends every watch of a session that closed.
func (w *approvalWatcher) dropSession(session any) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for id, list := range w.byID {
		kept := list[:0]
		for _, a := range list {
			if a.session == session {
				w.s.log.Info("approval.watch_ended", "approval_id", id, "why", "the session closed")
				continue
			}
			kept = append(kept, a)
		}
		w.set(id, kept)
	}
	delete(w.sessions, session)
}

// set replaces the watches of id; the caller holds mu.
func (w *approvalWatcher) set(id string, list []*approvalWatch) {
	if len(list) == 0 {
		delete(w.byID, id)
		return
	}
	w.byID[id] = list
}

// remove takes out and returns the watches of id, fixing session counts.
func (w *approvalWatcher) remove(id string, match func(*approvalWatch) bool) []*approvalWatch {
	w.mu.Lock()
	defer w.mu.Unlock()
	var out, kept []*approvalWatch
	for _, a := range w.byID[id] {
		if match(a) {
			out = append(out, a)
			if w.sessions[a.session]--; w.sessions[a.session] <= 0 {
				delete(w.sessions, a.session)
			}
			continue
		}
		kept = append(kept, a)
	}
	w.set(id, kept)
	return out
}

// loop polls the ledger every ApprovalPoll while anything is watched.
func (w *approvalWatcher) loop() {
	poll := w.s.opts.Writes.ApprovalPoll
	if poll <= 0 {
		poll = DefaultApprovalPoll
	}
	t := time.NewTicker(poll)
	defer t.Stop()
	for range t.C {
		if !w.tick(context.Background()) {
			return
		}
	}
}

// tick is one poll; it reports false, and marks the loop stopped, when
// nothing is watched.
func (w *approvalWatcher) tick(ctx context.Context) bool {
	w.mu.Lock()
	if len(w.byID) == 0 {
		w.running = false
		w.mu.Unlock()
		return false
	}
	ids := make([]string, 0, len(w.byID))
	for id := range w.byID {
		ids = append(ids, id)
	}
	w.mu.Unlock()

	ledger, now := w.s.opts.Writes.Ledger, w.s.opts.Now()
	pending, err := ledger.Pending(ctx, now)
	if err != nil {
		w.s.log.Warn("approval.watch_read_failed", "err", err)
		return true
	}
	open := make(map[string]bool, len(pending))
	for _, e := range pending {
		open[e.ApprovalID] = true
	}
	wall := time.Now()
	for _, id := range ids {
		if open[id] {
			for range w.remove(id, func(a *approvalWatch) bool { return wall.After(a.until) }) {
				w.s.log.Info("approval.watch_ended", "approval_id", id, "why", "still undecided a minute after it lapsed")
			}
			continue
		}
		cur, ok, err := ledger.ByApprovalID(ctx, id)
		if err != nil {
			w.s.log.Warn("approval.watch_read_failed", "approval_id", id, "err", err)
			continue
		}
		if ok && !approvalSettled(cur, now) {
			continue // being sent
		}
		st := string(cur.State)
		if ok && cur.State == state.StatePendingApproval {
			st = "lapsed"
		}
		for _, a := range w.remove(id, func(*approvalWatch) bool { return true }) {
			if err := a.notify(ctx); err != nil {
				w.s.log.Warn("approval.complete_failed", "approval_id", id, "state", st, "err", err)
				continue
			}
			w.s.log.Info("approval.complete_sent", "approval_id", id, "state", st)
		}
	}
	return true
}
