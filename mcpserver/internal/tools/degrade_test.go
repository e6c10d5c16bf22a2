package tools

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
)

// The tools answer without a qualifier StoreLink left out, and say so
// (ADR 0030); e2e/degrade_test.go covers the real adapter.

// vagueFake is the fake whose stores have no readable hours and whose
// supplier has no lead time.
func vagueFake() *fakeUpstream {
	f := newFake()
	for id, st := range f.stores {
		st.Hours = [7]domain.DayHours{}
		st.Unknown = domain.Unknown{"store.opening_hours"}
		f.stores[id] = st
	}
	f.supplier.LeadTimeDays = -1
	f.supplier.Unknown = domain.Unknown{"supplier.lead_time_days"}
	return f
}

func hasCaveat(v any, name string) bool {
	list, _ := v.([]any)
	return slices.ContainsFunc(list, func(s any) bool { str, _ := s.(string); return strings.HasPrefix(str, name+": ") })
}

func TestRiskWithoutHoursOrLeadTimeClaimsNeither(t *testing.T) {
	f := vagueFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291"})
	if env["ok"] != true {
		t.Fatalf("got %v", env)
	}
	data := env["data"].(map[string]any)
	r := data["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	// With the hours the fake's store runs out before close (TestCheckStockRiskAnswersWithEvidence).
	if r["will_stockout_before_close_today"] != "unknown" || r["units_short_by_close"] != nil || r["closes_at_today"] != nil {
		t.Errorf("a claim about the close: %v", r)
	}
	if r["earliest_delivery"] != nil || r["arrival_beats_stockout"] != "unknown" || data["product"].(map[string]any)["lead_time_days"] != nil {
		t.Errorf("a delivery claim: %v", r)
	}
	if r["on_hand_units"] != float64(f.inv.OnHand) || r["units_sold_last_24h"] != 14.0 {
		t.Errorf("figures %v %v, the fake holds %d on hand and 14 sold", r["on_hand_units"], r["units_sold_last_24h"], f.inv.OnHand)
	}
	// The store's qualifiers with the store, the supplier's once with the product.
	if !hasCaveat(r["unknown"], "store.opening_hours") || hasCaveat(r["unknown"], "supplier.lead_time_days") ||
		!hasCaveat(data["product"].(map[string]any)["unknown"], "supplier.lead_time_days") {
		t.Errorf("unknown %v, product %v", r["unknown"], data["product"])
	}
	if !strings.Contains(s.logText(), "stockout before close today: unknown") {
		t.Error("the audit sentence claims the close")
	}
}

func TestRiskWithEveryQualifierKnownSaysNothingUnknown(t *testing.T) {
	s := connect(t, newFake(), mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291"})
	r := env["data"].(map[string]any)["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	if _, has := r["unknown"]; has {
		t.Errorf("unknown %v beside a StoreLink that said everything", r["unknown"])
	}
}

func TestStoreListWithoutHoursOrNames(t *testing.T) {
	f := vagueFake()
	st := f.stores["102"]
	st.Name = ""
	st.Unknown.Add("store.name")
	f.stores["102"] = st
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), nil)
	env, _ := callTool(t, s, "korral_list_authorized_stores", map[string]any{})
	stores := env["data"].(map[string]any)["stores"].([]any)
	if len(stores) != 2 {
		t.Fatalf("stores %v", stores)
	}
	for _, v := range stores {
		e := v.(map[string]any)
		if e["error"] != nil || e["local_time_now"] == nil || e["open_now"] != nil || e["opening_hours_today"] != nil || e["closes_in_minutes"] != nil {
			t.Errorf("store %v claims its hours: %v", e["store_id"], e)
		}
		if !hasCaveat(e["unknown"], "store.opening_hours") || hasCaveat(e["unknown"], "store.name") != (e["store_id"] == "102") {
			t.Errorf("store %v: unknown %v", e["store_id"], e["unknown"])
		}
	}
	if e := stores[1].(map[string]any); e["store_id"] != "102" || e["name"] != nil {
		t.Errorf("the store without a name: %v", e)
	}
}

func TestPreviewAndWriteWithoutHoursOrLeadTime(t *testing.T) {
	f := vagueFake()
	led := sharedLedger(t)
	s := connect(t, f, mustKeyring(t, `{"47":"k1"}`), func(o *Options) {
		o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: led, UpstreamID: "up-1"}
	})
	args := map[string]any{"sku": "8847291", "quantity_units": 24, "reason": "Butter low before the weekend"}
	env, _ := callTool(t, s, "korral_raise_replenishment_order", args)
	if env["ok"] != true {
		t.Fatalf("preview %v", env)
	}
	d := env["data"].(map[string]any)
	j := d["justification"].(map[string]any)
	if j["days_of_cover_after_delivery"] != nil || j["expected_arrival"] != nil || j["supplier_lead_time_days"] != nil ||
		j["will_stockout_before_close_today"] != "unknown" || j["on_hand_units"] != float64(f.inv.OnHand) {
		t.Errorf("justification %v", j)
	}
	if !hasCaveat(j["unknown"], "store.opening_hours") || !hasCaveat(j["unknown"], "supplier.lead_time_days") {
		t.Errorf("unknown %v", j["unknown"])
	}
	if q := fmt.Sprint(d["quantity_check"]); !strings.Contains(q, "lead time is unknown") {
		t.Errorf("quantity check %s", q)
	}
	args["confirm"], args["idempotency_key"] = true, d["idempotency_key"]
	env, _ = callTool(t, s, "korral_raise_replenishment_order", args)
	if env["ok"] != true || env["data"].(map[string]any)["mode"] != "raised" || len(f.created) != 1 || f.created[0].QuantityUnits != 24 {
		t.Fatalf("confirm %v, created %v", env, f.created)
	}
}

func TestOrderStatusWithoutArrival(t *testing.T) {
	f := newFake()
	o := f.orders["RO-47-000001"]
	o.ExpectedArrival = time.Time{}
	o.Unknown = domain.Unknown{"order.expected_arrival"}
	f.orders[o.ID] = o
	s := connect(t, f, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": o.ID})
	d := env["data"].(map[string]any)
	if env["ok"] != true || d["expected_arrival"] != nil || d["quantity_units"] != 24.0 || !hasCaveat(d["unknown"], "order.expected_arrival") {
		t.Fatalf("got %v", env)
	}
}

// totalless is the fake with sales pages whose total StoreLink left out.
type totalless struct{ *fakeUpstream }

func (f totalless) Sales(ctx context.Context, id, sku string, since time.Time, max int) (domain.SalesPage, error) {
	p, err := f.fakeUpstream.Sales(ctx, id, sku, since, max)
	p.Total, p.Unknown = -1, domain.Unknown{"pos.total_count"}
	return p, err
}

func TestRecentSalesWithoutTotal(t *testing.T) {
	s := connect(t, totalless{newFake()}, mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_list_recent_sales", map[string]any{"sku": "8847291", "limit": 3})
	d := env["data"].(map[string]any)
	// Seven sales of 2 units in the last 24 h (TestCheckStockRiskAnswersWithEvidence).
	if env["ok"] != true || d["count_total_available"] != 7.0 || d["count_returned"] != 3.0 || d["truncated"] != true ||
		d["units_sold_in_window"] != 14.0 || d["units_total_complete"] != true || !hasCaveat(d["unknown"], "pos.total_count") {
		t.Fatalf("got %v", env)
	}
}
