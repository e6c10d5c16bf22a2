package tools

import (
	"context"
	"errors"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// traced connects a client to a server whose spans go to an in-memory
// exporter and whose metrics to a manual reader.
func traced(t *testing.T, up Upstream, audit AuditSink) (session, *tracetest.InMemoryExporter, *sdkmetric.ManualReader) {
	t.Helper()
	exp := tracetest.NewInMemoryExporter()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSyncer(exp))
	reader := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()); _ = mp.Shutdown(context.Background()) })
	s := connect(t, up, mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) {
		o.TracerProvider, o.MeterProvider, o.Audit = tp, mp, audit
	})
	return s, exp, reader
}

func spanAttrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, kv := range s.Attributes() {
		out[string(kv.Key)] = kv.Value.String()
	}
	return out
}

func serverSpan(t *testing.T, exp *tracetest.InMemoryExporter, name string) sdktrace.ReadOnlySpan {
	t.Helper()
	var names []string
	for _, s := range exp.GetSpans().Snapshots() {
		if s.Name() == name {
			return s
		}
		names = append(names, s.Name())
	}
	t.Fatalf("no span %q among %q", name, names)
	return nil
}

// TestToolCallSpanFollowsTheMCPConventions checks a tool call's server
// span: name, attributes, the caller's traceparent, and the trace_id in
// the audit event.
func TestToolCallSpanFollowsTheMCPConventions(t *testing.T) {
	audit := &auditCollector{}
	s, exp, _ := traced(t, newFake(), audit)
	const parentTrace = "4bf92f3577b34da6a3ce929d0e0e4736"
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{
		Meta: mcp.Meta{"traceparent": "00-" + parentTrace + "-00f067aa0ba902b7-01"},
		Name: "korral_check_stock_risk", Arguments: map[string]any{"store_id": "47", "sku": "8847291"},
	})
	if err != nil || res.IsError {
		t.Fatalf("call: %v %+v", err, res)
	}
	sp := serverSpan(t, exp, "tools/call korral_check_stock_risk")
	if got := sp.SpanContext().TraceID().String(); got != parentTrace {
		t.Errorf("trace %s, want the caller's %s", got, parentTrace)
	}
	if got := sp.Parent().SpanID().String(); got != "00f067aa0ba902b7" {
		t.Errorf("parent span %s", got)
	}
	a := spanAttrs(sp)
	for k, want := range map[string]string{
		"mcp.method.name": "tools/call", "gen_ai.tool.name": "korral_check_stock_risk", "gen_ai.operation.name": "execute_tool",
		"network.transport": "pipe",
	} {
		if a[k] != want {
			t.Errorf("%s = %q, want %q (all: %v)", k, a[k], want, a)
		}
	}
	if a["mcp.protocol.version"] == "" {
		t.Error("no mcp.protocol.version")
	}
	if _, ok := a["error.type"]; ok {
		t.Errorf("a successful call has error.type %q", a["error.type"])
	}
	if sp.SpanKind().String() != "server" {
		t.Errorf("kind %s", sp.SpanKind())
	}
	evs := audit.take()
	if len(evs) != 1 || evs[0].TraceID != parentTrace {
		t.Fatalf("audit events %+v, want one with trace %s", evs, parentTrace)
	}
	if a["storelink.call_id"] != evs[0].CallID {
		t.Errorf("span call id %q, audit %q", a["storelink.call_id"], evs[0].CallID)
	}
}

// TestToolErrorSpanAndMetric checks error.type tool_error, the bounded
// error code, and the operation histogram's labels.
func TestToolErrorSpanAndMetric(t *testing.T) {
	f := newFake()
	f.err = errors.New("dial tcp 10.1.2.3:443: connection refused")
	s, exp, reader := traced(t, f, nil)
	_, res := callTool(t, s, "korral_check_stock_risk", map[string]any{"store_id": "47", "sku": "8847291"})
	if !res.IsError {
		t.Fatal("want a tool error")
	}
	a := spanAttrs(serverSpan(t, exp, "tools/call korral_check_stock_risk"))
	if a["error.type"] != "tool_error" || a["storelink.error.code"] == "" {
		t.Errorf("attributes %v", a)
	}
	// An unknown tool is a JSON-RPC error: its code is the error type, and
	// the made-up name is no label.
	_, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "korral_made_up"})
	if err == nil {
		t.Fatal("unknown tool answered")
	}
	if a := spanAttrs(serverSpan(t, exp, "tools/call korral_made_up")); a["error.type"] != "-32602" {
		t.Errorf("unknown tool: attributes %v", a)
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	seen := map[string]uint64{}
	rejected := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch d := m.Data.(type) {
			case metricdata.Histogram[float64]:
				if m.Name != "mcp.server.operation.duration" {
					continue
				}
				for _, p := range d.DataPoints {
					tool, _ := p.Attributes.Value(attribute.Key("gen_ai.tool.name"))
					et, _ := p.Attributes.Value(attribute.Key("error.type"))
					seen[tool.String()+"|"+et.String()] += p.Count
				}
			case metricdata.Sum[int64]:
				if m.Name != "storelink.mcp.rejected_calls" {
					continue
				}
				for _, p := range d.DataPoints {
					r, _ := p.Attributes.Value(attribute.Key("reason"))
					rejected[r.String()] += p.Value
				}
			}
		}
	}
	if seen["korral_check_stock_risk|tool_error"] != 1 || seen["_OTHER|-32602"] != 1 {
		t.Errorf("operation counts %v", seen)
	}
	if rejected["unknown_tool"] != 1 {
		t.Errorf("rejected %v", rejected)
	}
}

// TestTracingNeverChangesTheAnswer compares the same calls with and without
// providers: the answers are byte for byte the same.
func TestTracingNeverChangesTheAnswer(t *testing.T) {
	plain := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), nil)
	withTel, _, _ := traced(t, newFake(), nil)
	for _, tc := range []struct {
		tool string
		args map[string]any
	}{
		{"korral_list_authorized_stores", map[string]any{}},
		{"korral_check_stock_risk", map[string]any{"store_id": "47", "sku": "8847291"}},
		{"korral_check_stock_risk", map[string]any{"store_id": "999", "sku": "8847291"}},
	} {
		a, _ := plain.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args})
		b, _ := withTel.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tc.tool, Arguments: tc.args,
			Meta: mcp.Meta{"traceparent": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"}})
		if a.Content[0].(*mcp.TextContent).Text != b.Content[0].(*mcp.TextContent).Text || a.IsError != b.IsError {
			t.Errorf("%s: answers differ with telemetry on", tc.tool)
		}
	}
}

// TestCallersTraceIsAuditedWithTelemetryOff: without providers the server
// makes no spans, yet the audit row still names the trace the caller sent
// in params._meta.
func TestCallersTraceIsAuditedWithTelemetryOff(t *testing.T) {
	sink := &auditCollector{}
	s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) { o.Audit = sink })
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	_, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "korral_list_authorized_stores", Arguments: map[string]any{},
		Meta: mcp.Meta{"traceparent": "00-" + trace + "-00f067aa0ba902b7-01"}})
	if err != nil {
		t.Fatal(err)
	}
	events := sink.take()
	if len(events) != 1 || events[0].TraceID != trace {
		t.Fatalf("audit rows %+v, want one with trace_id %s", events, trace)
	}
}
