package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

func TestOrderArgsDifferInKeyAndReason(t *testing.T) {
	a, b := orderArgs("p", 1), orderArgs("p", 2)
	if a["idempotency_key"] == b["idempotency_key"] || a["reason"] == b["reason"] {
		t.Fatalf("two orders share a key or a reason: %v %v", a, b)
	}
	if a["confirm"] != true || a["quantity_units"] != orderUnits || orderUnits > 500 {
		t.Fatalf("not a confirmed order within the default MAX_ORDER_UNITS: %v", a)
	}
	if orderArgs("p", 1)["idempotency_key"] == orderArgs("q", 1)["idempotency_key"] {
		t.Fatal("two phases share a key")
	}
}

func TestRaisedAcceptsOnlyARaisedOrder(t *testing.T) {
	text := func(s string, isErr bool) *mcp.CallToolResult {
		return &mcp.CallToolResult{IsError: isErr, Content: []mcp.Content{&mcp.TextContent{Text: s}}}
	}
	if err := raised(text(`{"ok":true,"data":{"mode":"raised","order_id":"ord-1"}}`, false)); err != nil {
		t.Fatal(err)
	}
	for name, res := range map[string]*mcp.CallToolResult{
		"preview":   text(`{"ok":true,"data":{"mode":"preview"}}`, false),
		"replay":    text(`{"ok":true,"data":{"mode":"replay","order_id":"ord-1"}}`, false),
		"no id":     text(`{"ok":true,"data":{"mode":"raised"}}`, false),
		"tool err":  text(`{"ok":false,"error":{"code":"ORDER_IN_FLIGHT"}}`, true),
		"not json":  text(`oops`, false),
		"no result": {},
	} {
		if err := raised(res); err == nil {
			t.Errorf("%s: counted as raised", name)
		}
	}
}

func TestWithoutVar(t *testing.T) {
	got := withoutVar([]string{"A=1", "STATE_DB_PATH=/x", "STATE_DB_PATH_X=2", "B=3"}, "STATE_DB_PATH")
	if strings.Join(got, " ") != "A=1 STATE_DB_PATH_X=2 B=3" {
		t.Fatalf("%v", got)
	}
}

func TestWritesMarkdownComparesEachRunWithItsOwnSQLiteFigures(t *testing.T) {
	w := func(backend string, replicas int, p50, rate float64) writeResult {
		return writeResult{Backend: backend, Replicas: replicas, Raised: 10, MockOrders: 10,
			Latency: latencies{Calls: 10, P50MS: p50, P99MS: 2 * p50, CallsPerSec: rate}}
	}
	r := &report{Config: map[string]any{"callers": 8, "write_orders": 10, "write_duration": "1s"}, Runs: []runResult{
		{Writes: []writeResult{w("sqlite", 1, 10, 400), w("postgres", 2, 20, 100)}},
		{Writes: []writeResult{w("sqlite", 1, 20, 200), w("postgres", 2, 30, 100)}},
		{Writes: []writeResult{w("sqlite", 1, 5, 800)}}, // PostgreSQL skipped in this run
	}}
	var b strings.Builder
	r.writesMarkdown(func(f string, a ...any) { b.WriteString(strings.TrimSpace(fmtS(f, a...)) + "\n") })
	out := b.String()
	for _, want := range []string{
		"| sqlite, 1 replica(s) | 10 | 10.0 (5.0–20.0) |",
		"| postgres, 2 replica(s) | 10 | 25.0 (20.0–30.0) |",
		// Ratios per run (2.0 and 1.5; 0.25 and 0.5), the third run has no pair.
		"p50 1.75 (1.50–2.00)",
		"throughput 0.38 (0.25–0.50)",
		"| 10 / 10 |",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("missing %q in:\n%s", want, out)
		}
	}
}

func fmtS(f string, a ...any) string { return fmt.Sprintf(f, a...) }

func TestSplitOrdersPairsHandlerAndPostByCallID(t *testing.T) {
	a := strings.NewReader(`{"msg":"tool.start","call_id":"c1","tool":"korral_raise_replenishment_order"}
{"msg":"upstream.request","call_id":"c1","method":"GET","route":"/v1/skus/{sku}","status":200,"duration_ms":50}
{"msg":"upstream.request","call_id":"c1","method":"POST","route":"/v1/stores/{store_id}/replenishment","status":201,"duration_ms":3}
{"msg":"tool.ok","call_id":"c1","tool":"korral_raise_replenishment_order","duration_ms":10}
not json at all
{"msg":"tool.ok","call_id":"c9","tool":"korral_check_stock_risk","duration_ms":99}
{"msg":"upstream.request","call_id":"c9","method":"GET","route":"/v1/stores/{store_id}/inventory","status":200,"duration_ms":99}
`)
	b := strings.NewReader(`{"msg":"upstream.request","call_id":"c2","method":"POST","route":"/v1/stores/{store_id}/replenishment","status":201,"duration_ms":5}
{"msg":"tool.ok","call_id":"c2","tool":"korral_raise_replenishment_order","duration_ms":20}
{"msg":"upstream.request","call_id":"c3","method":"POST","route":"/v1/stores/{store_id}/replenishment","status":503,"duration_ms":1}
{"msg":"tool.err","call_id":"c3","tool":"korral_raise_replenishment_order","duration_ms":2}
{"msg":"upstream.request","call_id":"c4","method":"POST","route":"/v1/stores/{store_id}/replenishment","status":201,"duration_ms":4}
{"msg":"tool.ok","call_id":"c4","tool":"korral_raise_replenishment_order","duration_ms":12}
{"msg":"upstream.request","call_id":"c5","method":"POST","route":"/v1/stores/{store_id}/replenishment","status":201,"duration_ms":4}
{"msg":"tool.err","call_id":"c5","tool":"korral_raise_replenishment_order","duration_ms":6}
`)
	got, err := splitOrders(a, b)
	if err != nil {
		t.Fatal(err)
	}
	// c1: 10 = 3 + 7; c4: 12 = 4 + 8; c2: 20 = 5 + 15. c3 and c5 failed, c9 is another tool.
	want := orderSplit{Orders: 3, HandlerP50MS: 12, PostP50MS: 4, NotPostP50MS: 8}
	if got != want {
		t.Fatalf("got %+v, want %+v", got, want)
	}
}
