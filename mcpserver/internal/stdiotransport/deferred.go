package stdiotransport

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK's JSON-RPC layer builds a response with encoding/json, which
// validates and compacts whatever a result's MarshalJSON returns: for a tool
// result that is already compact JSON of several KB, a full pass and two
// copies of it. Serve lets a result skip that: its MarshalJSON hands the
// bytes to the connection's Deferred and returns a short placeholder, and
// conn.Write writes the bytes in the placeholder's place. The written line
// is the one the SDK would write (TestDeferredResultLinesAreUnchanged in
// internal/tools).
//
// A placeholder must never reach a client. Only requests served by Serve
// see a Deferred (through their context, which the SDK derives from the
// context Serve gives Server.Run), and every response of such a session is
// written by this connection's Write. The SDK marshals a result once, in
// jsonrpc2.NewResponse on the handling goroutine, and hands the response
// straight to Write; no middleware or log of ours or the SDK's marshals it
// in between (TestServedResultsAreTheLinesRunWrites counts the calls, so an
// SDK that marshals twice fails it). A placeholder whose result is gone is
// answered with an internal error, never written as a result.

// maxDeferred bounds the results a connection holds at once. A result is
// held from the response's encoding to its writing; one whose response is
// never written (the write was refused, the connection closed) stays until
// the connection closes. Beyond the bound, results are encoded as before.
const maxDeferred = 64

// Deferred holds the JSON of results whose responses carry a placeholder,
// for one connection, until the connection writes them or closes. A nil
// *Deferred holds nothing.
type Deferred struct {
	// prefix opens every placeholder of this connection: a JSON string
	// with a random part, so no other connection's placeholder, and no
	// result, is mistaken for one.
	prefix []byte

	mu      sync.Mutex
	state   deferredState
	next    uint64
	pending map[uint64][]byte
}

type deferredState int

const (
	deferredNew deferredState = iota
	deferredOpen
	deferredClosed
)

// MaxPlaceholderBytes is the longest placeholder Defer appends.
const MaxPlaceholderBytes = len(`"deferred:`) + 16 + len(`:`) + 20 + len(`"`)

func newDeferred() *Deferred {
	return &Deferred{prefix: fmt.Appendf(nil, `"deferred:%016x:`, rand.Uint64())}
}

// Defer keeps raw, a result's compact JSON, and appends to dst the
// placeholder to encode in its place. ok is false when d is nil, its
// connection is not open or it holds maxDeferred results; the caller then
// encodes raw itself.
func (d *Deferred) Defer(dst, raw []byte) (placeholder []byte, ok bool) {
	if d == nil {
		return nil, false
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state != deferredOpen || len(d.pending) >= maxDeferred {
		return nil, false
	}
	d.next++
	d.pending[d.next] = raw
	dst = append(dst, d.prefix...)
	dst = strconv.AppendUint(dst, d.next, 10)
	return append(dst, '"'), true
}

// take returns and forgets the result that result, a response's result,
// stands for. isPlaceholder tells whether result is one of d's
// placeholders; found is false for a placeholder whose result is no longer
// held.
func (d *Deferred) take(result json.RawMessage) (raw []byte, isPlaceholder, found bool) {
	if d == nil || len(result) > MaxPlaceholderBytes || !bytes.HasPrefix(result, d.prefix) {
		return nil, false, false
	}
	digits := result[len(d.prefix):]
	if len(digits) < 2 || digits[len(digits)-1] != '"' {
		return nil, false, false
	}
	var n uint64
	for _, c := range digits[:len(digits)-1] {
		if c < '0' || c > '9' {
			return nil, false, false
		}
		n = n*10 + uint64(c-'0')
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	raw, found = d.pending[n]
	delete(d.pending, n)
	return raw, true, found
}

// open starts holding results for a new connection; it reports false if d
// has served a connection already, which then holds nothing.
func (d *Deferred) open() bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.state != deferredNew {
		return false
	}
	d.state, d.pending = deferredOpen, map[uint64][]byte{}
	return true
}

// close frees every held result and refuses new ones.
func (d *Deferred) close() {
	if d == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.state, d.pending = deferredClosed, nil
}

// held is the number of results d holds.
func (d *Deferred) held() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.pending)
}

type deferredKey struct{}

// DeferredFrom returns the Deferred of the connection a request arrived on
// when Serve runs its session, else nil.
func DeferredFrom(ctx context.Context) *Deferred {
	d, _ := ctx.Value(deferredKey{}).(*Deferred)
	return d
}

// Serve runs s on t as s.Run(ctx, t) does, and lets the results of the
// session's requests be written without a second encoding (DeferredFrom).
// Like Connect, it is for exactly one connection.
func (t *Transport) Serve(ctx context.Context, s *mcp.Server) error {
	d := newDeferred()
	return s.Run(context.WithValue(ctx, deferredKey{}, d), &deferringTransport{t: t, d: d})
}

// deferringTransport connects t with d as its connection's Deferred.
type deferringTransport struct {
	t *Transport
	d *Deferred
}

// Connect implements mcp.Transport.
func (dt *deferringTransport) Connect(context.Context) (mcp.Connection, error) {
	d := dt.d
	if !d.open() {
		d = nil
	}
	return dt.t.connect(d), nil
}
