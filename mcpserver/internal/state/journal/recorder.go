package journal

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// How long the call that learnt an outcome keeps trying to record it:
// about ten seconds rides out a database restart while the agent still
// gets an answer. After that the journal drain takes over.
const (
	// FirstPause is the pause after the first failed attempt.
	FirstPause = 100 * time.Millisecond
	// MaxPause caps the pause between attempts, which doubles each time.
	MaxPause = 2 * time.Second
	// RecordBudget is the total time for all attempts.
	RecordBudget = 10 * time.Second
	// DrainEvery is how often pending lines are replayed in the background.
	DrainEvery = 5 * time.Second
	// replayBound bounds the replay run after a successful recording.
	replayBound = 5 * time.Second
)

// Backoff is the retry schedule of Recorder.Record.
type Backoff struct {
	First, Max, Budget time.Duration
}

// DefaultBackoff is FirstPause doubling up to MaxPause, for RecordBudget.
var DefaultBackoff = Backoff{First: FirstPause, Max: MaxPause, Budget: RecordBudget}

// Recorder records send outcomes: the line is appended to the journal,
// then the ledger is tried with backoff, then drained in the background.
type Recorder struct {
	Ledger state.Ledger
	// Journal may be nil: outcomes are then only retried, not kept.
	Journal *File
	// Confirm reads back accepted orders a replay found in the journal
	// (lines this process wrote excepted). Nil leaves them unconfirmed.
	// Set it before the first Record or Replay.
	Confirm Confirmer
	Log     *slog.Logger
	// Backoff and DrainEvery default to DefaultBackoff and DrainEvery.
	Backoff    Backoff
	DrainEvery time.Duration
	// Now stamps the ledger's updates; nil is time.Now.
	Now func() time.Time

	mu       sync.Mutex
	draining bool
	closed   bool
	stop     chan struct{}
	wg       sync.WaitGroup
}

// Result says how far an outcome got.
type Result struct {
	// Recorded: the ledger holds the outcome.
	Recorded bool
	// Journaled: the journal holds the line, to be recorded later.
	Journaled bool
	// Conflict is set when the ledger holds another outcome; nothing was
	// overwritten.
	Conflict string
	// Err is the ledger's last error when the outcome is not recorded.
	Err error
}

func (r *Recorder) log() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}

func (r *Recorder) now() time.Time {
	if r.Now == nil {
		return time.Now()
	}
	return r.Now()
}

// Record keeps l in the journal, then records it in the ledger within the
// Backoff's budget. ctx should outlive the caller's request.
func (r *Recorder) Record(ctx context.Context, l Line) Result {
	log, id := r.log(), callid.From(ctx)
	var res Result
	if r.Journal != nil {
		if err := r.Journal.Append(l); err != nil {
			log.ErrorContext(ctx, "journal.append_failed", "call_id", id, "idempotency_key", l.IdempotencyKey,
				"order_id", l.OrderID, "event", string(l.Event), "error", err.Error())
		} else {
			res.Journaled = true
		}
	}
	b := r.Backoff
	if b.Budget <= 0 {
		b = DefaultBackoff
	}
	pause, deadline := b.First, time.Now().Add(b.Budget)
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithDeadline(ctx, deadline)
		v, reason, err := Settle(actx, r.Ledger, l, r.now())
		cancel()
		switch v {
		case Recorded, Settled:
			res.Recorded, res.Err = true, nil
			if attempt > 1 {
				log.InfoContext(ctx, "ledger.recorded_late", "call_id", id, "idempotency_key", l.IdempotencyKey,
					"order_id", l.OrderID, "event", string(l.Event), "attempts", attempt)
			}
			r.replayAfter(ctx)
			return res
		case Conflict:
			res.Conflict = reason
			log.ErrorContext(ctx, "journal.conflict", "call_id", id, "idempotency_key", l.IdempotencyKey,
				"order_id", l.OrderID, "event", string(l.Event), "reason", reason)
			return res
		}
		// A budget cut-off says less than the failure before it.
		if res.Err == nil || !errors.Is(err, context.DeadlineExceeded) {
			res.Err = err
		}
		if time.Now().Add(pause).After(deadline) {
			break
		}
		log.WarnContext(ctx, "ledger.record_retry", "call_id", id, "idempotency_key", l.IdempotencyKey,
			"order_id", l.OrderID, "event", string(l.Event), "attempt", attempt, "pause_ms", pause.Milliseconds(), "error", errText(err))
		time.Sleep(pause)
		pause = min(2*pause, b.Max)
	}
	path := ""
	if res.Journaled {
		path = r.Journal.Path()
		r.startDrain()
	}
	log.ErrorContext(ctx, "ledger.record_pending", "call_id", id, "idempotency_key", l.IdempotencyKey,
		"order_id", l.OrderID, "event", string(l.Event), "journal", path, "error", errText(res.Err))
	return res
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// replayAfter replays the journal after a successful recording: the ledger
// is back, so pending lines are taken now.
func (r *Recorder) replayAfter(ctx context.Context) {
	if r.Journal == nil {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, replayBound)
	defer cancel()
	rep, ran, err := r.Journal.TryReplay(ctx, r.Ledger, r.Confirm, r.now())
	if ran {
		r.logReplay(ctx, rep, err)
	}
}

// Replay replays the journal now (at start-up), logs what it found, and
// drains in the background if lines are left pending.
func (r *Recorder) Replay(ctx context.Context) (Report, error) {
	if r.Journal == nil {
		return Report{}, nil
	}
	rep, err := r.Journal.Replay(ctx, r.Ledger, r.Confirm, r.now())
	r.logReplay(ctx, rep, err)
	if err == nil && r.waiting(rep) {
		r.startDrain()
	}
	return rep, err
}

// logReplay logs a replay that found anything but settled lines.
func (r *Recorder) logReplay(ctx context.Context, rep Report, err error) {
	log := r.log()
	if err != nil {
		log.ErrorContext(ctx, "journal.replay_failed", "journal", rep.Path, "error", err.Error())
		return
	}
	for _, p := range rep.Conflicts {
		log.ErrorContext(ctx, "journal.conflict", "journal", rep.Path, "line", p.Number, "idempotency_key", p.Line.IdempotencyKey,
			"order_id", p.Line.OrderID, "event", string(p.Line.Event), "reason", p.Reason)
	}
	for _, p := range rep.Unreadable {
		log.ErrorContext(ctx, "journal.unreadable", "journal", rep.Path, "line", p.Number, "reason", p.Reason)
	}
	if rep.Recorded > 0 || len(rep.Pending) > 0 || len(rep.Unconfirmed) > 0 {
		log.InfoContext(ctx, "journal.replayed", "journal", rep.Path, "recorded", rep.Recorded,
			"pending", len(rep.Pending), "error", errText(rep.Cause),
			"unconfirmed", len(rep.Unconfirmed), "confirm_error", errText(rep.ConfirmCause))
	}
}

// waiting reports whether a later replay may settle the leftover lines by
// itself.
func (r *Recorder) waiting(rep Report) bool {
	return len(rep.Pending) > 0 || (len(rep.Unconfirmed) > 0 && r.Confirm != nil)
}

// startDrain replays the journal every DrainEvery until no line is pending
// or unconfirmed, or the recorder is closed.
func (r *Recorder) startDrain() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.draining || r.closed || r.Journal == nil {
		return
	}
	if r.stop == nil {
		r.stop = make(chan struct{})
	}
	every := r.DrainEvery
	if every <= 0 {
		every = DrainEvery
	}
	r.draining = true
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-r.stop:
				return
			case <-t.C:
			}
			ctx, cancel := context.WithTimeout(context.Background(), every+replayBound)
			rep, err := r.Journal.Replay(ctx, r.Ledger, r.Confirm, r.now())
			cancel()
			r.logReplay(context.Background(), rep, err)
			if err == nil && !r.waiting(rep) {
				r.mu.Lock()
				r.draining = false
				r.mu.Unlock()
				return
			}
		}
	}()
}

// Close stops the background drain. Pending lines stay for the next start.
func (r *Recorder) Close() error {
	r.mu.Lock()
	stop := r.stop
	if r.closed {
		stop = nil
	}
	r.closed = true
	r.mu.Unlock()
	if stop != nil {
		close(stop)
	}
	r.wg.Wait()
	return nil
}
