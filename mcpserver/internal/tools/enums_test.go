package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/state"
)

func values[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// enumsIn collects every enum of a schema (as JSON), by JSON pointer.
func enumsIn(v any, at string, out map[string][]string) {
	switch v := v.(type) {
	case map[string]any:
		if e, ok := v["enum"].([]any); ok {
			for _, x := range e {
				out[at] = append(out[at], fmt.Sprint(x))
			}
		}
		for k, x := range v {
			enumsIn(x, at+"/"+k, out)
		}
	case []any:
		for i, x := range v {
			enumsIn(x, fmt.Sprintf("%s/%d", at, i), out)
		}
	}
}

// TestEveryEnumIsItsSchema holds each closed set to its schema enum in
// every configuration, both ways, and checks every enum of tools/list.
func TestEveryEnumIsItsSchema(t *testing.T) {
	const (
		data    = "/properties/data/properties/"
		risk    = data + "stores/items/properties/risk/properties/"
		justify = data + "justification/properties/"
		errCode = "/$defs/error/properties/code"
	)
	if bad := slices.DeleteFunc(slices.Clone(storeErrorCodes), apperr.Code.Valid); len(bad) > 0 {
		t.Errorf("per-store error codes outside the taxonomy: %v", bad)
	}
	configs := map[string]*WriteOptions{
		"read-only":  nil,
		"writes off": {MaxOrderUnits: 500},
		"writes on":  {MaxOrderUnits: 500, AllowWrites: true},
		"approval":   {MaxOrderUnits: 500, AllowWrites: true, RequireApproval: true},
	}
	for name, w := range configs {
		t.Run(name, func(t *testing.T) {
			s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) { o.Writes = w })
			res, err := s.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			status := values(orderStatuses())
			if w == nil {
				status = values(domain.OrderStatuses())
			}
			want := map[string]map[string][]string{
				"korral_list_authorized_stores": {errCode: values(storeErrorCodes)},
				"korral_list_recent_sales":      {},
				"korral_check_stock_risk": {
					errCode:             values(storeErrorCodes),
					risk + "confidence": values(projection.Confidences()),
					risk + "will_stockout_before_close_today": values(projection.Answers()),
					risk + "arrival_beats_stockout":           values(projection.Answers()),
					risk + "data_quality_flags/items":         values(projection.Flags()),
				},
				"korral_get_order_status": {data + "status": status},
			}
			if w != nil {
				want["korral_get_order_status"][data+"ledger/properties/state"] = values(state.States())
				want["korral_raise_replenishment_order"] = map[string][]string{
					data + "mode":         values(raiseModes()),
					data + "order_status": values(domain.OrderStatuses()),
					data + "quantity_check/properties/verdict":           values(verdicts()),
					data + "open_orders_same_sku/items/properties/state": values(openOrderStatuses()),
					justify + "confidence":                               values(projection.Confidences()),
					justify + "will_stockout_before_close_today":         values(projection.Answers()),
					justify + "data_quality_flags/items":                 values(projection.Flags()),
				}
			}
			if len(res.Tools) != len(want) {
				t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
			}
			for _, tool := range res.Tools {
				b, _ := json.Marshal(tool.OutputSchema)
				var schema any
				if err := json.Unmarshal(b, &schema); err != nil {
					t.Fatal(err)
				}
				got := map[string][]string{}
				enumsIn(schema, "", got)
				wantTool, ok := want[tool.Name]
				if !ok {
					t.Errorf("%s: no closed sets are declared for it here", tool.Name)
					continue
				}
				for at, enum := range got {
					w, ok := wantTool[at]
					if !ok {
						t.Errorf("%s: enum at %s %v is held to no constant list here", tool.Name, at, enum)
						continue
					}
					sort.Strings(enum)
					w = slices.Clone(w)
					sort.Strings(w)
					if !slices.Equal(enum, slices.Compact(slices.Clone(enum))) {
						t.Errorf("%s: enum at %s repeats a value: %v", tool.Name, at, enum)
					}
					if !slices.Equal(enum, w) {
						t.Errorf("%s: enum at %s is %v, the constants the code emits are %v", tool.Name, at, enum, w)
					}
				}
				for at := range wantTool {
					if _, ok := got[at]; !ok {
						t.Errorf("%s: no enum at %s", tool.Name, at)
					}
				}
			}
		})
	}
}

// TestOrderStatusSetsAgree: the status union holds every StoreLink status
// and ledger state, agrees with each on what is open, and "rejected" is
// closed on both sides.
func TestOrderStatusSetsAgree(t *testing.T) {
	all := orderStatuses()
	for _, s := range domain.OrderStatuses() {
		if !slices.Contains(all, storeLinkStatus(s)) || storeLinkStatus(s).open() != s.Open() {
			t.Errorf("StoreLink status %s: in the union %v, open %v", s, slices.Contains(all, storeLinkStatus(s)), storeLinkStatus(s).open())
		}
	}
	openLedger := map[state.EntryState]bool{state.StatePendingApproval: true, state.StateSending: true, state.StateUnknown: true, state.StateRaised: true}
	for _, s := range state.States() {
		if !slices.Contains(all, ledgerStatus(s)) || ledgerStatus(s).open() != openLedger[s] {
			t.Errorf("ledger state %s: in the union %v, open %v", s, slices.Contains(all, ledgerStatus(s)), ledgerStatus(s).open())
		}
	}
	if len(all) != len(domain.OrderStatuses())+len(state.States())-1 {
		t.Errorf("the union %v should share exactly one name (rejected)", all)
	}
	if storeLinkStatus(domain.OrderRejected) != ledgerStatus(state.StateRejected) || storeLinkStatus(domain.OrderRejected).open() {
		t.Error("rejected must be the one shared name, and closed")
	}
}
