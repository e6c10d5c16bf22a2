package notify

// The background queue: Staged never waits, a full queue drops with a
// warning, and Close drains or gives up at its deadline.

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestStagedNeverWaitsForTheReceiver(t *testing.T) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, func(o *Options) { o.AttemptTimeout = time.Minute })
	t.Cleanup(func() { closeOnce(release) }) // runs before start's Close
	// The receiver hangs on every request until released; staging must not wait.
	done := make(chan struct{})
	go func() {
		n.Staged(butter("apr-1"))
		n.Staged(butter("apr-2"))
		n.Staged(butter("apr-3"))
		close(done)
	}()
	wait(t, done, "return from Staged while the receiver hangs")
	wait(t, entered, "request at the receiver")
	closeOnce(release)
	closeNow(t, n)
	if got := rc.ids(); !slices.Equal(got, []string{"apr-1", "apr-2", "apr-3"}) {
		t.Errorf("received %v", got)
	}
	if len(l.lines(t, "approval.webhook_sent")) != 3 {
		t.Errorf("logs:\n%s", l)
	}
}

func TestFullQueueDropsWithAWarning(t *testing.T) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, func(o *Options) { o.QueueSize = 1; o.AttemptTimeout = time.Minute })
	t.Cleanup(func() { closeOnce(release) })
	n.Staged(butter("apr-1"))
	wait(t, entered, "request at the receiver")
	done := make(chan struct{})
	go func() {
		n.Staged(butter("apr-2")) // waits in the queue
		n.Staged(butter("apr-3")) // finds it full
		close(done)
	}()
	wait(t, done, "return from Staged with a full queue")
	closeOnce(release)
	closeNow(t, n)
	if got := rc.ids(); !slices.Equal(got, []string{"apr-1", "apr-2"}) {
		t.Errorf("received %v", got)
	}
	l.wantOne(t, "approval.webhook_dropped", map[string]any{"approval_id": "apr-3", "reason": "queue_full", "level": "WARN"})
}

func TestCloseDrainsTheQueue(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 2 {
			w.WriteHeader(http.StatusInternalServerError) // a retry is part of the drain
		}
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, nil)
	for _, id := range []string{"apr-1", "apr-2", "apr-3", "apr-4"} {
		n.Staged(butter(id))
	}
	closeNow(t, n)
	if got := rc.ids(); !slices.Equal(got, []string{"apr-1", "apr-2", "apr-2", "apr-3", "apr-4"}) {
		t.Errorf("received %v before Close returned", got)
	}
	if got := len(l.lines(t, "approval.webhook_sent")); got != 4 {
		t.Errorf("%d sent lines, want 4", got)
	}
	// Closed: a late notice is dropped, not lost silently; Close again is a no-op.
	n.Staged(butter("apr-5"))
	l.wantOne(t, "approval.webhook_dropped", map[string]any{"approval_id": "apr-5", "reason": "closed"})
	if err := n.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseGivesUpAtTheDeadline(t *testing.T) {
	entered := make(chan struct{}, 10)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-r.Context().Done()
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, func(o *Options) { o.AttemptTimeout = time.Hour })
	n.Staged(butter("apr-1"))
	n.Staged(butter("apr-2"))
	wait(t, entered, "request at the receiver")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close past its deadline = %v, want context.Canceled", err)
	}
	f := l.lines(t, "approval.webhook_failed")
	if len(f) != 2 || f[0]["reason"] != "shutdown" || f[1]["reason"] != "shutdown" || f[1]["approval_id"] != "apr-2" {
		t.Errorf("every abandoned notice ends in a failed line: %v", f)
	}
}

func TestNilNotifierAndBadOptions(t *testing.T) {
	var n *Notifier
	n.Staged(butter(approvalID))
	if err := n.Close(context.Background()); err != nil {
		t.Errorf("nil Close: %v", err)
	}
	for _, o := range []Options{
		{URL: "", Secret: []byte(secret)},
		{URL: "ftp://hooks.example/x", Secret: []byte(secret)},
		{URL: "https://hooks.example/" + pathSecret + "%zz", Secret: []byte(secret)},
		{URL: "https://hooks.example/x"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%q) accepted", o.URL)
		} else if strings.Contains(err.Error(), pathSecret) {
			t.Errorf("New's error shows the URL: %v", err)
		}
	}
}
