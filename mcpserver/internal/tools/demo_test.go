package tools

import (
	"encoding/json"
	"strings"
	"testing"
)

func withLedger(t *testing.T, embedded bool) func(*Options) {
	return func(o *Options) {
		db := sharedLedger(t)
		o.Writes = &WriteOptions{MaxOrderUnits: 500, Ledger: db}
		o.EmbeddedDemo = embedded
	}
}

// TestDemoNoticeOnlyWithTheEmbeddedStoreLink: the notice is in the
// instructions, every success and every error only when the data is made up.
func TestDemoNoticeOnlyWithTheEmbeddedStoreLink(t *testing.T) {
	for _, embedded := range []bool{true, false} {
		s := connect(t, newFake(), mustKeyring(t, `{"47":"k1"}`), withLedger(t, embedded))
		instructions := s.cs.InitializeResult().Instructions
		stores, _ := callTool(t, s, "korral_list_authorized_stores", map[string]any{})
		preview, _ := callTool(t, s, "korral_raise_replenishment_order", map[string]any{"sku": "8847291", "quantity_units": 12, "reason": "restock"})
		if preview["ok"] != true {
			t.Fatalf("preview: %v", preview)
		}
		risk, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291"})
		sales, _ := callTool(t, s, "korral_list_recent_sales", map[string]any{"sku": "8847291"})
		refused, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": "RO-none", "store_id": "55"})
		if refused["ok"] != false {
			t.Fatalf("order status of store 55: %v", refused)
		}
		for what, got := range map[string]string{
			"instructions": instructions,
			"store list":   str(stores["data"].(map[string]any)["demo_notice"]),
			"write result": str(preview["data"].(map[string]any)["demo_notice"]),
			"risk check":   str(risk["data"].(map[string]any)["demo_notice"]),
			"sales":        str(sales["data"].(map[string]any)["demo_notice"]),
			"tool error":   str(refused["demo_notice"]),
		} {
			if has := strings.Contains(got, DemoNotice); has != embedded {
				t.Errorf("embedded=%v: %s carries the notice: %v (%q)", embedded, what, has, got)
			}
		}
	}
}

// TestInstructionsNameOnlyOfferedTools: a read-only server's instructions
// do not tell the model about a write tool it does not have.
func TestInstructionsNameOnlyOfferedTools(t *testing.T) {
	for _, writes := range []bool{true, false} {
		s := connect(t, newFake(), mustKeyring(t, `{"47":"k1"}`), func(o *Options) {
			if writes {
				o.Writes = &WriteOptions{MaxOrderUnits: 500}
			}
		})
		instructions := s.cs.InitializeResult().Instructions
		tools, err := s.cs.ListTools(t.Context(), nil)
		if err != nil {
			t.Fatal(err)
		}
		offered := map[string]bool{}
		for _, tool := range tools.Tools {
			offered[tool.Name] = true
		}
		for _, name := range []string{"korral_list_authorized_stores", "korral_check_stock_risk", "korral_list_recent_sales",
			"korral_get_order_status", "korral_raise_replenishment_order"} {
			if strings.Contains(instructions, name) != offered[name] {
				t.Errorf("writes=%v: instructions name %s: %v, offered: %v", writes, name, strings.Contains(instructions, name), offered[name])
			}
		}
	}
}

func str(v any) string { s, _ := v.(string); return s }

func TestWithDemoNotice(t *testing.T) {
	for in, want := range map[string]string{
		`{}`:          `{"demo_notice":` + quote(DemoNotice) + `}`,
		`{"a":1}`:     `{"a":1,"demo_notice":` + quote(DemoNotice) + `}`,
		"{\"a\":1}\n": `{"a":1,"demo_notice":` + quote(DemoNotice) + `}`,
	} {
		got, err := withDemoNotice([]byte(in))
		if err != nil || string(got) != want {
			t.Errorf("withDemoNotice(%q) = %s, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{`[]`, `null`, ``} {
		if _, err := withDemoNotice([]byte(in)); err == nil {
			t.Errorf("withDemoNotice(%q): no error", in)
		}
	}
}

func quote(s string) string { b, _ := json.Marshal(s); return string(b) }
