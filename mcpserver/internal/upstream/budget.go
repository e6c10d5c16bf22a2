package upstream

import (
	"context"
	"errors"
	"sync"

	"github.com/korral/storelink/mcpserver/internal/callerlimit"
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
//
// Callers (callerlimit.From, else the call) bound each other (ADR 0036): a
// caller below its share of the limit is served before one at its share,
// and a caller at its share gets no further place while another waits. A
// caller below its share does not take the last place of a limit over 2
// while another caller holds places: that place is the one a limit
// increase adds, the probe StoreLink may refuse, and it is left to the
// caller that holds the most. A lone caller may hold the whole limit.
type budget struct {
	max int
	// share is the fraction of the limit one caller may hold while another
	// waits, in (0, 1].
	share float64
	// changed is told every limit change; it runs under the lock and must not
	// call back.
	changed func(from, to int, why string)

	mu       sync.Mutex
	limit    int
	inFlight int
	// held is each caller's requests in flight.
	held   map[string]int
	served int    // served answers since the limit last changed
	epoch  uint64 // counts the decreases
	// queues holds each waiting call's requests in order; turns is the calls
	// with a queue, in serving order.
	queues map[string][]*waiter
	turns  []string
	queued int
}

type waiter struct {
	ready   chan struct{}
	caller  string
	granted bool
	epoch   uint64
}

// ticket is a place in the budget, given back with release.
type ticket struct {
	epoch  uint64
	caller string
}

// newBudget returns a budget of most requests; sharePercent (1 to 100, else
// callerlimit.DefaultSharePercent) is the part of it one caller may hold
// while another waits.
func newBudget(most, sharePercent int, changed func(from, to int, why string)) *budget {
	most = max(most, 1)
	if sharePercent < 1 || sharePercent > 100 {
		sharePercent = callerlimit.DefaultSharePercent
	}
	if changed == nil {
		changed = func(int, int, string) {}
	}
	return &budget{max: most, share: float64(sharePercent) / 100, limit: most, changed: changed,
		held: map[string]int{}, queues: map[string][]*waiter{}}
}

// shareOf is the most requests one caller may hold while another waits:
// its share of the current limit, rounded up, at least one.
func (b *budget) shareOf() int {
	return max(1, int(float64(b.limit)*b.share+0.999999))
}

// fits reports whether a request of caller may start now, waiters aside.
func (b *budget) fits(caller string) bool {
	if b.inFlight >= b.limit {
		return false
	}
	alone := b.inFlight == b.held[caller]
	return alone || b.limit <= 2 || b.held[caller] >= b.shareOf() || b.inFlight < b.limit-1
}

// acquire waits for a slot for a request of call, made by ctx's caller
// (the call when no caller is named). It fails with errBudget (joined with
// ctx's error) only when ctx ends first.
func (b *budget) acquire(ctx context.Context, call string) (ticket, error) {
	caller := callerlimit.From(ctx)
	if caller == "" {
		caller = "call:" + call
	}
	b.mu.Lock()
	if b.queued == 0 && b.fits(caller) {
		b.inFlight++
		b.held[caller]++
		t := ticket{epoch: b.epoch, caller: caller}
		b.mu.Unlock()
		return t, nil
	}
	w := &waiter{ready: make(chan struct{}), caller: caller}
	if len(b.queues[call]) == 0 {
		b.turns = append(b.turns, call)
	}
	b.queues[call] = append(b.queues[call], w)
	b.queued++
	b.mu.Unlock()
	select {
	case <-w.ready:
		return ticket{epoch: w.epoch, caller: caller}, nil
	case <-ctx.Done():
		b.mu.Lock()
		defer b.mu.Unlock()
		if w.granted {
			// Granted as the context ended: pass the slot on.
			b.let(caller)
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
	b.let(t.caller)
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

// let gives back one place of caller's.
func (b *budget) let(caller string) {
	b.inFlight--
	if b.held[caller]--; b.held[caller] <= 0 {
		delete(b.held, caller)
	}
}

// grant admits waiters while under the limit, one request per call in
// turn, callers below their share first.
func (b *budget) grant() {
	for b.inFlight < b.limit && len(b.turns) > 0 {
		i := b.next()
		if i < 0 {
			return
		}
		call := b.turns[i]
		b.turns = append(b.turns[:i], b.turns[i+1:]...)
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
		b.held[w.caller]++
		w.granted, w.epoch = true, b.epoch
		close(w.ready)
	}
}

// next is the index in turns of the call served next: the first whose
// caller is below its share and fits; none (-1) while such a caller waits
// for the place it may not take; else the first in turn.
func (b *budget) next() int {
	share, below := b.shareOf(), false
	for i, call := range b.turns {
		caller := b.queues[call][0].caller
		if b.held[caller] < share {
			if b.fits(caller) {
				return i
			}
			below = true
		}
	}
	if below {
		return -1
	}
	return 0
}

// state is the budget as the gauges report it.
func (b *budget) state() (limit, inFlight, queued int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit, b.inFlight, b.queued
}
