package tools

import (
	"sync"
	"sync/atomic"
)

// fanOut runs do(0) to do(n-1) with at most limit running at once and
// returns when all have finished. Each do writes only its own result slot.
//
// The doors pass n: a call no longer paces its stores in waves of its own.
// What bounds the requests that reach StoreLink is the one budget per
// StoreLink, shared by every call (internal/upstream, ADR 0024), which
// paces a call's stores and takes the calls in turns.
//
// The caller is one of the workers, and every worker takes the next index
// until none is left: when each do is quick (master data already cached,
// as on most calls), the caller finishes them all before the other workers
// have started, and one store costs no goroutine at all.
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
