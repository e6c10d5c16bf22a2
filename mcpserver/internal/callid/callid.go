// Package callid carries the identifier of one tool call through everything
// the call does, so that every log line it causes can be found with one grep,
// and counts the StoreLink requests the call makes, for the line that ends
// it.
package callid

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"sync/atomic"
	"time"
)

type ctxKey struct{}

// call is what a context carries for one call.
type call struct {
	id string
	// requests counts the StoreLink requests (attempts) made for the call;
	// slowest is the longest of them, in nanoseconds. Requests of one call
	// run in parallel, hence atomics.
	requests atomic.Int64
	slowest  atomic.Int64
}

// New returns a fresh call identifier: 12 random hex characters.
func New() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// With returns a context that carries id, with no StoreLink request counted
// yet.
func With(ctx context.Context, id string) context.Context {
	return context.WithValue(ctx, ctxKey{}, &call{id: id})
}

// From returns the call identifier in ctx, or "" when there is none.
func From(ctx context.Context) string {
	if c, ok := ctx.Value(ctxKey{}).(*call); ok {
		return c.id
	}
	return ""
}

// NoteRequest counts one StoreLink request of the call in ctx that took d;
// without a call in ctx it does nothing.
func NoteRequest(ctx context.Context, d time.Duration) {
	c, ok := ctx.Value(ctxKey{}).(*call)
	if !ok {
		return
	}
	c.requests.Add(1)
	for {
		old := c.slowest.Load()
		if int64(d) <= old || c.slowest.CompareAndSwap(old, int64(d)) {
			return
		}
	}
}

// Requests returns how many StoreLink requests the call in ctx made and the
// longest of them; zero without a call in ctx.
func Requests(ctx context.Context) (n int, slowest time.Duration) {
	if c, ok := ctx.Value(ctxKey{}).(*call); ok {
		return int(c.requests.Load()), time.Duration(c.slowest.Load())
	}
	return 0, 0
}
