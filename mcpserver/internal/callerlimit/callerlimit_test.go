package callerlimit

import (
	"context"
	"testing"
	"time"
)

// clock is a time that moves only when told.
type clock struct{ t time.Time }

func (c *clock) now() time.Time { return c.t }

// TestBucketPerCaller: a caller has its burst, then waits 60/rate seconds a
// call; another caller is served all the while; waiting refills.
func TestBucketPerCaller(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)}
	l := New(Limits{CallsPerMinute: 30, Burst: 3, Now: c.now})
	for i := range 3 {
		if ok, _ := l.Allow("token:sweeper"); !ok {
			t.Fatalf("call %d of a burst of 3 refused", i+1)
		}
	}
	ok, wait := l.Allow("token:sweeper")
	if ok || wait != 2*time.Second {
		t.Fatalf("the 4th call at once: allowed %v, wait %v; want refused, 2s (30 a minute)", ok, wait)
	}
	// A refusal takes nothing: the same wait again.
	if ok, again := l.Allow("token:sweeper"); ok || again != wait {
		t.Fatalf("a second refused call: allowed %v, wait %v; want refused, %v", ok, again, wait)
	}
	if ok, _ := l.Allow("token:other"); !ok {
		t.Fatal("another caller was refused while the first was limited")
	}
	c.t = c.t.Add(2 * time.Second)
	if ok, _ := l.Allow("token:sweeper"); !ok {
		t.Fatal("refused after waiting what the refusal said")
	}
	if RetryAfterSeconds(1500*time.Millisecond) != 2 || RetryAfterSeconds(time.Millisecond) != 1 {
		t.Fatal("retry_after is not the wait rounded up to whole seconds, at least 1")
	}
}

// TestIdleBucketsAreDropped: a caller idle for a refill is forgotten, and
// comes back with a full bucket.
func TestIdleBucketsAreDropped(t *testing.T) {
	c := &clock{t: time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)}
	l := New(Limits{CallsPerMinute: 60, Burst: 2, Now: c.now})
	l.Allow("a")
	l.Allow("b")
	if n := l.Callers(); n != 2 {
		t.Fatalf("%d buckets, want 2", n)
	}
	c.t = c.t.Add(3 * time.Second)
	l.Allow("a")
	if n := l.Callers(); n != 1 {
		t.Fatalf("%d buckets after b was idle for a refill, want 1", n)
	}
}

// TestOffAndContext: no rate turns the limit off; the caller rides the
// context.
func TestOffAndContext(t *testing.T) {
	if l := New(Limits{}); l != nil {
		t.Fatal("a limiter without a rate")
	}
	var l *Limiter
	if ok, _ := l.Allow("x"); !ok || l.Callers() != 0 {
		t.Fatal("a nil limiter refused a call")
	}
	ctx := With(context.Background(), "oauth:sub-1")
	if From(ctx) != "oauth:sub-1" || From(context.Background()) != "" {
		t.Fatal("the caller did not ride the context")
	}
}
