package callid

import (
	"context"
	"sync"
	"testing"
	"time"
)

func TestRequestsCountsEveryRequestAndKeepsTheSlowest(t *testing.T) {
	ctx := With(context.Background(), "abc")
	if From(ctx) != "abc" {
		t.Fatalf("From = %q", From(ctx))
	}
	var wg sync.WaitGroup
	for i := 1; i <= 50; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			NoteRequest(ctx, time.Duration(i)*time.Millisecond)
		}()
	}
	wg.Wait()
	if n, slowest := Requests(ctx); n != 50 || slowest != 50*time.Millisecond {
		t.Fatalf("Requests = %d, %v; want 50, 50ms", n, slowest)
	}
	// A shorter request after the slowest leaves it.
	NoteRequest(ctx, time.Millisecond)
	if n, slowest := Requests(ctx); n != 51 || slowest != 50*time.Millisecond {
		t.Fatalf("Requests = %d, %v; want 51, 50ms", n, slowest)
	}
}

func TestWithoutACallNothingIsCounted(t *testing.T) {
	ctx := context.Background()
	NoteRequest(ctx, time.Second)
	if n, slowest := Requests(ctx); n != 0 || slowest != 0 || From(ctx) != "" {
		t.Fatalf("Requests = %d, %v, From = %q", n, slowest, From(ctx))
	}
	// Each call counts its own requests.
	a, b := With(ctx, "a"), With(ctx, "b")
	NoteRequest(a, time.Second)
	if n, _ := Requests(b); n != 0 {
		t.Fatalf("call b counted call a's request")
	}
}
