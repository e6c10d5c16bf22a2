package e2e_test

// Traces end to end: the binary exports over OTLP/HTTP to a receiver in this
// test that decodes the protobuf messages.

import (
	"context"
	"encoding/hex"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	colmetricpb "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/protobuf/proto"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// otlpReceiver is a loopback OTLP/HTTP endpoint keeping every span and byte it is sent.
type otlpReceiver struct {
	srv *httptest.Server

	mu      sync.Mutex
	spans   []*tracepb.Span
	raw     []byte
	metrics int
}

func newOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	r.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		body, err := io.ReadAll(req.Body)
		if err != nil || req.Header.Get("Content-Type") != "application/x-protobuf" {
			http.Error(w, "want application/x-protobuf", http.StatusBadRequest)
			return
		}
		r.mu.Lock()
		defer r.mu.Unlock()
		r.raw = append(r.raw, body...)
		switch req.URL.Path {
		case "/v1/traces":
			var m coltracepb.ExportTraceServiceRequest
			if err := proto.Unmarshal(body, &m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			for _, rs := range m.ResourceSpans {
				for _, ss := range rs.ScopeSpans {
					r.spans = append(r.spans, ss.Spans...)
				}
			}
			b, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(b)
		case "/v1/metrics":
			var m colmetricpb.ExportMetricsServiceRequest
			if err := proto.Unmarshal(body, &m); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			r.metrics++
			b, _ := proto.Marshal(&colmetricpb.ExportMetricsServiceResponse{})
			w.Header().Set("Content-Type", "application/x-protobuf")
			_, _ = w.Write(b)
		default:
			http.NotFound(w, req)
		}
	}))
	t.Cleanup(r.srv.Close)
	return r
}

func (r *otlpReceiver) snapshot() ([]*tracepb.Span, []byte, int) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*tracepb.Span(nil), r.spans...), append([]byte(nil), r.raw...), r.metrics
}

func attrs(s *tracepb.Span) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes {
		v := kv.Value
		switch {
		case v.GetStringValue() != "":
			out[kv.Key] = v.GetStringValue()
		default:
			out[kv.Key] = strings.TrimSpace(strings.TrimPrefix(v.String(), "int_value:"))
		}
	}
	return out
}

// waitSpans waits until done accepts the spans received, for at most 30 s.
func (r *otlpReceiver) waitSpans(t *testing.T, what string, done func([]*tracepb.Span) bool) []*tracepb.Span {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		spans, _, _ := r.snapshot()
		if done(spans) {
			return spans
		}
		time.Sleep(100 * time.Millisecond)
	}
	spans, _, _ := r.snapshot()
	var names []string
	for _, s := range spans {
		names = append(names, s.Name)
	}
	t.Fatalf("%s: never received; spans so far: %q", what, names)
	return nil
}

func TestTracesReachACollectorOverOTLP(t *testing.T) {
	w := e2etest.NewWorld(t)
	rcv := newOTLPReceiver(t)
	const token = "trace-test-agent-token-0123456789abcdef"
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "buyer-agent "+token+"\n", time.Now())
	p := e2etest.StartHTTP(t, w.Env("ALLOW_WRITES=true", "MCP_AUTH_TOKENS_FILE="+tokens,
		"OTEL_EXPORTER_OTLP_ENDPOINT="+rcv.srv.URL, "OTEL_METRIC_EXPORT_INTERVAL=1000", "OTEL_SERVICE_NAME=storelink-e2e"),
		"--metrics", "127.0.0.1:0")
	// A 2025-11-25 session, so the span carries mcp.session.id.
	cs := p.ConnectAt(token, "traces-e2e", "2025-11-25")

	const parentTrace, parentSpan = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{
		Meta: mcp.Meta{"traceparent": "00-" + parentTrace + "-" + parentSpan + "-01"},
		Name: "korral_check_stock_risk", Arguments: map[string]any{"store_id": "47", "sku": mockstorelink.SKUButter},
	})
	if err != nil || res.IsError {
		t.Fatalf("risk check: %v %+v", err, res)
	}
	if env, err := e2etest.CallHTTP(t, cs, "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)); err != nil || env["ok"] != true {
		t.Fatalf("order: %v %v", err, env)
	}

	spans := rcv.waitSpans(t, "both tool calls with their StoreLink requests", func(ss []*tracepb.Span) bool {
		n := 0
		for _, s := range ss {
			if isServer(s, "tools/call korral_check_stock_risk") || isServer(s, "tools/call korral_raise_replenishment_order") {
				n++
			}
		}
		return n == 2
	})
	byTrace := map[string][]*tracepb.Span{}
	for _, s := range spans {
		id := hex.EncodeToString(s.TraceId)
		byTrace[id] = append(byTrace[id], s)
	}
	callID := checkCallerTrace(t, w, byTrace, parentTrace, parentSpan)
	checkOrderTrace(t, byTrace, parentTrace)
	checkTraceIDLogged(t, p, w, callID, parentTrace)
	checkNothingSecretExported(t, rcv, p, w, token)
}

// isServer says whether s is the server span called name.
func isServer(s *tracepb.Span, name string) bool {
	return s.Kind == tracepb.Span_SPAN_KIND_SERVER && s.Name == name
}

// checkCallerTrace: the risk check's span is a child of the caller's, and its
// StoreLink requests are its children. It returns the call's id.
func checkCallerTrace(t *testing.T, w *e2etest.World, byTrace map[string][]*tracepb.Span, parentTrace, parentSpan string) string {
	t.Helper()
	risk := byTrace[parentTrace]
	var call *tracepb.Span
	for _, s := range risk {
		if isServer(s, "tools/call korral_check_stock_risk") {
			call = s
		}
	}
	if call == nil {
		t.Fatalf("no tool span in the caller's trace %s; traces: %d", parentTrace, len(byTrace))
	}
	if hex.EncodeToString(call.ParentSpanId) != parentSpan {
		t.Errorf("tool span's parent %x, want the caller's %s", call.ParentSpanId, parentSpan)
	}
	a := attrs(call)
	for k, want := range map[string]string{"mcp.method.name": "tools/call", "gen_ai.tool.name": "korral_check_stock_risk",
		"gen_ai.operation.name": "execute_tool", "network.transport": "tcp"} {
		if a[k] != want {
			t.Errorf("tool span %s = %q, want %q (all %v)", k, a[k], want, a)
		}
	}
	for _, k := range []string{"mcp.session.id", "mcp.protocol.version", "storelink.call_id"} {
		if a[k] == "" {
			t.Errorf("tool span has no %s: %v", k, a)
		}
	}
	children := map[string]map[string]string{}
	for _, s := range risk {
		if s.Kind == tracepb.Span_SPAN_KIND_CLIENT {
			if string(s.ParentSpanId) != string(call.SpanId) {
				t.Errorf("StoreLink span %q is not a child of the tool span", s.Name)
			}
			children[s.Name] = attrs(s)
		}
	}
	inv, ok := children["GET /v1/stores/{store_id}/inventory"]
	if !ok {
		t.Fatalf("no inventory request span among %v", children)
	}
	for k, want := range map[string]string{"storelink.store_id": "47", "storelink.attempt": "1", "http.response.status_code": "200",
		"storelink.operation": "GET /v1/stores/{store_id}/inventory", "url.full": w.Mock.URL + "/v1/stores/{store_id}/inventory"} {
		if inv[k] != want {
			t.Errorf("inventory span %s = %q, want %q (all %v)", k, inv[k], want, inv)
		}
	}
	return a["storelink.call_id"]
}

// checkOrderTrace: one trace per call; the send and ledger transitions are under the tool span.
func checkOrderTrace(t *testing.T, byTrace map[string][]*tracepb.Span, parentTrace string) {
	t.Helper()
	var orderTrace []*tracepb.Span
	for id, ss := range byTrace {
		for _, s := range ss {
			if isServer(s, "tools/call korral_raise_replenishment_order") {
				if id == parentTrace {
					t.Error("the second call joined the first call's trace")
				}
				orderTrace = ss
			}
		}
	}
	names := map[string]bool{}
	for _, s := range orderTrace {
		names[s.Name] = true
	}
	for _, want := range []string{"replenish send", "ledger reserve", "POST /v1/stores/{store_id}/replenishment"} {
		if !names[want] {
			t.Errorf("the order's trace has no %q span: %v", want, names)
		}
	}
}

// checkTraceIDLogged: the trace id is in the call's log lines and audit row.
func checkTraceIDLogged(t *testing.T, p *e2etest.HTTPProc, w *e2etest.World, callID, parentTrace string) {
	t.Helper()
	lines := 0
	for _, l := range p.LogLines() {
		if l["call_id"] == callID {
			lines++
			if l["trace_id"] != parentTrace {
				t.Errorf("log line %v of the call has trace_id %v", l["msg"], l["trace_id"])
			}
		}
	}
	if lines < 3 {
		t.Errorf("only %d log lines carry call %s", lines, callID)
	}
	found := false
	for _, row := range auditRows(t, w) {
		if row["call_id"] == callID {
			found = true
			if row["trace_id"] != parentTrace {
				t.Errorf("audit row %v: trace_id %v", row, row["trace_id"])
			}
		}
	}
	if !found {
		t.Errorf("no audit row for call %s", callID)
	}
}

// checkNothingSecretExported: no key, token or header value was exported, metrics included.
func checkNothingSecretExported(t *testing.T, rcv *otlpReceiver, p *e2etest.HTTPProc, w *e2etest.World, token string) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if _, _, n := rcv.snapshot(); n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no metrics push arrived")
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, raw, _ := rcv.snapshot()
	resp, err := http.Get("http://" + p.MetricsAddr(t) + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	scraped, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	secrets := map[string]string{"bearer token": token}
	for store, key := range w.Mock.Server.DefaultKeyring() {
		secrets["key of store "+store] = key
	}
	for what, v := range secrets {
		if strings.Contains(string(raw), v) {
			t.Errorf("the %s reached the collector", what)
		}
		if strings.Contains(string(scraped), v) {
			t.Errorf("the %s is in /metrics", what)
		}
	}
	if strings.Contains(string(raw), mockstorelink.SKUButter) {
		t.Errorf("a SKU reached the collector (a filled path or query)")
	}
}

// TestUnreachableCollectorCostsOneWarning: with no collector listening,
// calls answer as without tracing and the failure is logged once.
func TestUnreachableCollectorCostsOneWarning(t *testing.T) {
	w := e2etest.NewWorld(t)
	dead := "http://127.0.0.1:" + strconv.Itoa(freePort(t))
	p := e2etest.StartHTTP(t, w.Env("OTEL_EXPORTER_OTLP_ENDPOINT="+dead, "OTEL_METRIC_EXPORT_INTERVAL=1000"))
	cs := p.Connect("", "dead-collector")
	for range 5 {
		env, err := e2etest.CallHTTP(t, cs, "korral_check_stock_risk", map[string]any{"store_id": "47", "sku": mockstorelink.SKUButter})
		if err != nil || env["ok"] != true {
			t.Fatalf("call with an unreachable collector: %v %v", err, env)
		}
	}
	deadline := time.Now().Add(30 * time.Second)
	for !p.Logged("telemetry.export_failed") {
		if time.Now().After(deadline) {
			t.Fatalf("no export warning:\n%s", p.Stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}
	// The final flush at shutdown fails too; still one warning.
	p.Stop()
	n := 0
	for _, l := range p.LogLines() {
		if l["msg"] == "telemetry.export_failed" {
			n++
		}
	}
	if n != 1 {
		t.Errorf("%d export warnings, want one", n)
	}
	if !p.Logged("server.stop") {
		t.Errorf("the server did not stop cleanly:\n%s", p.Stderr.String())
	}
}
