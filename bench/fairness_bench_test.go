package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/cli"
	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Fairness benchmark (issue 43 item 5, ADR 0036): one token runs three
// chain sweeps at once, over and over, against a StoreLink that answers
// slowly and throttles; another token's one-store check and store list are
// timed with and without that load.
const (
	// slowStoreLink is the latency of every StoreLink answer.
	slowStoreLink = 50 * time.Millisecond
	// fairnessTimed is how many of each timed call make one median.
	fairnessTimed = 9
	// fairnessTarget is the bound on loaded over unloaded time.
	fairnessTarget = 2.0
)

// throttlingStoreLink answers slowly, and beyond capacity requests open
// at once with 429, or 503, and Retry-After: 1.
type throttlingStoreLink struct {
	capacity int64
	next     http.Handler
	open     atomic.Int64
	refusals atomic.Int64
}

func (p *throttlingStoreLink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := p.open.Add(1)
	defer p.open.Add(-1)
	time.Sleep(slowStoreLink)
	if n > p.capacity {
		status := http.StatusTooManyRequests
		if p.refusals.Add(1)%2 == 0 {
			status = http.StatusServiceUnavailable
		}
		w.Header().Set("Retry-After", "1")
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		_, _ = fmt.Fprintf(w, `{"error":{"code":"rate_limited","message":"too many requests"}}`)
		return
	}
	p.next.ServeHTTP(w, r)
}

// bearer sends a token with every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// Tokens of the two callers.
const (
	sweeperToken = "sweeper-0123456789abcdefghijklmnopqrstuv"
	buyerToken   = "buyer-0123456789abcdefghijklmnopqrstuvwx"
)

// fairServer runs `serve --http` in process, with the large mock world
// behind a throttlingStoreLink, and env added; it returns a client per
// token, the stores and the throttle.
func fairServer(b *testing.B, capacity int64, env map[string]string) (sweeper, buyer *mcp.ClientSession, stores []string, slow *throttlingStoreLink) {
	b.Helper()
	dir := b.TempDir()
	tokens := filepath.Join(dir, "tokens")
	if err := os.WriteFile(tokens, []byte("sweeper "+sweeperToken+"\nbuyer "+buyerToken+"\n"), 0o600); err != nil {
		b.Fatal(err)
	}
	env["MCP_AUTH_TOKENS_FILE"] = tokens
	slow = &throttlingStoreLink{capacity: capacity}
	embedded := func(_ context.Context, fixedNow time.Time) (*cli.EmbeddedUpstream, error) {
		r, err := mockstorelink.Start(mockstorelink.Options{NoResponseValidation: true, MaxRequestLog: -1,
			Stores: 180, SKUs: 18000, Now: func() time.Time { return fixedNow }})
		if err != nil {
			return nil, err
		}
		target, _ := url.Parse(r.URL)
		slow.next = httputil.NewSingleHostReverseProxy(target)
		front := httptest.NewServer(slow)
		for id := range r.Server.Keys() {
			stores = append(stores, id)
		}
		slices.Sort(stores)
		return &cli.EmbeddedUpstream{BaseURL: front.URL, Keyring: r.Server.Keys(), Close: func() error { front.Close(); return r.Close() }}, nil
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	all := map[string]string{"STATE_DB_PATH": filepath.Join(dir, "state.db"), "HOME": dir,
		"STORELINK_MOCK_NOW": mockstorelink.DefaultNow().Format(time.RFC3339)}
	for k, v := range env {
		all[k] = v
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- cli.Run(ctx, []string{"serve", "--http", addr}, cli.Env{Getenv: func(k string) string { return all[k] },
			Stdin: nil, Stdout: os.Stderr, Stderr: discard{}, Embedded: embedded})
	}()
	b.Cleanup(func() { cancel(); <-done })
	connect := func(token string) *mcp.ClientSession {
		client := mcp.NewClient(&mcp.Implementation{Name: "bench-" + token[:5], Version: "1"}, nil)
		for i := 0; ; i++ {
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp",
				HTTPClient: &http.Client{Transport: bearer{token: token}}, MaxRetries: -1}, nil)
			if err == nil {
				b.Cleanup(func() { _ = cs.Close() })
				return cs
			}
			if i == 200 {
				b.Fatalf("the server at %s did not answer: %v", addr, err)
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return connect(sweeperToken), connect(buyerToken), stores, slow
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }

// timedCall calls a tool until it answers, waiting retry_after_seconds
// after a RATE_LIMITED as an agent would, and returns the time taken and
// the refusals met.
func timedCall(b *testing.B, cs *mcp.ClientSession, params *mcp.CallToolParams) (time.Duration, int) {
	start := time.Now()
	refused := 0
	for {
		res, err := cs.CallTool(context.Background(), params)
		if err != nil {
			b.Fatalf("%s: %v", params.Name, err)
		}
		if !res.IsError {
			return time.Since(start), refused
		}
		var env struct {
			Error struct {
				Code              string `json:"code"`
				RetryAfterSeconds int    `json:"retry_after_seconds"`
			} `json:"error"`
		}
		_ = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env)
		if env.Error.Code != "RATE_LIMITED" && env.Error.Code != "UPSTREAM_UNAVAILABLE" || refused == 20 {
			b.Fatalf("%s: %s", params.Name, res.Content[0].(*mcp.TextContent).Text)
		}
		refused++
		time.Sleep(time.Duration(max(env.Error.RetryAfterSeconds, 1)) * time.Second)
	}
}

// medianOf times call fairnessTimed times and returns the median and the
// refusals met.
func medianOf(b *testing.B, cs *mcp.ClientSession, params *mcp.CallToolParams) (time.Duration, int) {
	var ds []time.Duration
	refused := 0
	for range fairnessTimed {
		d, r := timedCall(b, cs, params)
		ds = append(ds, d)
		refused += r
	}
	slices.Sort(ds)
	return ds[len(ds)/2], refused
}

// BenchmarkFairness reports the buyer's median one-store check and store
// list while the sweeper runs three chain sweeps at once, over the same
// without the sweeps (check_ratio and list_ratio; the target is at
// most 2), with the budget share on (the default, 50) and off (100), for a
// StoreLink that serves 16 requests at once and one that serves 4.
func BenchmarkFairness(b *testing.B) {
	for _, capacity := range []int64{16, 4} {
		for _, share := range []string{"50", "100"} {
			b.Run(fmt.Sprintf("capacity=%d/share=%s", capacity, share), func(b *testing.B) {
				benchFairness(b, capacity, share)
			})
		}
	}
}

// benchFairness is one BenchmarkFairness case.
func benchFairness(b *testing.B, capacity int64, share string) {
	sweeper, buyer, stores, slow := fairServer(b, capacity, map[string]string{"UPSTREAM_CALLER_SHARE_PERCENT": share})
	check := &mcp.CallToolParams{Name: "korral_check_stock_risk", Arguments: map[string]any{"sku": mockstorelink.SKUAt(12), "store_id": stores[0]}}
	list := &mcp.CallToolParams{Name: "korral_list_authorized_stores", Arguments: map[string]any{}}
	sweep := &mcp.CallToolParams{Name: "korral_check_stock_risk", Arguments: map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []string{"all"}}}
	// Master data warm for both callers, as in the field.
	timedCall(b, sweeper, sweep)
	timedCall(b, buyer, check)
	timedCall(b, buyer, list)
	var m fairnessRun
	for b.Loop() {
		m = measureFairness(b, sweeper, buyer, slow, check, list, sweep)
	}
	b.ReportMetric(m.loadedCheck.Seconds()/m.quietCheck.Seconds(), "check_ratio")
	b.ReportMetric(m.loadedList.Seconds()/m.quietList.Seconds(), "list_ratio")
	b.ReportMetric(float64(m.quietCheck.Milliseconds()), "check_unloaded_ms")
	b.ReportMetric(float64(m.loadedCheck.Milliseconds()), "check_loaded_ms")
	b.ReportMetric(float64(m.quietList.Milliseconds()), "list_unloaded_ms")
	b.ReportMetric(float64(m.loadedList.Milliseconds()), "list_loaded_ms")
	b.ReportMetric(float64(m.buyerRefused), "buyer_refusals")
	b.ReportMetric(float64(m.sweeps), "sweeps")
	b.ReportMetric(float64(m.storeLinkRefusals), "storelink_refusals")
	if r := m.loadedCheck.Seconds() / m.quietCheck.Seconds(); share == "50" && r > fairnessTarget {
		b.Logf("the other caller's check took %.1fx its unloaded time under the sweeps, over the target of %.0fx", r, fairnessTarget)
	}
}

// fairnessRun is one measurement of BenchmarkFairness.
type fairnessRun struct {
	quietCheck, loadedCheck, quietList, loadedList time.Duration
	buyerRefused                                   int
	sweeps, storeLinkRefusals                      int64
}

// measureFairness times the buyer's calls alone, then under three sweeps
// at once that the sweeper repeats until the timing ends.
func measureFairness(b *testing.B, sweeper, buyer *mcp.ClientSession, slow *throttlingStoreLink, check, list, sweep *mcp.CallToolParams) fairnessRun {
	var m fairnessRun
	m.quietCheck, _ = medianOf(b, buyer, check)
	m.quietList, _ = medianOf(b, buyer, list)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var sweeps atomic.Int64
	for range 3 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				// A sweep under throttling answers with the stores it could
				// not check; its outcome does not matter here.
				if _, err := sweeper.CallTool(context.Background(), sweep); err == nil {
					sweeps.Add(1)
				}
			}
		})
	}
	// Until StoreLink refuses: the sweeps hold the budget.
	before := slow.refusals.Load()
	for i := 0; slow.refusals.Load() == before && i < 200; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	var rc, rl int
	m.loadedCheck, rc = medianOf(b, buyer, check)
	m.loadedList, rl = medianOf(b, buyer, list)
	close(stop)
	wg.Wait()
	m.buyerRefused, m.sweeps, m.storeLinkRefusals = rc+rl, sweeps.Load(), slow.refusals.Load()-before
	return m
}
