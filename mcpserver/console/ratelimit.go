package console

import (
	"sync"
	"time"
)

// loginLimiter counts failed logins per key (an approver name, a client
// address) in a sliding window. Once a key holds limit failures inside the
// window, logins under it are refused without asking the backend, which
// also spares the slow verifier. A refused attempt does not count, so the
// lockout ends window after the failures that caused it.
type loginLimiter struct {
	mu     sync.Mutex
	limit  int
	window time.Duration
	fails  map[string][]time.Time
}

// maxLimiterKeys bounds the limiter's memory. One address adds at most
// limit name keys per window, so only a spread-out flood reaches it; then
// the keys without a recent failure are swept.
const maxLimiterKeys = 10000

func newLoginLimiter(limit int, window time.Duration) *loginLimiter {
	return &loginLimiter{limit: limit, window: window, fails: make(map[string][]time.Time)}
}

// recent drops key's failures older than the window and returns the rest.
// The caller holds mu.
func (l *loginLimiter) recent(key string, now time.Time) []time.Time {
	f := l.fails[key]
	i := 0
	for i < len(f) && !f[i].After(now.Add(-l.window)) {
		i++
	}
	f = f[i:]
	if len(f) == 0 {
		delete(l.fails, key)
		return nil
	}
	l.fails[key] = f
	return f
}

// blocked reports whether any key has used up its failures, and until when.
func (l *loginLimiter) blocked(now time.Time, keys ...string) (time.Time, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var until time.Time
	for _, k := range keys {
		f := l.recent(k, now)
		if len(f) < l.limit {
			continue
		}
		// The key opens again when the failure that filled it leaves the
		// window.
		if t := f[len(f)-l.limit].Add(l.window); t.After(until) {
			until = t
		}
	}
	return until, !until.IsZero()
}

// fail records a failed login under every key.
func (l *loginLimiter) fail(now time.Time, keys ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.fails) >= maxLimiterKeys {
		for k := range l.fails {
			l.recent(k, now)
		}
	}
	for _, k := range keys {
		l.fails[k] = append(l.recent(k, now), now)
	}
}

// reset forgets key's failures, after a successful login under it.
func (l *loginLimiter) reset(key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.fails, key)
}
