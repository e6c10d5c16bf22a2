package mcpserver

import "sync"

// callInFlight bounds the upstream requests one tool call keeps open at
// once, whatever the number of stores it covers: a keyring of 180 stores
// must not become 180 simultaneous requests to StoreLink, nor 180
// goroutines waiting on them.
const callInFlight = 16

// fanOut runs do(0) to do(n-1) with at most limit running at once and
// returns when all have finished. Each do writes only its own result slot.
func fanOut(n, limit int, do func(i int)) {
	if limit < 1 {
		limit = 1
	}
	sem := make(chan struct{}, limit)
	var wg sync.WaitGroup
	for i := range n {
		sem <- struct{}{}
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			do(i)
		}()
	}
	wg.Wait()
}
