package e2e_test

// The metrics end to end: a real Prometheus scrapes `serve --http --metrics`
// during reads, an error, an order and an opened breaker, and PromQL checks
// the counts and the breaker gauge.

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// promServer is a throwaway Prometheus.
type promServer struct {
	base string
	cmd  *exec.Cmd
	logs *e2etest.SyncBuffer
}

// startPrometheus runs Prometheus scraping target every second until it is
// ready; it is stopped by PID at the end (killed after 10 s).
func startPrometheus(t *testing.T, bin, target string, header string) *promServer {
	t.Helper()
	dir := t.TempDir()
	auth := ""
	if header != "" {
		if err := os.WriteFile(filepath.Join(dir, "token"), []byte(header), 0o600); err != nil {
			t.Fatal(err)
		}
		auth = "\n    authorization:\n      credentials_file: " + filepath.Join(dir, "token")
	}
	cfg := fmt.Sprintf(`global:
  scrape_interval: 1s
  evaluation_interval: 1s
scrape_configs:
  - job_name: storelink-mcp
    static_configs:
      - targets: [%q]%s
`, target, auth)
	cfgPath := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfgPath, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	port := freePort(t)
	p := &promServer{base: fmt.Sprintf("http://127.0.0.1:%d", port), logs: &e2etest.SyncBuffer{}}
	p.cmd = exec.Command(bin, "--config.file="+cfgPath, "--storage.tsdb.path="+filepath.Join(dir, "data"),
		fmt.Sprintf("--web.listen-address=127.0.0.1:%d", port))
	p.cmd.Stdout, p.cmd.Stderr = p.logs, p.logs
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = p.cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = p.cmd.Process.Kill()
			<-done
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if resp, err := http.Get(p.base + "/-/ready"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return p
			}
		}
		select {
		case <-done:
			t.Fatalf("prometheus exited:\n%s", p.logs.String())
		case <-time.After(100 * time.Millisecond):
		}
	}
	t.Fatalf("prometheus did not get ready:\n%s", p.logs.String())
	return nil
}

// promSample is one series of an instant query's answer.
type promSample struct {
	Metric map[string]string
	Value  float64
}

func (p *promServer) query(t *testing.T, q string) []promSample {
	t.Helper()
	resp, err := http.Get(p.base + "/api/v1/query?query=" + url.QueryEscape(q))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var body struct {
		Status string `json:"status"`
		Error  string `json:"error"`
		Data   struct {
			Result []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&body); err != nil || body.Status != "success" {
		t.Fatalf("query %s: %v %s", q, err, body.Error)
	}
	var out []promSample
	for _, r := range body.Data.Result {
		s, _ := r.Value[1].(string)
		v, _ := strconv.ParseFloat(s, 64)
		out = append(out, promSample{Metric: r.Metric, Value: v})
	}
	return out
}

// waitQuery polls q for at most 30 s until check accepts it; failures show the last answer.
func (p *promServer) waitQuery(t *testing.T, q string, check func([]promSample) bool) []promSample {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	var got []promSample
	for time.Now().Before(deadline) {
		got = p.query(t, q)
		if check(got) {
			return got
		}
		time.Sleep(250 * time.Millisecond)
	}
	t.Fatalf("%s: last answer %+v\nprometheus:\n%s", q, got, p.logs.String())
	return nil
}

func TestPrometheusScrapesTheCallsAndTheBreaker(t *testing.T) {
	prom := e2etest.NeedTool(t, "prometheus", "prometheus")
	w := e2etest.NewWorld(t)
	p := e2etest.StartHTTP(t, w.Env("ALLOW_WRITES=true", "BREAKER_FAILURES=2", "BREAKER_COOLDOWN=10m"), "--metrics", "127.0.0.1:0")
	target := p.MetricsAddr(t)
	ps := startPrometheus(t, prom, target, "")
	cs := p.Connect("", "metrics-e2e")

	mustOK := func(name string, args map[string]any) {
		t.Helper()
		env, err := e2etest.CallHTTP(t, cs, name, args)
		if err != nil || env["ok"] != true {
			t.Fatalf("%s: %v %v", name, err, env)
		}
	}
	risk := map[string]any{"store_id": "47", "sku": mockstorelink.SKUButter}
	mustOK("korral_list_authorized_stores", map[string]any{})
	mustOK("korral_list_authorized_stores", map[string]any{})
	mustOK("korral_check_stock_risk", risk)
	// An error the model made: a store outside the keyring.
	if env, _ := e2etest.CallHTTP(t, cs, "korral_check_stock_risk", map[string]any{"store_id": "999", "sku": mockstorelink.SKUButter}); e2etest.Code(env) != "STORE_NOT_AUTHORIZED" {
		t.Fatalf("foreign store: %v", env)
	}
	mustOK("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))
	// Two failures open the breaker; later calls fail fast.
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, Status: 503})
	for range 3 {
		if env, _ := e2etest.CallHTTP(t, cs, "korral_check_stock_risk", risk); e2etest.Code(env) != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("under the fault: %v", env)
		}
	}

	waitCallCounts(t, ps)
	// The breaker is open (2) for this StoreLink.
	ps.waitQuery(t, `storelink_breaker_state`, func(got []promSample) bool {
		return len(got) == 1 && got[0].Value == 2 && got[0].Metric["storelink_upstream"] != ""
	})
	// 503s from StoreLink, then "none" while the breaker is open.
	ps.waitQuery(t, `sum by (http_response_status_class) (storelink_client_request_duration_seconds_count)`,
		func(got []promSample) bool {
			seen := map[string]float64{}
			for _, s := range got {
				seen[s.Metric["http_response_status_class"]] = s.Value
			}
			return seen["2xx"] >= 1 && seen["5xx"] >= 2 && seen["none"] >= 1
		})
	// The confirmed order is a raised ledger entry.
	ps.waitQuery(t, `storelink_ledger_entries{state="raised"}`, func(got []promSample) bool {
		return len(got) == 1 && got[0].Value == 1
	})
	ps.waitQuery(t, `sum(storelink_audit_write_duration_seconds_count{outcome="ok"})`, func(got []promSample) bool {
		return len(got) == 1 && got[0].Value == 8
	})
}

// waitCallCounts waits until Prometheus counts the test's tool calls by tool,
// error type and error code.
func waitCallCounts(t *testing.T, ps *promServer) {
	t.Helper()
	want := map[string]float64{
		"korral_list_authorized_stores|":                          2,
		"korral_check_stock_risk|":                                1,
		"korral_check_stock_risk|tool_error|STORE_NOT_AUTHORIZED": 1,
		"korral_check_stock_risk|tool_error|UPSTREAM_UNAVAILABLE": 3,
		"korral_raise_replenishment_order|":                       1,
	}
	const q = `sum by (gen_ai_tool_name, error_type, storelink_error_code) (mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call"})`
	key := func(m map[string]string) string {
		k := m["gen_ai_tool_name"] + "|" + m["error_type"]
		if m["storelink_error_code"] != "" {
			k += "|" + m["storelink_error_code"]
		}
		return k
	}
	ps.waitQuery(t, q, func(got []promSample) bool {
		seen := map[string]float64{}
		for _, s := range got {
			seen[key(s.Metric)] = s.Value
		}
		for k, v := range want {
			if seen[k] != v {
				return false
			}
		}
		return len(seen) == len(want)
	})
}

// TestMetricsEndpointIsItsOwn: /metrics is never on the MCP listener, never
// without --metrics, and off loopback only behind its own token.
func TestMetricsEndpointIsItsOwn(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartHTTP(t, w.Env())
	if p.Logged("metrics.listening") {
		t.Error("/metrics is served without --metrics")
	}
	resp, err := http.Get(p.Base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode == http.StatusOK {
		t.Errorf("the MCP listener answers /metrics")
	}

	// Not loopback without a token: refused before anything starts.
	_, stderr, exit := e2etest.RunCLI(t, w.Env(), "serve", "--http", "127.0.0.1:0", "--metrics", "0.0.0.0:0")
	if exit != 2 || !strings.Contains(stderr, "MCP_METRICS_TOKEN_FILE") {
		t.Errorf("open metrics: exit %d: %s", exit, stderr)
	}
	// The agents' token is refused as the metrics token.
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "buyer-agent agent-token-0123456789abcdef0123456789\n", time.Now())
	same := filepath.Join(w.Dir, "metrics-same")
	if err := os.WriteFile(same, []byte("agent-token-0123456789abcdef0123456789\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, exit = e2etest.RunCLI(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens, "MCP_METRICS_TOKEN_FILE="+same),
		"serve", "--http", "127.0.0.1:0", "--metrics", "127.0.0.1:0")
	if exit != 2 || !strings.Contains(stderr, "give /metrics a token no agent holds") {
		t.Errorf("shared token: exit %d: %s", exit, stderr)
	}

	// The agent's token does not open it; the metrics token does.
	own := filepath.Join(w.Dir, "metrics-token")
	if err := os.WriteFile(own, []byte("metrics-token-fedcba9876543210\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	q := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens, "MCP_METRICS_TOKEN_FILE="+own), "--metrics", "127.0.0.1:0")
	addr := "http://" + q.MetricsAddr(t) + "/metrics"
	for tok, want := range map[string]int{"": 401, "agent-token-0123456789abcdef0123456789": 401, "metrics-token-fedcba9876543210": 200} {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodGet, addr, nil)
		if tok != "" {
			req.Header.Set("Authorization", "Bearer "+tok)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("token %q: status %d, want %d", tok, resp.StatusCode, want)
		}
		if want == 200 && !strings.Contains(string(b), "storelink_breaker_state") {
			t.Errorf("metrics without the breaker gauge:\n%s", b)
		}
	}
}
