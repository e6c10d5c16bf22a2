package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	testToken = "test-token-0123456789abcdefghijklmnop"
	initBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
)

type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// testEnv is a configuration pointing at upstream (a stand-in StoreLink) with
// one store key and a private state database.
func testEnv(t *testing.T, upstream string, vars map[string]string) (Env, *syncBuffer) {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{
		"UPSTREAM_BASE_URL": upstream,
		"STORELINK_KEYRING": `{"47": "key-47-0123456789"}`,
		"STATE_DB_PATH":     filepath.Join(dir, "state.db"),
		"HOME":              dir,
	}
	for k, v := range vars {
		all[k] = v
	}
	stderr := &syncBuffer{}
	return Env{
		Getenv:   func(k string) string { return all[k] },
		ReadFile: os.ReadFile,
		Stdin:    strings.NewReader(""),
		Stdout:   io.Discard,
		Stderr:   stderr,
	}, stderr
}

// failingUpstream is a StoreLink that answers every request with 503 and
// counts them.
func failingUpstream(t *testing.T) (*httptest.Server, *int64) {
	t.Helper()
	var mu sync.Mutex
	var n int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"unavailable","message":"down"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

func writeTokens(t *testing.T, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestServeRefusesUnsafeOrBrokenStart(t *testing.T) {
	up, calls := failingUpstream(t)
	tokens := writeTokens(t, "agent "+testToken+"\n")
	empty := writeTokens(t, "# nobody\n")
	cases := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"non-loopback without tokens", []string{"--http", "0.0.0.0:0", "--allowed-host", "mcp.example"}, nil, "MCP_AUTH_TOKENS_FILE is not set"},
		{"named host without tokens", []string{"--http", "mcp.example:0"}, nil, "MCP_AUTH_TOKENS_FILE is not set"},
		{"tokens and insecure", []string{"--http", "127.0.0.1:0", "--insecure-no-auth"}, map[string]string{envTokensFile: tokens}, "keep one"},
		{"tokens and insecure env", []string{"--http", "127.0.0.1:0"}, map[string]string{envTokensFile: tokens, envInsecure: "true"}, "keep one"},
		{"wildcard without host names", []string{"--http", ":0", "--insecure-no-auth"}, nil, "--allowed-host"},
		{"insecure not a boolean", []string{"--http", "127.0.0.1:0"}, map[string]string{envInsecure: "yes"}, "must be true, false, 1 or 0"},
		{"empty token file", []string{"--http", "127.0.0.1:0"}, map[string]string{envTokensFile: empty}, "holds no tokens"},
		{"missing token file", []string{"--http", "127.0.0.1:0"}, map[string]string{envTokensFile: empty + ".missing"}, "token file"},
		{"address without port", []string{"--http", "127.0.0.1"}, nil, "host:port"},
		{"allowed host with scheme", []string{"--allowed-host", "https://x"}, nil, "bare host name"},
		{"stray argument", []string{"--http", "127.0.0.1:0", "extra"}, nil, "unexpected argument"},
		{"oauth and insecure", []string{"--http", "127.0.0.1:0", "--insecure-no-auth"}, map[string]string{envOAuthIssuer: "https://login.korral.example", "MCP_PUBLIC_URL": "https://mcp.korral.example"}, "OAUTH_ISSUER is set and so is --insecure-no-auth"},
		// Checked before anything listens: the issuer is not reachable.
		{"oauth issuer unreachable", []string{"--http", "127.0.0.1:0"}, map[string]string{envOAuthIssuer: "http://127.0.0.1:1", "MCP_PUBLIC_URL": "https://mcp.korral.example"}, "OAUTH_ISSUER: issuer metadata"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, stderr := testEnv(t, up.URL, tc.vars)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Run(ctx, append([]string{"serve"}, tc.args...), env)
			var exit *ExitError
			if !errors.As(err, &exit) || exit.Code != 2 {
				t.Fatalf("got %v, want exit code 2\nstderr:\n%s", err, stderr.String())
			}
			if !strings.Contains(err.Error()+stderr.String(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(stderr.String(), "http.listening") {
				t.Fatal("the server started listening")
			}
		})
	}
	if *calls != 0 {
		t.Fatalf("%d requests reached StoreLink", *calls)
	}
}

// running is a `serve` run in this process.
type running struct {
	base   string // http://127.0.0.1:PORT
	stderr *syncBuffer
	env    Env
	cancel context.CancelFunc
	done   chan error
}

// startServe runs `serve` until the test ends and waits for its address.
func startServe(t *testing.T, env Env, stderr *syncBuffer, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{stderr: stderr, env: env, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- Run(ctx, append([]string{"serve", "--http", "127.0.0.1:0"}, args...), env) }()
	t.Cleanup(func() { r.stop(t) })
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range logLines(stderr.String()) {
			if l["msg"] == "http.listening" {
				r.base = "http://" + l["addr"].(string)
				return r
			}
		}
		select {
		case err := <-r.done:
			t.Fatalf("serve ended before listening: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not listen:\n%s", stderr.String())
	return nil
}

func (r *running) stop(t *testing.T) {
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok && err != nil {
			t.Errorf("serve: %v", err)
		}
		close(r.done)
	case <-time.After(30 * time.Second):
		t.Error("serve did not stop")
	}
}

func logLines(s string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// post sends body to /mcp with the given headers and returns the status.
func post(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for k, v := range hdr {
		if k == "Host" {
			req.Host = v
			continue
		}
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<16))
	return resp.StatusCode, string(b)
}

// TestServeWiresTheTransport: the token file, --allowed-host and the session
// caps of the configuration reach the transport (package httpserver tests
// each guard itself).
func TestServeWiresTheTransport(t *testing.T) {
	up, calls := failingUpstream(t)
	env, stderr := testEnv(t, up.URL, map[string]string{
		envTokensFile:                     writeTokens(t, "agent "+testToken+"\n"),
		"MCP_HTTP_MAX_SESSIONS_PER_TOKEN": "1",
	})
	r := startServe(t, env, stderr, "--allowed-host", "mcp.korral.example")
	mcpURL := r.base + "/mcp"
	bearer := "Bearer " + testToken
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", map[string]string{}, http.StatusUnauthorized},
		{"foreign host", map[string]string{"Authorization": bearer, "Host": "evil.example.com"}, http.StatusMisdirectedRequest},
		{"allowed host name", map[string]string{"Authorization": bearer, "Host": "mcp.korral.example"}, http.StatusOK},
		{"beyond the per-token cap", map[string]string{"Authorization": bearer}, http.StatusServiceUnavailable},
	} {
		if got, body := post(t, mcpURL, initBody, tc.hdr); got != tc.want {
			t.Fatalf("%s: status %d, want %d: %s", tc.name, got, tc.want, body)
		}
	}
	if *calls != 0 {
		t.Fatalf("%d requests reached StoreLink", *calls)
	}
	var order []string
	for _, l := range logLines(stderr.String()) {
		switch msg := l["msg"].(string); msg {
		case "auth.tokens_loaded", "server.start", "http.listening":
			order = append(order, msg)
		}
	}
	if strings.Join(order, " ") != "auth.tokens_loaded server.start http.listening" {
		t.Fatalf("start-up lines %v", order)
	}
	if strings.Contains(stderr.String(), testToken) {
		t.Fatal("a token reached the log")
	}
}

// bearerTransport adds the token to every request of an MCP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func TestServeToolCallsNameTheTokenInTheAuditTrail(t *testing.T) {
	for _, stateless := range []bool{false, true} {
		name := "stateful"
		args := []string{}
		if stateless {
			name, args = "stateless", []string{"--stateless"}
		}
		t.Run(name, func(t *testing.T) {
			up, _ := failingUpstream(t)
			env, stderr := testEnv(t, up.URL, map[string]string{envTokensFile: writeTokens(t, "dairy-agent "+testToken+"\n")})
			r := startServe(t, env, stderr, args...)

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			client := mcp.NewClient(&mcp.Implementation{Name: "unit-agent", Version: "1"}, nil)
			cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
				Endpoint:   r.base + "/mcp",
				HTTPClient: &http.Client{Transport: bearerTransport{testToken}},
			}, nil)
			if err != nil {
				t.Fatalf("connect: %v\n%s", err, stderr.String())
			}
			defer cs.Close()
			tools, err := cs.ListTools(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, tl := range tools.Tools {
				names = append(names, tl.Name)
			}
			sort.Strings(names)
			want := "korral_check_stock_risk korral_get_order_status korral_list_authorized_stores korral_list_recent_sales korral_raise_replenishment_order"
			if strings.Join(names, " ") != want {
				t.Fatalf("tools: %v", names)
			}
			// StoreLink is down, so the call fails; the audit line is written
			// either way, and that is what this test is about.
			if _, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_get_order_status", Arguments: map[string]any{"order_id": "ord-1"}}); err != nil {
				t.Fatal(err)
			}

			var out bytes.Buffer
			auditEnv := env
			auditEnv.Stdout = &out
			if err := Run(ctx, []string{"audit", "--format", "json"}, auditEnv); err != nil {
				t.Fatal(err)
			}
			var rec struct {
				Client string `json:"client"`
				Tool   string `json:"tool"`
			}
			if err := json.Unmarshal(bytes.TrimSpace(out.Bytes()), &rec); err != nil {
				t.Fatalf("audit: %v: %s", err, out.String())
			}
			const wantWho = "token:dairy-agent (unit-agent)"
			if rec.Tool != "korral_get_order_status" || rec.Client != wantWho {
				t.Fatalf("audit record %+v, want client %q", rec, wantWho)
			}
		})
	}
}

func TestServeHealthAndReadiness(t *testing.T) {
	up, _ := failingUpstream(t)
	env, stderr := testEnv(t, up.URL, nil)
	r := startServe(t, env, stderr)
	get := func(path string) (int, map[string]string) {
		resp, err := http.Get(r.base + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var m map[string]string
		if err := json.NewDecoder(resp.Body).Decode(&m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		return resp.StatusCode, m
	}
	if code, m := get("/healthz"); code != http.StatusOK || m["status"] != "ok" {
		t.Fatalf("healthz: %d %v", code, m)
	}
	code, m := get("/readyz")
	if code != http.StatusOK || m["status"] != "ready" || m["ledger"] != "ok" || m["config"] != "loaded" || m["breaker"] != "closed" {
		t.Fatalf("readyz: %d %v", code, m)
	}
	// Health endpoints answer whatever the Host, so probes by pod IP work.
	req, _ := http.NewRequest(http.MethodGet, r.base+"/healthz", nil)
	req.Host = "10.1.2.3:8080"
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("healthz by IP: %d", resp.StatusCode)
	}
}

// TestReadinessReportsLedgerAndBreaker: what /readyz says about the app's
// parts (the transport adds draining).
func TestReadinessReportsLedgerAndBreaker(t *testing.T) {
	up, _ := failingUpstream(t)
	env, _ := testEnv(t, up.URL, map[string]string{"BREAKER_FAILURES": "1"})
	a, err := build(context.Background(), env, "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx := context.Background()

	// One failure opens the breaker: reported, but still ready.
	_, _ = a.up.Store(ctx, "47")
	if out, err := a.readiness(ctx); err != nil || out.Breaker != "open" || out.Ledger != "ok" || out.Database != "sqlite" || out.Upstream != "storelink" {
		t.Fatalf("open breaker: %+v %v", out, err)
	}
	_ = a.db.Close()
	if out, err := a.readiness(ctx); err == nil || out.Ledger != "unreachable" {
		t.Fatalf("ledger closed: %+v %v", out, err)
	}
}
