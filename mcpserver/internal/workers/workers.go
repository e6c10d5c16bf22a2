// Package workers runs functions on goroutines that outlive them. A
// goroutine that serves a tool call or reads from StoreLink grows its stack
// several times over (the HTTP client, the JSON decode, SQLite); a new
// goroutine per call copies its stack at each growth, every call, where a
// worker keeps the grown stack for the next function. The collector still
// shrinks a stack that stays mostly unused.
package workers

import (
	"sync/atomic"
	"time"
)

// idleFor is how long an idle worker waits for more work before it exits.
const idleFor = time.Minute

// MaxIdle is how many idle workers a pool keeps; a worker finishing its
// function beyond them exits, so a burst (a 180-store sweep) leaves no
// more than this many stacks behind.
const MaxIdle = 64

// Pool is a set of workers; the zero value is not usable (New).
type Pool struct {
	// work hands a function to an idle worker; unbuffered, so a send
	// succeeds only when one is waiting.
	work chan func()
	// idle counts the workers waiting for work.
	idle atomic.Int64
}

// New returns an empty pool; workers start as they are needed and exit
// after a minute without work.
func New() *Pool { return &Pool{work: make(chan func())} }

// Go calls f on an idle worker, or on a new one when none is idle. It does
// not wait for f. A panic in f ends the program, as in a goroutine.
func (p *Pool) Go(f func()) {
	select {
	case p.work <- f:
	default:
		go p.serve(f)
	}
}

// Do calls f on a worker and waits for it to return. A panic in f is
// raised again in Do's caller, as if f had run there.
func (p *Pool) Do(f func()) {
	done := make(chan any, 1)
	p.Go(func() {
		defer func() { done <- recover() }()
		f()
	})
	if r := <-done; r != nil {
		panic(r)
	}
}

// serve calls f, then each function it is handed, until it has been idle
// for idleFor or MaxIdle others are idle.
func (p *Pool) serve(f func()) {
	idle := time.NewTimer(idleFor)
	defer idle.Stop()
	for {
		f()
		if p.idle.Add(1) > MaxIdle {
			p.idle.Add(-1)
			return
		}
		idle.Reset(idleFor)
		select {
		case f = <-p.work:
			p.idle.Add(-1)
		case <-idle.C:
			p.idle.Add(-1)
			return
		}
	}
}
