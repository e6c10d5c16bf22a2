package upstream

import (
	"context"
	"errors"
	"sync"
)

// DefaultMaxInFlight is the most StoreLink requests one replica keeps open
// at once, across every call (ADR 0024). Sixty-four lets a 20-store risk
// check go out in one round trip with master data warm (40 requests: stock
// and sales) and in two cold (61, then the supplier), and a 180-store
// sweep in 6 (warm) to 9 (cold); ten replicas stay at 640 open requests,
// and StoreLink's 429s shrink it further.
const DefaultMaxInFlight = 64

// errBudget is a request given up while it waited for a place in the
// budget: nothing was sent.
var errBudget = errors.New("gave up waiting for a place among the requests open to StoreLink; nothing was sent")

// signal is what one request's outcome says about StoreLink's capacity.
type signal int

const (
	// neutral: a transport error or a failure the breaker judges; it says
	// nothing about load.
	neutral signal = iota
	// served: StoreLink answered, whatever it answered (2xx, 4xx other
	// than 429).
	served
	// throttled: a 429, or a 503 with Retry-After: StoreLink asks for less.
	throttled
)

// budget is the one concurrency budget of a StoreLink, shared by every
// call of the replica (ADR 0024). Waiting requests queue per call id and a
// freed place goes to the calls in turn, so a large check cannot hold up a
// small one behind all its requests. The limit adapts (additive increase,
// multiplicative decrease): a throttled answer halves it, never below 1;
// each full window of served answers adds one, never above max. Requests
// admitted before the last decrease carry an older epoch, so one burst of
// throttling halves the limit once.
type budget struct {
	max int
	// changed is told every change of the limit (for the log and the
	// metrics); it runs under the lock and must not call back.
	changed func(from, to int, why string)

	mu       sync.Mutex
	limit    int
	inFlight int
	served   int    // served answers since the limit last changed
	epoch    uint64 // counts the decreases
	// queues holds each waiting call's requests in arrival order; turns
	// is the calls with a queue, in the order they are served.
	queues map[string][]*waiter
	turns  []string
	queued int
}

type waiter struct {
	ready   chan struct{}
	granted bool
	epoch   uint64
}

// ticket is a place in the budget, given back with release.
type ticket struct{ epoch uint64 }

func newBudget(most int, changed func(from, to int, why string)) *budget {
	most = max(most, 1)
	if changed == nil {
		changed = func(int, int, string) {}
	}
	return &budget{max: most, limit: most, changed: changed, queues: map[string][]*waiter{}}
}

// acquire waits for a place for a request of the call named by call. It
// fails with errBudget (joined with the context's error) only when ctx
// ends first.
func (b *budget) acquire(ctx context.Context, call string) (ticket, error) {
	b.mu.Lock()
	if b.inFlight < b.limit && b.queued == 0 {
		b.inFlight++
		t := ticket{epoch: b.epoch}
		b.mu.Unlock()
		return t, nil
	}
	w := &waiter{ready: make(chan struct{})}
	if len(b.queues[call]) == 0 {
		b.turns = append(b.turns, call)
	}
	b.queues[call] = append(b.queues[call], w)
	b.queued++
	b.mu.Unlock()
	select {
	case <-w.ready:
		return ticket{epoch: w.epoch}, nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		if w.granted {
			// Granted as the context ended: the place passes on.
			b.inFlight--
			b.grant()
		} else {
			b.leave(call, w)
		}
		return ticket{}, errors.Join(errBudget, ctx.Err())
	}
}

// leave takes a waiter that gave up out of its call's queue.
func (b *budget) leave(call string, w *waiter) {
	q := b.queues[call]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			b.queued--
			break
		}
	}
	if len(q) > 0 {
		b.queues[call] = q
		return
	}
	delete(b.queues, call)
	for i, c := range b.turns {
		if c == call {
			b.turns = append(b.turns[:i], b.turns[i+1:]...)
			break
		}
	}
}

// release gives the place back with what its answer said.
func (b *budget) release(t ticket, s signal) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inFlight--
	switch s {
	case throttled:
		if t.epoch == b.epoch {
			b.epoch++
			b.setLimit(max(b.limit/2, 1), "throttled")
		}
	case served:
		b.served++
		if b.served >= b.limit && b.limit < b.max {
			b.setLimit(b.limit+1, "served")
		}
	}
	b.grant()
}

// setLimit changes the limit and starts a new window. Requests in flight
// beyond a lowered limit finish; no new one starts until the count is
// under it again.
func (b *budget) setLimit(to int, why string) {
	from := b.limit
	b.limit, b.served = to, 0
	if from != to {
		b.changed(from, to, why)
	}
}

// grant admits waiters while there is room: the call whose turn it is
// gets its oldest request in, then goes to the back of the turns.
func (b *budget) grant() {
	for b.inFlight < b.limit && len(b.turns) > 0 {
		call := b.turns[0]
		b.turns = b.turns[1:]
		q := b.queues[call]
		w := q[0]
		if len(q) == 1 {
			delete(b.queues, call)
		} else {
			b.queues[call] = q[1:]
			b.turns = append(b.turns, call)
		}
		b.queued--
		b.inFlight++
		w.granted, w.epoch = true, b.epoch
		close(w.ready)
	}
}

// state is the budget as the gauges report it.
func (b *budget) state() (limit, inFlight, queued int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit, b.inFlight, b.queued
}
