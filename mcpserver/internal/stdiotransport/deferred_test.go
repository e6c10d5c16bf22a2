package stdiotransport

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// openDeferred is a Deferred of a started connection that writes to out.
func openDeferred(t *testing.T, out io.Writer) (*conn, *Deferred) {
	t.Helper()
	d := newDeferred()
	if !d.open() {
		t.Fatal("a new Deferred did not open")
	}
	return (&Transport{Reader: strings.NewReader(""), Writer: out}).connect(d), d
}

func response(t *testing.T, id any, result []byte) *jsonrpc.Response {
	t.Helper()
	rid, err := jsonrpc.MakeID(id)
	if err != nil {
		t.Fatal(err)
	}
	return &jsonrpc.Response{ID: rid, Result: result}
}

func TestDeferredHoldsABoundedNumberAndFreesThemOnClose(t *testing.T) {
	c, d := openDeferred(t, io.Discard)
	seen := map[string]bool{}
	for i := range maxDeferred {
		p, ok := d.Defer(nil, []byte(`{}`))
		if !ok {
			t.Fatalf("result %d refused below the bound", i)
		}
		if seen[string(p)] || !json.Valid(p) {
			t.Fatalf("placeholder %s repeated or not JSON", p)
		}
		seen[string(p)] = true
	}
	if _, ok := d.Defer(nil, []byte(`{}`)); ok {
		t.Fatalf("held more than %d results", maxDeferred)
	}
	_ = c.Close()
	if n := d.held(); n != 0 {
		t.Fatalf("%d results held after the connection closed", n)
	}
	if _, ok := d.Defer(nil, []byte(`{}`)); ok {
		t.Fatal("a closed connection's Deferred held a result")
	}
	if d.open() {
		t.Fatal("a Deferred opened for a second connection")
	}
	var none *Deferred
	if _, ok := none.Defer(nil, []byte(`{}`)); ok {
		t.Fatal("a nil Deferred held a result")
	}
	if DeferredFrom(context.Background()) != nil {
		t.Fatal("a plain context carries a Deferred")
	}
}

// A written response frees its result, and so does one Write refuses; a
// placeholder written twice, or another connection's, never reaches the
// client as a result.
func TestWriteTakesTheHeldResult(t *testing.T) {
	var out bytes.Buffer
	c, d := openDeferred(t, &out)
	defer c.Close()
	p, _ := d.Defer(nil, []byte(`{"a":1}`))
	if err := c.Write(context.Background(), response(t, float64(1), p)); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), `{"jsonrpc":"2.0","id":1,"result":{"a":1}}`+"\n"; got != want {
		t.Fatalf("line %q, want %q", got, want)
	}
	if n := d.held(); n != 0 {
		t.Fatalf("%d results held after the write", n)
	}

	out.Reset()
	if err := c.Write(context.Background(), response(t, "again", p)); err != nil {
		t.Fatal(err)
	}
	var lost struct {
		ID    string         `json:"id"`
		Error *jsonrpc.Error `json:"error"`
	}
	if err := json.Unmarshal(out.Bytes(), &lost); err != nil || lost.ID != "again" || lost.Error == nil ||
		lost.Error.Code != jsonrpc.CodeInternalError || strings.Contains(out.String(), "korral-deferred-result") {
		t.Fatalf("a placeholder written twice: %q (%v)", out.String(), err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	p, _ = d.Defer(nil, []byte(`{"b":2}`))
	if err := c.Write(ctx, response(t, float64(2), p)); err == nil {
		t.Fatal("Write with a cancelled context succeeded")
	}
	if n := d.held(); n != 0 {
		t.Fatalf("%d results held after a refused write", n)
	}

	_, other := openDeferred(t, io.Discard)
	q, _ := other.Defer(nil, []byte(`{"c":3}`))
	out.Reset()
	if err := c.Write(context.Background(), response(t, float64(3), q)); err != nil {
		t.Fatal(err)
	}
	if got := out.String(); got != `{"jsonrpc":"2.0","id":3,"result":`+string(q)+"}\n" {
		t.Fatalf("another connection's placeholder: %q", got)
	}
	if n := other.held(); n != 1 {
		t.Fatalf("the other connection holds %d results, want its own 1", n)
	}
}

// countingResult is a tool result whose MarshalJSON defers its JSON when
// its context carries a Deferred, as internal/tools does, and counts its
// calls.
type countingResult struct {
	*mcp.CallToolResult
	raw      []byte
	d        *Deferred
	calls    *atomic.Int32
	deferred *atomic.Int32
}

func (r *countingResult) MarshalJSON() ([]byte, error) {
	r.calls.Add(1)
	if p, ok := r.d.Defer(nil, r.raw); ok {
		r.deferred.Add(1)
		return p, nil
	}
	return r.raw, nil
}

// serveLines sends lines to a server with one tool and an outermost
// middleware that returns a countingResult, served by serve, and returns
// the answers and the counts.
func serveLines(t *testing.T, lines []string, serve func(context.Context, *mcp.Server, *Transport) error) (answers []string, calls, deferred int32) {
	t.Helper()
	var nCalls, nDeferred atomic.Int32
	s := mcp.NewServer(&mcp.Implementation{Name: "deferred", Version: "1"}, nil)
	s.AddTool(&mcp.Tool{Name: "big", InputSchema: json.RawMessage(`{"type":"object"}`)}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		text := strings.Repeat(`{"row":"a<b>&c é"},`, 200)
		return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(`{"n":1}`)}, nil
	})
	s.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*mcp.CallToolResult); ok && err == nil {
				return &countingResult{CallToolResult: r, raw: sdkRaw(t, r), d: DeferredFrom(ctx), calls: &nCalls, deferred: &nDeferred}, nil
			}
			return res, err
		}
	})
	answers = mcptest.StdioAnswers(t, lines, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return serve(ctx, s, &Transport{Reader: in, Writer: out})
	})
	return answers, nCalls.Load(), nDeferred.Load()
}

// TestServedResultsAreTheLinesRunWrites runs the same requests through
// Server.Run and through Serve: the lines are the same, Serve deferred
// every tool result, and the SDK marshalled each result once (so nothing
// between the handler and the connection saw a placeholder).
func TestServedResultsAreTheLinesRunWrites(t *testing.T) {
	lines := []string{
		`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"big","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"big","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":"needs\"escape","method":"tools/call","params":{"name":"big","arguments":{}}}`,
		`{"jsonrpc":"2.0","id":4,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":5,"method":"tools/list"}`,
	}
	want, calls, deferred := serveLines(t, lines, func(ctx context.Context, s *mcp.Server, tr *Transport) error { return s.Run(ctx, tr) })
	if calls != 3 || deferred != 0 {
		t.Fatalf("Server.Run: %d marshals, %d deferred; want 3 and 0", calls, deferred)
	}
	got, calls, deferred := serveLines(t, lines, func(ctx context.Context, s *mcp.Server, tr *Transport) error { return tr.Serve(ctx, s) })
	if calls != 3 || deferred != 3 {
		t.Fatalf("Serve: %d marshals, %d deferred; want 3 and 3", calls, deferred)
	}
	if len(got) != len(want) || len(want) != 6 {
		t.Fatalf("%d answers through Serve, %d through Run, want 6", len(got), len(want))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("answer %d:\nServe %s\n  Run %s", i, got[i], want[i])
		}
	}
	if !strings.Contains(want[1], `"result":{"content":[{"type":"text","text":"{\"row\"`) {
		t.Fatalf("the tool's answer is not its result: %.200s", want[1])
	}
}
