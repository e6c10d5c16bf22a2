package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mockstorelink"
)

// butterClock is the transcript's clock, at which the answers' sizes are stable.
const butterClock = "2026-11-27T14:30:00+01:00"

// TestAnswerSizes checks each tool's answer size in bytes against a budget:
// the model reads every answer in full. Raise a budget only with a reason.
// Run with -v to print the table (docs/benchmarks.md).
func TestAnswerSizes(t *testing.T) {
	dir := t.TempDir()
	p := e2etest.StartServer(t, []string{
		"STORELINK_MOCK_NOW=" + butterClock,
		"STATE_DB_PATH=" + filepath.Join(dir, "state.db"),
		"HOME=" + dir,
		"ALLOW_WRITES=true",
	})
	butter := mockstorelink.SKUButter
	order := map[string]any{"sku": butter, "store_id": "47", "quantity_units": 24,
		"reason": "Gap of 17 units: 22 sold in the last 24 h against 5 on hand; rounded up to whole cases."}
	confirmed := map[string]any{"confirm": true}
	for k, v := range order {
		confirmed[k] = v
	}
	rows := []struct {
		name   string
		tool   string
		args   map[string]any
		budget int
		// then runs after the call, for calls that need an earlier answer.
		then func(env map[string]any)
	}{
		{name: "stores (2 in keyring)", tool: "korral_list_authorized_stores", args: map[string]any{}, budget: 700},
		{name: "risk butter 47", tool: "korral_check_stock_risk", args: map[string]any{"sku": butter, "store_id": "47"}, budget: 1850},
		{name: "risk butter 47+102 (store_ids)", tool: "korral_check_stock_risk", args: map[string]any{"sku": butter, "store_ids": []any{"47", "102"}}, budget: 3350},
		{name: "risk injection 47", tool: "korral_check_stock_risk", args: map[string]any{"sku": mockstorelink.SKUInjection, "store_id": "47"}, budget: 1850},
		{name: "sales butter 47 (24 h)", tool: "korral_list_recent_sales", args: map[string]any{"sku": butter, "store_id": "47"}, budget: 1450},
		{name: "preview 24 butter 47", tool: "korral_raise_replenishment_order", args: order, budget: 1450},
		{name: "raise 24 butter 47", tool: "korral_raise_replenishment_order", args: confirmed, budget: 900,
			then: func(env map[string]any) { confirmed["order_id"] = data(t, env)["order_id"] }},
		{name: "order status", tool: "korral_get_order_status", budget: 520},
		{name: "error: store 55", tool: "korral_check_stock_risk", args: map[string]any{"sku": butter, "store_id": "55"}, budget: 300},
	}
	var table strings.Builder
	fmt.Fprintf(&table, "\n| Answer | Text bytes | Budget |\n|---|---:|---:|\n")
	for _, r := range rows {
		args := r.args
		if r.tool == "korral_get_order_status" {
			args = map[string]any{"store_id": "47", "order_id": confirmed["order_id"]}
		}
		text := answerText(t, p, r.tool, args)
		// Budgets exclude the embedded StoreLink's demo notice.
		if !strings.Contains(text, noticeField) {
			t.Errorf("%s: the demo answer carries no demo notice:\n%s", r.name, text)
		}
		size := len(text) - len(noticeField)
		fmt.Fprintf(&table, "| %s | %d | %d |\n", r.name, size, r.budget)
		if size > r.budget {
			t.Errorf("%s: %d bytes, over its budget of %d:\n%s", r.name, size, r.budget, text)
		}
		if r.then != nil {
			var env map[string]any
			if err := json.Unmarshal([]byte(text), &env); err != nil {
				t.Fatal(err)
			}
			r.then(env)
		}
	}
	t.Log(table.String())
}

// noticeField is the demo notice as an answer carries it.
var noticeField = func() string {
	b, _ := json.Marshal(mcpserver.DemoNotice)
	return `,"demo_notice":` + string(b)
}()

// answerText calls a tool and returns its text, checking a success's
// structured content agrees and a tool error has none.
func answerText(t *testing.T, p *e2etest.Proc, tool string, args map[string]any) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.CS.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		if res.StructuredContent != nil {
			t.Fatalf("%s: a tool error carries structured content", tool)
		}
		return text
	}
	structured, _ := json.Marshal(res.StructuredContent)
	var a, b any
	if json.Unmarshal([]byte(text), &a) != nil || json.Unmarshal(structured, &b) != nil || fmt.Sprint(a) != fmt.Sprint(b) {
		t.Fatalf("%s: text and structured content differ", tool)
	}
	return text
}
