package workers

import (
	"runtime"
	"sync"
	"testing"
	"time"
)

// Calls one after another reuse one worker instead of starting a goroutine
// each.
func TestSequentialCallsReuseOneWorker(t *testing.T) {
	p := New()
	p.Do(func() {})
	before := runtime.NumGoroutine()
	ran := 0
	for range 100 {
		p.Do(func() { ran++ })
	}
	if ran != 100 {
		t.Fatalf("ran %d of 100 functions", ran)
	}
	if after := runtime.NumGoroutine(); after > before+2 {
		t.Errorf("100 sequential calls left %d goroutines, %d before: workers are not reused", after, before)
	}
}

// Functions handed over while every worker is busy run at once on new
// workers: none waits for another.
func TestBusyWorkersDoNotQueueWork(t *testing.T) {
	p := New()
	const n = 8
	var started, release sync.WaitGroup
	started.Add(n)
	release.Add(1)
	var finished sync.WaitGroup
	finished.Add(n)
	for range n {
		p.Go(func() {
			defer finished.Done()
			started.Done()
			release.Wait()
		})
	}
	// Each function waits here until all n run at once; queued work would
	// deadlock (the test's own time-out reports it).
	started.Wait()
	release.Done()
	finished.Wait()
}

func TestDoRaisesTheFunctionsPanicInTheCaller(t *testing.T) {
	p := New()
	defer func() {
		if r := recover(); r != "boom" {
			t.Errorf("recovered %v, want boom", r)
		}
	}()
	p.Do(func() { panic("boom") })
	t.Error("Do returned after a panic")
}

func TestDoWaitsForTheFunction(t *testing.T) {
	p := New()
	done := false
	p.Do(func() { done = true })
	if !done {
		t.Error("Do returned before the function ran")
	}
}

// After a burst, at most MaxIdle workers stay.
func TestABurstLeavesAtMostMaxIdleWorkers(t *testing.T) {
	p := New()
	const n = MaxIdle + 40
	before := runtime.NumGoroutine()
	var started, release, finished sync.WaitGroup
	started.Add(n)
	release.Add(1)
	finished.Add(n)
	for range n {
		p.Go(func() {
			defer finished.Done()
			started.Done()
			release.Wait()
		})
	}
	started.Wait()
	release.Done()
	finished.Wait()
	// The workers past MaxIdle exit just after their function returns.
	for range 1000 {
		if runtime.NumGoroutine() <= before+MaxIdle {
			break
		}
		runtime.Gosched()
		time.Sleep(time.Millisecond)
	}
	if got := runtime.NumGoroutine() - before; got > MaxIdle {
		t.Errorf("%d workers left after a burst of %d, want at most %d", got, n, MaxIdle)
	}
	if got := p.idle.Load(); got > MaxIdle {
		t.Errorf("%d workers counted idle, want at most %d", got, MaxIdle)
	}
}
