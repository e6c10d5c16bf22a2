package tools

import (
	"sync"
	"sync/atomic"
)

// fanOut runs do(0) to do(n-1), at most limit at once, and returns when
// all have finished. Each do writes only its own result slot. The tools
// pass limit = n; the StoreLink budget (ADR 0024) bounds requests. The
// caller is one of the workers; the others run on callRunners.
func fanOut(n, limit int, do func(i int)) {
	limit = max(min(limit, n), 1)
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
			do(i)
		}
	}
	var wg sync.WaitGroup
	wg.Add(limit - 1)
	for range limit - 1 {
		callRunners.Go(func() { defer wg.Done(); work() })
	}
	work()
	wg.Wait()
}
