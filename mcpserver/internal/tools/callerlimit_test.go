package tools

import (
	"context"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/callerlimit"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// rateLimitedCalls is storelink.mcp.rate_limited_calls by its limit label.
func rateLimitedCalls(t *testing.T, reader *sdkmetric.ManualReader) map[string]int64 {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if d, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "storelink.mcp.rate_limited_calls" {
				for _, p := range d.DataPoints {
					l, _ := p.Attributes.Value(attribute.Key("limit"))
					got[l.AsString()] += p.Value
				}
			}
		}
	}
	return got
}

// TestCallerOverItsRateIsRateLimited: past its burst, a caller's call gets
// RATE_LIMITED with retry_after_seconds, before any tool runs; the metric
// and the audit trail count it; once the wait has passed, the call runs.
func TestCallerOverItsRateIsRateLimited(t *testing.T) {
	now := testNow
	reader := sdkmetric.NewManualReader()
	sink := &auditCollector{}
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) {
		o.MeterProvider, o.Audit = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader)), sink
		o.CallerLimits = callerlimit.Limits{CallsPerMinute: 20, Burst: 2, Now: func() time.Time { return now }}
	})
	risk := map[string]any{"store_id": "47", "sku": "8847291"}
	for i := range 2 {
		if env, _ := callTool(t, s, "korral_check_stock_risk", risk); errCode(env) != "" {
			t.Fatalf("call %d within the burst: %v", i+1, env)
		}
	}
	before := f.callsFor("47")
	env, _ := callTool(t, s, "korral_check_stock_risk", risk)
	e, _ := env["error"].(map[string]any)
	if errCode(env) != "RATE_LIMITED" || e["retry_after_seconds"] != 3.0 {
		t.Fatalf("the third call at once: %v; want RATE_LIMITED, retry after 3 s (20 a minute)", env)
	}
	if f.callsFor("47") != before {
		t.Fatal("a rate-limited call reached StoreLink")
	}
	if got := rateLimitedCalls(t, reader); got["calls"] != 1 {
		t.Fatalf("storelink.mcp.rate_limited_calls %v, want calls=1", got)
	}
	events := sink.take()
	if last := events[len(events)-1]; last.ErrorCode != "RATE_LIMITED" || last.Tool != "korral_check_stock_risk" || len(events) != 3 {
		t.Fatalf("audit: %d events, the last %+v; want 3, the last RATE_LIMITED", len(events), last)
	}
	now = now.Add(3 * time.Second)
	if env, _ := callTool(t, s, "korral_check_stock_risk", risk); errCode(env) != "" {
		t.Fatalf("after the wait: %v", env)
	}
}

// TestAnotherCallerIsServedWhileOneIsLimited: the limit is per token (or
// OAuth subject, or stdio session), and the caller rides the context to
// the StoreLink budget.
func TestAnotherCallerIsServedWhileOneIsLimited(t *testing.T) {
	s := newServer(Options{SessionName: "stdio-1", CallerLimits: callerlimit.Limits{CallsPerMinute: 60, Burst: 1,
		Now: func() time.Time { return testNow }}})
	var reached []string
	h := s.limitCallers(func(ctx context.Context, _ string, _ mcp.Request) (mcp.Result, error) {
		reached = append(reached, callerlimit.From(ctx))
		return &mcp.CallToolResult{}, nil
	})
	call := func(user string) bool {
		req := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "korral_list_authorized_stores"}}
		if user != "" {
			req.Extra = &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: user}}
		}
		res, err := h(context.Background(), "tools/call", req)
		if err != nil {
			t.Fatal(err)
		}
		return !res.(*mcp.CallToolResult).IsError
	}
	if !call("sweeper") || call("sweeper") {
		t.Fatal("token sweeper: want its first call served and its second limited")
	}
	if !call("other") || !call("oauth:jana") || !call("") {
		t.Fatal("another token, an OAuth subject or the stdio session was limited by the sweeper's calls")
	}
	if call("") || call("other") {
		t.Fatal("a caller's second call at once was served")
	}
	want := []string{"token:sweeper", "token:other", "oauth:jana", "stdio:stdio-1"}
	if anon := newServer(Options{}).callerOf(&mcp.CallToolRequest{}); anon != "anonymous" {
		t.Fatalf("a call with no token, session or stdio name is from %q, want anonymous", anon)
	}
	if len(reached) != len(want) {
		t.Fatalf("callers that reached the tools: %v, want %v", reached, want)
	}
	for i := range want {
		if reached[i] != want[i] {
			t.Fatalf("callers that reached the tools: %v, want %v", reached, want)
		}
	}
}
