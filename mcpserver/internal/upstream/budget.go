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
// (ADR 0024). Waiters queue per caller (callerlimit.From, else the call id)
// and freed slots go to callers in turn. While another caller waits, a
// caller holding its share of the limit or more gets no further slot
// (ADR 0036); a lone caller may hold the whole limit. The limit is AIMD: a
// throttled answer halves it (min 1), each full window of served answers
// adds one (max max). Epochs make one burst of throttling halve it once.
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
	// queues holds each waiting caller's requests in order; turns is the
	// callers with a queue, in serving order.
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

// acquire waits for a slot for a request of ctx's caller (the call when no
// caller is named). It fails with errBudget (joined with ctx's error) only
// when ctx ends first.
func (b *budget) acquire(ctx context.Context, call string) (ticket, error) {
	caller := callerlimit.From(ctx)
	if caller == "" {
		caller = "call:" + call
	}
	b.mu.Lock()
	if b.inFlight < b.limit && b.queued == 0 {
		b.inFlight++
		b.held[caller]++
		t := ticket{epoch: b.epoch, caller: caller}
		b.mu.Unlock()
		return t, nil
	}
	w := &waiter{ready: make(chan struct{})}
	if len(b.queues[caller]) == 0 {
		b.turns = append(b.turns, caller)
	}
	b.queues[caller] = append(b.queues[caller], w)
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
			b.leave(caller, w)
		}
		return ticket{}, errors.Join(errBudget, ctx.Err())
	}
}

// leave takes a waiter that gave up out of its caller's queue.
func (b *budget) leave(caller string, w *waiter) {
	q := b.queues[caller]
	for i, x := range q {
		if x == w {
			q = append(q[:i], q[i+1:]...)
			b.queued--
			break
		}
	}
	if len(q) > 0 {
		b.queues[caller] = q
		return
	}
	delete(b.queues, caller)
	for i, c := range b.turns {
		if c == caller {
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

// grant admits waiters while under the limit, one request per caller in
// turn, passing over a caller at its share while another caller waits.
func (b *budget) grant() {
	for b.inFlight < b.limit && len(b.turns) > 0 {
		i := b.next()
		caller := b.turns[i]
		b.turns = append(b.turns[:i], b.turns[i+1:]...)
		q := b.queues[caller]
		w := q[0]
		if len(q) == 1 {
			delete(b.queues, caller)
		} else {
			b.queues[caller] = q[1:]
			b.turns = append(b.turns, caller)
		}
		b.queued--
		b.inFlight++
		b.held[caller]++
		w.granted, w.epoch = true, b.epoch
		close(w.ready)
	}
}

// next is the index in turns of the caller served next: the first one
// below its share, else (every waiting caller at its share) the first.
func (b *budget) next() int {
	share := b.shareOf()
	for i, caller := range b.turns {
		if b.held[caller] < share {
			return i
		}
	}
	return 0
}

// state is the budget as the gauges report it.
func (b *budget) state() (limit, inFlight, queued int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.limit, b.inFlight, b.queued
}
