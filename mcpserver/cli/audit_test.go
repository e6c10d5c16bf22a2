package cli

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// TestToolNamesAreTheServersTools keeps the audit command's list of tools
// in step with what the server offers.
func TestToolNamesAreTheServersTools(t *testing.T) {
	kr, err := keyring.Parse([]byte(`{"47":"k47"}`))
	if err != nil {
		t.Fatal(err)
	}
	srv := tools.New(tools.Options{Keyring: func() *keyring.Keyring { return kr }, Writes: &tools.WriteOptions{MaxOrderUnits: 1}})
	st, ct := mcp.NewInMemoryTransports()
	ss, err := srv.Connect(context.Background(), st, nil)
	if err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { cs.Close(); ss.Wait() }()
	res, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var offered []string
	for _, tool := range res.Tools {
		offered = append(offered, tool.Name)
	}
	if diff := cmp.Diff(slices.Sorted(slices.Values(toolNames)), slices.Sorted(slices.Values(offered))); diff != "" {
		t.Errorf("toolNames differ from tools/list (-audit +server):\n%s", diff)
	}
}

func TestFullToolName(t *testing.T) {
	for in, want := range map[string]string{
		"":                          "",
		"check_stock_risk":          "korral_check_stock_risk",
		"korral_check_stock_risk":   "korral_check_stock_risk",
		"raise_replenishment_order": "korral_raise_replenishment_order",
		"approvals.approve":         "approvals.approve",
	} {
		if got, err := fullToolName(in); err != nil || got != want {
			t.Errorf("fullToolName(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for _, bad := range []string{"check_stock", "korral_nope", "CHECK_STOCK_RISK"} {
		if _, err := fullToolName(bad); err == nil {
			t.Errorf("fullToolName(%q) accepted", bad)
		}
	}
}

func TestAnswerPilot(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	n := 0
	rec := func(session, tool, store, sku, outcome, summary string) state.AuditRecord {
		n++
		return state.AuditRecord{Time: t0.Add(time.Duration(n) * time.Minute), Session: session, Tool: tool, StoreID: store, SKU: sku, Outcome: outcome, Summary: summary}
	}
	const risk, sales, status, raise = "korral_check_stock_risk", "korral_list_recent_sales", "korral_get_order_status", "korral_raise_replenishment_order"
	recs := []state.AuditRecord{
		rec("s1", sales, "47", "1", "ok", ""),   // sales before the check: does not count
		rec("s1", risk, "47", "1", "ok", ""),    // followed (below)
		rec("s1", risk, "47", "2", "ok", ""),    // followed only in another session
		rec("s1", risk, "102", "1", "ok", ""),   // followed only for another store
		rec("s1", risk, "47", "3", "error", ""), // failed: not counted
		rec("", risk, "47", "1", "ok", ""),      // no session: not counted
		rec("s1", sales, "47", "1", "ok", ""),   //
		rec("s2", sales, "47", "2", "ok", ""),   //
		rec("s1", sales, "47", "9", "ok", ""),   //
		rec("s1", raise, "47", "1", "ok", "Previewed an order of 12 unit(s)"),
		rec("s1", raise, "47", "1", "ok", "Raised order RO-1: 12 unit(s)"),  // checked later, in another session
		rec("s1", raise, "102", "1", "ok", "Raised order RO-2: 12 unit(s)"), // never checked
		rec("s3", status, "47", "1", "ok", ""),
	}
	want := pilot{RiskChecks: 3, FollowedBySales: 1, OrdersRaised: 2, StatusChecked: 1}
	if got := answerPilot(recs); got != want {
		t.Errorf("answerPilot = %+v, want %+v", got, want)
	}
}
