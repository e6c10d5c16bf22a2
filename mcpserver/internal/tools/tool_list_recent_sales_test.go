package tools

import "testing"

// TestListRecentSalesDefinition holds the tool's definition to its snapshot,
// testdata/tools/korral_list_recent_sales.golden.json.
func TestListRecentSalesDefinition(t *testing.T) {
	checkToolSnap(t, "korral_list_recent_sales")
}

func TestListRecentSalesIsBoundedAndSelfDescribing(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_list_recent_sales", map[string]any{"sku": "8847291", "limit": 5})
	data := env["data"].(map[string]any)
	// Thursday 26 Nov: the sales at 15:15 .. 21:15 fall within the last 24
	// hours (since 14:30): 7 sales of 2 units.
	items := data["items"].(map[string]any)["rows"].([]any)
	if data["count_returned"].(float64) != 5 || data["count_total_available"].(float64) != 7 || data["truncated"] != true ||
		data["units_sold_in_window"].(float64) != 14 || data["units_total_complete"] != true ||
		len(items) != 5 || items[0].([]any)[0] != "2026-11-26T21:15:00+01:00" {
		t.Fatalf("got %v", data)
	}
}
