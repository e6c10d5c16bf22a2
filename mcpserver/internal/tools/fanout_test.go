package tools

import (
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFanOutRunsEachIndexOnceWithinTheLimit: every index is done exactly
// once, never more than limit at a time, and fanOut returns only after all.
func TestFanOutRunsEachIndexOnceWithinTheLimit(t *testing.T) {
	for _, c := range []struct{ n, limit int }{{0, 4}, {1, 4}, {3, 16}, {50, 4}, {7, 1}, {5, 0}} {
		var mu sync.Mutex
		seen := make([]int, c.n)
		var inFlight, most atomic.Int64
		fanOut(c.n, c.limit, func(i int) {
			now := inFlight.Add(1)
			for m := most.Load(); now > m && !most.CompareAndSwap(m, now); m = most.Load() {
			}
			runtime.Gosched()
			mu.Lock()
			seen[i]++
			mu.Unlock()
			inFlight.Add(-1)
		})
		for i, k := range seen {
			if k != 1 {
				t.Errorf("n=%d limit=%d: index %d done %d times", c.n, c.limit, i, k)
			}
		}
		if lim := int64(max(c.limit, 1)); most.Load() > lim {
			t.Errorf("n=%d limit=%d: %d at once", c.n, c.limit, most.Load())
		}
		if inFlight.Load() != 0 {
			t.Errorf("n=%d limit=%d: returned with %d still running", c.n, c.limit, inFlight.Load())
		}
	}
}
