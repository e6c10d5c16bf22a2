package upstream

import (
	"context"
	"errors"
	"sync"
)

// DefaultMaxInFlight is the most StoreLink requests one replica keeps open
// at once (ADR 0024).
const DefaultMaxInFlight = 64

// errBudget is a request given up while waiting for the budget; nothing
// was sent.
var errBudget = errors.New("gave up waiting for a place among the requests open to StoreLink; nothing was sent")

// signal is what one request's outcome says about StoreLink's capacity.
type signal int

const (
	// neutral: a transport error or breaker failure; says nothing about load.
	neutral signal = iota
	// served: StoreLink answered (2xx, or 4xx other than 429).
	served
	// throttled: a 429, or a 503 with Retry-After: StoreLink asks for less.
	throttled
)

// budget is the concurrency budget for StoreLink shared by the replica
// (ADR 0024). Waiters queue per call id and freed slots go to calls in
// turn. The limit is AIMD: a throttled answer halves it (min 1), each full
// window of served answers adds one (max max). Epochs make one burst of
// throttling halve it once.
type budget struct {
	max int
	// changed is told every limit change; it runs under the lock and must not
	// call back.
	changed func(from, to int, why string)

	mu       sync.Mutex
	limit    int
	inFlight int
	served   int    // served answers since the limit last changed
	epoch    uint64 // counts the decreases
	// queues holds each waiting call's requests in order; turns is the calls
	// with a queue, in serving order.
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

// acquire waits for a slot for a request of call. It fails with errBudget
// (joined with ctx's error) only when ctx ends first.
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
			// Granted as the context ended: pass the slot on.
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

// setLimit changes the limit and starts a new window. Requests beyond a
// lowered limit finish; none starts until under it again.
func (b *budget) setLimit(to int, why string) {
	from := b.limit
	b.limit, b.served = to, 0
	if from != to {
		b.changed(from, to, why)
	}
}

// grant admits waiters while under the limit, one request per call in turn.
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
