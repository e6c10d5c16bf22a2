// Package callerlimit bounds what one caller of the tools may ask for: a
// token bucket of tool calls per caller (golang.org/x/time/rate), and the
// caller's name in the context, which the StoreLink budget reads to bound
// the caller's share of it (ADR 0036).
package callerlimit

import (
	"context"
	"math"
	"sync"
	"time"

	"golang.org/x/time/rate"
)

// Defaults of the settings of the calls a minute (0: no limit), the burst
// and the share of the StoreLink budget (ADR 0036).
const (
	DefaultCallsPerMinute = 0
	DefaultBurst          = 20
	DefaultSharePercent   = 50
)

// Limits are the settings of a Limiter.
type Limits struct {
	// CallsPerMinute refills each caller's bucket; 0 turns the limit off.
	CallsPerMinute int
	// Burst is the bucket's size: calls a caller may make at once after a
	// quiet spell; at least 1.
	Burst int
	// Now is the clock; nil means time.Now.
	Now func() time.Time
}

// Limiter holds one token bucket per caller. A bucket idle long enough to
// be full again is dropped: a new one starts full, so dropping it changes
// nothing for its caller.
type Limiter struct {
	limits Limits
	now    func() time.Time

	mu      sync.Mutex
	buckets map[string]*bucket
	// sweepAt is when the idle buckets are next dropped.
	sweepAt time.Time
}

type bucket struct {
	lim  *rate.Limiter
	last time.Time
}

// New returns a Limiter for limits, or nil when limits turn it off.
func New(limits Limits) *Limiter {
	if limits.CallsPerMinute <= 0 {
		return nil
	}
	now := limits.Now
	if now == nil {
		now = time.Now
	}
	limits.Burst = max(limits.Burst, 1)
	return &Limiter{limits: limits, now: now, buckets: map[string]*bucket{}}
}

// refill is how long an empty bucket takes to fill.
func (l *Limiter) refill() time.Duration {
	return time.Duration(float64(l.limits.Burst) * float64(time.Minute) / float64(l.limits.CallsPerMinute))
}

// Allow takes one call from caller's bucket. When the bucket is empty it
// takes nothing and returns false with the time until a call is allowed.
// A nil Limiter allows everything.
func (l *Limiter) Allow(caller string) (bool, time.Duration) {
	if l == nil {
		return true, 0
	}
	now := l.now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if now.After(l.sweepAt) {
		l.dropIdle(now)
	}
	b := l.buckets[caller]
	if b == nil {
		b = &bucket{lim: rate.NewLimiter(rate.Limit(float64(l.limits.CallsPerMinute)/60), l.limits.Burst)}
		l.buckets[caller] = b
	}
	b.last = now
	r := b.lim.ReserveN(now, 1)
	if wait := r.DelayFrom(now); wait > 0 {
		r.CancelAt(now)
		return false, wait
	}
	return true, 0
}

// dropIdle forgets the buckets that are full again.
func (l *Limiter) dropIdle(now time.Time) {
	full := l.refill()
	for k, b := range l.buckets {
		if now.Sub(b.last) >= full {
			delete(l.buckets, k)
		}
	}
	l.sweepAt = now.Add(full)
}

// Callers is the number of buckets held: callers seen within a refill.
func (l *Limiter) Callers() int {
	if l == nil {
		return 0
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.buckets)
}

// RetryAfterSeconds is wait in whole seconds, rounded up, at least 1: what
// an answer's retry_after_seconds says.
func RetryAfterSeconds(wait time.Duration) int {
	return max(1, int(math.Ceil(wait.Seconds())))
}

type ctxKey struct{}

// With returns a context that names the caller of the call it carries.
func With(ctx context.Context, caller string) context.Context {
	return context.WithValue(ctx, ctxKey{}, caller)
}

// From returns the caller named in ctx, or "".
func From(ctx context.Context) string {
	c, _ := ctx.Value(ctxKey{}).(string)
	return c
}
