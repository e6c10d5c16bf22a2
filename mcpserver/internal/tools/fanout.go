package tools

import (
	"sync"
	"sync/atomic"
)

// fanOut runs do(0) to do(n-1) with at most limit running at once and
// returns when all have finished. Each do writes only its own result slot.
//
// The tools pass limit = n: the requests that reach StoreLink are bounded by
// the one budget per StoreLink in internal/upstream (ADR 0024), not here.
//
// The caller is one of the workers, so when each do is quick (master data
// already cached) it often finishes them all before another goroutine
// starts.
func fanOut(n, limit int, do func(i int)) {
	limit = max(min(limit, n), 1)
	var next atomic.Int64
	work := func() {
		for i := int(next.Add(1)) - 1; i < n; i = int(next.Add(1)) - 1 {
			do(i)
		}
	}
	var wg sync.WaitGroup
	for range limit - 1 {
		wg.Go(work)
	}
	work()
	wg.Wait()
}
