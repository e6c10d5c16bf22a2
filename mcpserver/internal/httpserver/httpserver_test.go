package httpserver

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	testToken  = "test-token-0123456789abcdefghijklmnop"
	otherToken = "other-token-0123456789abcdefghijklmno"
	initBody   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
)

func logLines(s string) []map[string]any { return mcptest.LogLines(s) }

func countLines(s, msg string) int {
	n := 0
	for _, l := range logLines(s) {
		if l["msg"] == msg {
			n++
		}
	}
	return n
}

// tokenFile is a real token file, as `serve --http` opens it.
func tokenFile(t *testing.T, content string) *bearer.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := bearer.Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// gate is a tool that holds its call until the test opens the gate or the
// call's context ends, to have a call in flight.
type gate struct {
	entered chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 16), open: make(chan struct{})} }

type waitIn struct{}

type waitOut struct {
	Done string `json:"done"`
}

// mcpServer is a small MCP server with the gate as its one tool.
func mcpServer(g *gate) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "waits for the gate"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ waitIn) (*mcp.CallToolResult, waitOut, error) {
		g.entered <- struct{}{}
		select {
		case <-g.open:
			return nil, waitOut{Done: "released"}, nil
		case <-ctx.Done():
			return nil, waitOut{}, ctx.Err()
		}
	})
	return s
}

// testOptions are valid options around a fresh server with a gate tool,
// logging JSON into the returned buffer.
func testOptions(g *gate) (Options, *mcptest.SyncBuffer) {
	logs := &mcptest.SyncBuffer{}
	return Options{
		Server:              mcpServer(g),
		Logger:              slog.New(slog.NewJSONHandler(logs, nil)),
		ListenHost:          "127.0.0.1",
		RequestTimeout:      time.Minute,
		MaxSessions:         1000,
		MaxSessionsPerToken: 100,
		SessionIdleTimeout:  30 * time.Minute,
	}, logs
}

// serving is a Server on a loopback port.
type serving struct {
	*Server
	base string
	done chan error
}

// start serves opts on 127.0.0.1 until the test ends.
func start(t *testing.T, opts Options) *serving {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &serving{Server: s, base: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	go func() { r.done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		if err := <-r.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return r
}

// bearerTransport adds the token to every request of an MCP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, ctx context.Context, base, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "unit-agent", Version: "1"}, nil)
	hc := http.DefaultClient
	if token != "" {
		hc = &http.Client{Transport: bearerTransport{token}}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestNewRefusesUnboundedOptions(t *testing.T) {
	valid, _ := testOptions(newGate())
	for name, edit := range map[string]func(*Options){
		"no server":             func(o *Options) { o.Server = nil },
		"no logger":             func(o *Options) { o.Logger = nil },
		"no request timeout":    func(o *Options) { o.RequestTimeout = 0 },
		"no session cap":        func(o *Options) { o.MaxSessions = 0 },
		"no per-token cap":      func(o *Options) { o.MaxSessionsPerToken = 0 },
		"no idle timeout":       func(o *Options) { o.SessionIdleTimeout = 0 },
		"negative idle timeout": func(o *Options) { o.SessionIdleTimeout = -time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			o := valid
			edit(&o)
			if _, err := New(o); err == nil {
				t.Fatal("New accepted the options")
			}
		})
	}
	stateless := valid
	stateless.Stateless, stateless.MaxSessions, stateless.MaxSessionsPerToken, stateless.SessionIdleTimeout = true, 0, 0, 0
	if _, err := New(stateless); err != nil {
		t.Fatalf("a stateless server needs no session caps: %v", err)
	}
}

func TestGuardsTheEndpoint(t *testing.T) {
	opts, logs := testOptions(newGate())
	opts.Tokens = tokenFile(t, "agent "+testToken+"\n")
	opts.AllowedHosts = []string{"mcp.korral.example"}
	r := start(t, opts)
	mcpURL := r.base + "/mcp"
	bearer := "Bearer " + testToken

	for name, tc := range map[string]struct {
		hdr  map[string]string
		want int
	}{
		"no token":                    {map[string]string{}, http.StatusUnauthorized},
		"wrong token":                 {map[string]string{"Authorization": "Bearer " + otherToken}, http.StatusUnauthorized},
		"not bearer":                  {map[string]string{"Authorization": "Basic " + testToken}, http.StatusUnauthorized},
		"foreign host":                {map[string]string{"Authorization": bearer, "Host": "evil.example.com"}, http.StatusMisdirectedRequest},
		"foreign origin":              {map[string]string{"Authorization": bearer, "Origin": "http://evil.example.com"}, http.StatusForbidden},
		"null origin":                 {map[string]string{"Authorization": bearer, "Origin": "null"}, http.StatusForbidden},
		"foreign host without token":  {map[string]string{"Host": "evil.example.com"}, http.StatusMisdirectedRequest},
		"loopback origin":             {map[string]string{"Authorization": bearer, "Origin": "http://localhost:6274"}, http.StatusOK},
		"allowed host name":           {map[string]string{"Authorization": bearer, "Host": "mcp.korral.example:443"}, http.StatusOK},
		"allowed host name uppercase": {map[string]string{"Authorization": bearer, "Host": "MCP.Korral.Example"}, http.StatusOK},
		"token":                       {map[string]string{"Authorization": bearer}, http.StatusOK},
	} {
		t.Run(name, func(t *testing.T) {
			if resp, body := mcptest.Post(t, mcpURL, initBody, tc.hdr); resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
		})
	}

	t.Run("oversized body", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxBodyBytes) + `"}}`
		if resp, body := mcptest.Post(t, mcpURL, big, map[string]string{"Authorization": bearer}); resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
	t.Run("other paths", func(t *testing.T) {
		if resp, _ := mcptest.Post(t, r.base+"/mcp/extra", initBody, map[string]string{"Authorization": bearer}); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	for _, secret := range []string{testToken, otherToken} {
		if strings.Contains(logs.String(), secret) {
			t.Fatal("a token reached the log")
		}
	}
	if n := countLines(logs.String(), "auth.denied"); n != 3 {
		t.Fatalf("%d auth.denied lines, want 3", n)
	}
	if countLines(logs.String(), "http.host_refused") != 2 || countLines(logs.String(), "http.origin_refused") != 2 {
		t.Fatalf("host and origin refusals not logged:\n%s", logs.String())
	}
}

func TestWithoutTokensTheEndpointIsOpen(t *testing.T) {
	opts, _ := testOptions(newGate())
	r := start(t, opts)
	if resp, body := mcptest.Post(t, r.base+"/mcp", initBody, nil); resp.StatusCode != http.StatusOK || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("status %d, WWW-Authenticate %q: %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	// The rebinding guard holds without tokens too.
	if resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, map[string]string{"Host": "evil.example.com"}); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("foreign host: %d", resp.StatusCode)
	}
}

func TestEvery401CarriesABearerChallenge(t *testing.T) {
	opts, _ := testOptions(newGate())
	opts.Tokens = tokenFile(t, "agent "+testToken+"\n")
	r := start(t, opts)
	for name, tc := range map[string]struct {
		auth, want string
	}{
		"no token":    {"", `Bearer realm="storelink-mcp"`},
		"wrong token": {"Bearer " + otherToken, `Bearer realm="storelink-mcp", error="invalid_token"`},
		"not bearer":  {"Basic " + testToken, `Bearer realm="storelink-mcp", error="invalid_token"`},
	} {
		t.Run(name, func(t *testing.T) {
			hdr := map[string]string{}
			if tc.auth != "" {
				hdr["Authorization"] = tc.auth
			}
			resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, hdr)
			if resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != tc.want {
				t.Fatalf("status %d, WWW-Authenticate %q; want 401 with %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), tc.want)
			}
		})
	}
	resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, map[string]string{"Authorization": "Bearer " + testToken})
	if resp.StatusCode != http.StatusOK || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("admitted request: status %d, WWW-Authenticate %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestSessionCaps: beyond the per-token and the global cap a new session
// gets 503 with Retry-After; sessions already open keep working; a place
// frees up when a session is deleted or goes idle.
func TestSessionCaps(t *testing.T) {
	opts, logs := testOptions(newGate())
	opts.Tokens = tokenFile(t, "agent "+testToken+"\nother "+otherToken+"\n")
	opts.MaxSessions, opts.MaxSessionsPerToken, opts.SessionIdleTimeout = 3, 2, 2*time.Second
	r := start(t, opts)
	url := r.base + "/mcp"
	as := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	open := func(token string) *http.Response {
		t.Helper()
		resp, _ := mcptest.Post(t, url, initBody, as(token))
		return resp
	}
	refused := func(resp *http.Response, why string) {
		t.Helper()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("%s: status %d, Retry-After %q; want 503 with Retry-After", why, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	var agent []string
	for range 2 {
		resp := open(testToken)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("session %d: status %d", len(agent)+1, resp.StatusCode)
		}
		agent = append(agent, resp.Header.Get("Mcp-Session-Id"))
	}
	refused(open(testToken), "third session of one token")
	if resp := open(otherToken); resp.StatusCode != http.StatusOK {
		t.Fatalf("another token's first session: %d", resp.StatusCode)
	}
	refused(open(otherToken), "a session beyond the global cap")

	// An open session still works.
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	hdr := as(testToken)
	hdr["Mcp-Session-Id"] = agent[0]
	hdr["Mcp-Protocol-Version"] = "2025-06-18"
	if resp, _ := mcptest.Post(t, url, ping, hdr); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping in an open session: %d", resp.StatusCode)
	}

	// DELETE frees a place.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp := open(testToken); resp.StatusCode != http.StatusOK {
		t.Fatalf("after DELETE: %d", resp.StatusCode)
	}
	refused(open(testToken), "at the cap again")

	// Idle sessions are closed after the idle timeout and free their
	// places; wait for that with a deadline, not a fixed sleep.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp := open(testToken)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle sessions never freed their places")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := countLines(logs.String(), "http.session_refused"); n < 3 {
		t.Fatalf("%d http.session_refused lines", n)
	}
	if !strings.Contains(logs.String(), "MCP_HTTP_MAX_SESSIONS_PER_TOKEN") {
		t.Fatalf("the refusal does not name the setting to raise:\n%s", logs.String())
	}
}

func TestStatelessHasNoSessionCap(t *testing.T) {
	opts, _ := testOptions(newGate())
	opts.Stateless, opts.MaxSessions, opts.MaxSessionsPerToken, opts.SessionIdleTimeout = true, 0, 0, 0
	r := start(t, opts)
	for i := range 3 {
		if resp, body := mcptest.Post(t, r.base+"/mcp", initBody, nil); resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("request %d: status %d, session %q: %s", i, resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
		}
	}
}

func TestHostGuard(t *testing.T) {
	g := newHostGuard("10.0.0.5", []string{"mcp.korral.example"})
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost": true, "LOCALHOST:1": true, "[::1]:80": true, "127.9.9.9": true,
		"10.0.0.5:8080": true, "mcp.korral.example": true, "mcp.korral.example.:443": true,
		"evil.example.com": false, "10.0.0.6:8080": false, "mcp.korral.example.evil.com": false,
		"localhost.evil.com": false, "": false, "0.0.0.0:8080": false,
	} {
		if got := g.ok(host); got != want {
			t.Errorf("ok(%q) = %v, want %v", host, got, want)
		}
	}
	if newHostGuard("0.0.0.0", nil).ok("0.0.0.0") {
		t.Error("the wildcard address became an accepted host name")
	}
	for host, want := range map[string][2]bool{
		"localhost": {true, false}, "127.0.0.1": {true, false}, "[::1]": {true, false},
		"": {false, true}, "0.0.0.0": {false, true}, "[::]": {false, true},
		"10.0.0.5": {false, false}, "mcp.korral.example": {false, false},
	} {
		if IsLoopbackHost(host) != want[0] || IsWildcardHost(host) != want[1] {
			t.Errorf("%q: loopback %v, wildcard %v; want %v", host, IsLoopbackHost(host), IsWildcardHost(host), want)
		}
	}
}

// TestInspectSeesEveryRequestWithItsCaller: the hook gets each request of a
// POST before the SDK answers, even one whose params the SDK refuses, with
// the token label and the session id.
func TestInspectSeesEveryRequestWithItsCaller(t *testing.T) {
	type seen struct{ method, params, label, session string }
	var mu sync.Mutex
	var got []seen
	opts, _ := testOptions(newGate())
	opts.Tokens = tokenFile(t, "dairy-agent "+testToken+"\n")
	opts.Inspect = func(_ context.Context, req *jsonrpc.Request, label, sessionID string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{req.Method, string(req.Params), label, sessionID})
	}
	r := start(t, opts)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, auth)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	hdr := map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
	mcptest.Post(t, r.base+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	bad := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"not an object"}`
	if resp, body := mcptest.Post(t, r.base+"/mcp", bad, hdr); !strings.Contains(body, `"id":7`) {
		t.Fatalf("the SDK did not answer the refused call: %d %s", resp.StatusCode, body)
	}
	// A caller without a token is refused before anything reads its body.
	mcptest.Post(t, r.base+"/mcp", bad, nil)

	mu.Lock()
	defer mu.Unlock()
	want := []seen{
		{"initialize", "", "dairy-agent", ""},
		{"notifications/initialized", "", "dairy-agent", session},
		{"tools/call", `"not an object"`, "dairy-agent", session},
	}
	if len(got) != len(want) {
		t.Fatalf("Inspect saw %+v, want %d requests", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if w.params == "" {
			g.params = ""
		}
		if g != w {
			t.Errorf("request %d: %+v, want %+v", i, g, w)
		}
	}
}

func TestRequestTimeoutCutsACallOff(t *testing.T) {
	g := newGate()
	opts, _ := testOptions(g)
	opts.RequestTimeout = 50 * time.Millisecond
	r := start(t, opts)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs := connect(t, ctx, r.base, "")
	// The gate never opens: only the request timeout ends the call, well
	// before the test's own deadline.
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

// TestShutdownLetsACallFinishAndEndsStreams: a tool call in flight when
// Shutdown begins gets its answer, and an open GET stream does not hold
// the shutdown up until its grace period ends.
func TestShutdownLetsACallFinishAndEndsStreams(t *testing.T) {
	g := newGate()
	opts, logs := testOptions(g)
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	served := make(chan error, 1)
	go func() { served <- s.Serve(ln) }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	// The client opens its standalone GET stream once connected.
	cs := connect(t, ctx, "http://"+ln.Addr().String(), "")
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

	// A grace period longer than the test: a stream left open would make
	// Shutdown wait for all of it and report a forced end.
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
	if err := <-served; err != nil {
		t.Fatalf("Serve after Shutdown: %v", err)
	}
	if countLines(logs.String(), "http.shutdown_forced") != 0 {
		t.Fatalf("shutdown was forced:\n%s", logs.String())
	}
}

// TestShutdownCutsOffWhatOutlastsTheGrace: a call still running when the
// grace period ends is cut off, and the forced end is logged.
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

func TestServeLogsWhereItListens(t *testing.T) {
	opts, logs := testOptions(newGate())
	opts.Tokens = tokenFile(t, "agent "+testToken+"\n")
	opts.AllowedHosts = []string{"mcp.korral.example"}
	r := start(t, opts)
	// Serve logs the line in its own goroutine before it accepts; a request
	// answered means it has been written.
	if resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, map[string]string{"Authorization": "Bearer " + testToken}); resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	var line map[string]any
	for _, l := range logLines(logs.String()) {
		if l["msg"] == "http.listening" {
			line = l
		}
	}
	if line == nil || "http://"+line["addr"].(string) != r.base || line["auth"] != "bearer" || line["url"] != r.base+"/mcp" {
		t.Fatalf("http.listening: %v", line)
	}
	hosts, _ := json.Marshal(line["allowed_hosts"])
	if string(hosts) != `["localhost","127.0.0.1","::1","mcp.korral.example"]` {
		t.Fatalf("allowed_hosts %s", hosts)
	}
}
