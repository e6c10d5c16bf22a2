package httpserver

// The request timeout, the probes, and shutdown with its grace period.

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestRequestTimeoutCutsACallOff(t *testing.T) {
	g := newGate()
	opts, _ := testOptions(g)
	opts.RequestTimeout = 50 * time.Millisecond
	r := start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connect(t, ctx, r.base, "")
	// The gate never opens: only the request timeout ends the call.
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
	if err == nil && !res.IsError {
		t.Fatalf("the call finished: %+v", res)
	}
	if ctx.Err() != nil {
		t.Fatal("the call ran until the test's deadline: no request timeout")
	}
}

func TestHealthAndReadiness(t *testing.T) {
	opts, logs := testOptions(newGate())
	var probeErr error
	var mu sync.Mutex
	opts.Ready = func(ctx context.Context) (Readiness, error) {
		if _, ok := ctx.Deadline(); !ok {
			t.Error("the readiness probe runs without a deadline")
		}
		mu.Lock()
		defer mu.Unlock()
		out := Readiness{Config: "loaded", Ledger: "ok", Database: "sqlite", Breaker: "open", Version: "v-test", Upstream: "storelink"}
		if probeErr != nil {
			out.Ledger = "unreachable"
		}
		return out, probeErr
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path, host string) (int, Readiness) {
		t.Helper()
		req := httptest.NewRequest(http.MethodGet, path, nil)
		req.Host = host
		rec := httptest.NewRecorder()
		s.Handler().ServeHTTP(rec, req)
		var out Readiness
		if err := json.Unmarshal(rec.Body.Bytes(), &out); err != nil {
			t.Fatalf("%s: %v: %s", path, err, rec.Body.String())
		}
		if rec.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%s may be cached", path)
		}
		return rec.Code, out
	}
	// Probes answer whatever the Host, so probes by pod IP work.
	if code, out := get("/healthz", "10.1.2.3:8080"); code != http.StatusOK || out.Status != "ok" {
		t.Fatalf("healthz: %d %+v", code, out)
	}
	want := Readiness{Status: "ready", Config: "loaded", Ledger: "ok", Database: "sqlite", Breaker: "open", Version: "v-test", Upstream: "storelink"}
	if code, out := get("/readyz", "10.1.2.3:8080"); code != http.StatusOK || out != want {
		t.Fatalf("readyz: %d %+v, want %+v", code, out, want)
	}

	mu.Lock()
	probeErr = errors.New("open /var/lib/secret-path/state.db: no such file")
	mu.Unlock()
	if code, out := get("/readyz", "127.0.0.1"); code != http.StatusServiceUnavailable || out.Status != "not_ready" || out.Ledger != "unreachable" {
		t.Fatalf("probe failing: %d %+v", code, out)
	}
	if countLines(logs.String(), "http.not_ready") != 1 {
		t.Fatalf("the failing probe was not logged:\n%s", logs.String())
	}
	mu.Lock()
	probeErr = nil
	mu.Unlock()

	// Shutdown drains: not ready any more, still alive.
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	if code, out := get("/readyz", "127.0.0.1"); code != http.StatusServiceUnavailable || out.Status != "draining" {
		t.Fatalf("draining: %d %+v", code, out)
	}
	if code, _ := get("/healthz", "127.0.0.1"); code != http.StatusOK {
		t.Fatalf("healthz while draining: %d", code)
	}
}

// A call in flight at Shutdown gets its answer, and an open GET stream does
// not delay the shutdown.
func TestShutdownLetsACallFinishAndEndsStreams(t *testing.T) {
	g := newGate()
	opts, logs := testOptions(g)
	s := start(t, opts) // its cleanup checks that Serve returns nil
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The client opens its standalone GET stream once connected.
	cs := connect(t, ctx, s.base, "")
	called := make(chan error, 1)
	go func() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}})
		if err == nil && res.IsError {
			err = errors.New("tool error")
		}
		called <- err
	}()
	select {
	case <-g.entered:
	case <-ctx.Done():
		t.Fatal("the call never reached the tool")
	}

	// A stream left open would make Shutdown wait out this grace period.
	sctx, scancel := context.WithTimeout(context.Background(), time.Hour)
	defer scancel()
	shut := make(chan error, 1)
	go func() { shut <- s.Shutdown(sctx) }()
	// Shutdown waits for the call in flight; opening the gate lets it end.
	close(g.open)
	select {
	case err := <-called:
		if err != nil {
			t.Fatalf("the call in flight failed: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("the call in flight never answered")
	}
	select {
	case err := <-shut:
		if err != nil {
			t.Fatalf("Shutdown: %v\n%s", err, logs.String())
		}
	case <-ctx.Done():
		t.Fatal("Shutdown waited on the open stream")
	}
	if countLines(logs.String(), "http.shutdown_forced") != 0 {
		t.Fatalf("shutdown was forced:\n%s", logs.String())
	}
}

// A call still running when the grace period ends is cut off and logged.
func TestShutdownCutsOffWhatOutlastsTheGrace(t *testing.T) {
	g := newGate()
	opts, logs := testOptions(g)
	r := start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connect(t, ctx, r.base, "")
	go func() { _, _ = cs.CallTool(ctx, &mcp.CallToolParams{Name: "wait", Arguments: map[string]any{}}) }()
	select {
	case <-g.entered:
	case <-ctx.Done():
		t.Fatal("the call never reached the tool")
	}
	// The grace period is already over: the gate never opens.
	sctx, scancel := context.WithCancel(context.Background())
	scancel()
	if err := r.Shutdown(sctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Shutdown: %v, want the grace period's end", err)
	}
	if countLines(logs.String(), "http.shutdown_forced") != 1 {
		t.Fatalf("the forced end was not logged:\n%s", logs.String())
	}
}
