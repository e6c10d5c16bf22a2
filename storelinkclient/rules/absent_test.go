package rules_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// answerType is the generated type of an operation's successful answer.
func answerType(op string) any {
	switch op {
	case rules.OpListStores:
		return &sl.StoreList{}
	case rules.OpGetStore:
		return &sl.Store{}
	case rules.OpGetInventory:
		return &sl.Inventory{}
	case rules.OpListPOS:
		return &sl.POSPage{}
	case rules.OpGetSKU:
		return &sl.SKU{}
	case rules.OpGetSupplier:
		return &sl.Supplier{}
	}
	return &sl.Order{}
}

// parentOf walks a decoded body to the object that holds the JSON
// Pointer's last token; nil when there is none.
func parentOf(body any, pointer string) (map[string]any, string) {
	tokens := strings.Split(strings.TrimPrefix(pointer, "/"), "/")
	for _, tok := range tokens[:len(tokens)-1] {
		switch v := body.(type) {
		case map[string]any:
			body = v[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i >= len(v) {
				return nil, ""
			}
			body = v[i]
		}
	}
	obj, _ := body.(map[string]any)
	return obj, tokens[len(tokens)-1]
}

// remove deletes the property at a JSON Pointer from a decoded body.
func remove(t *testing.T, body any, pointer string) {
	t.Helper()
	obj, last := parentOf(body, pointer)
	if _, has := obj[last]; !has {
		t.Fatalf("no %s in the body", pointer)
	}
	delete(obj, last)
}

// TestNoRuleJudgesAnAbsentField: with the violating field left out, the
// rule no longer fires and the walk names the absence once.
func TestNoRuleJudgesAnAbsentField(t *testing.T) {
	for _, ex := range rules.Examples() {
		t.Run(ex.Rule+"/"+ex.Operation+ex.Field, func(t *testing.T) {
			body := decode(t, ex.Bad())
			remove(t, body, ex.Field)
			b := mustJSON(t, body)
			for _, f := range check(t, ex.Operation, b, ex.Query) {
				if f.Rule == ex.Rule && (f.Field == ex.Field || strings.HasPrefix(f.Field, ex.Field+"/")) {
					t.Errorf("%s fires on the absent field: %v", ex.Rule, f)
				}
			}
			fields := sl.BodyFields(b, answerType(ex.Operation))
			if !fields.Absent.Has(ex.Field) {
				t.Errorf("the walk does not find %s absent: %v", ex.Field, fields.Absent.Pointers())
			}
			name := strings.ReplaceAll(strings.TrimPrefix(ex.Field, "/"), "/", ".")
			named := 0
			for _, p := range fields.Problems {
				if p.Field == name || strings.HasPrefix(p.Field, name+".") {
					named++
					if p.Kind != sl.FieldMissing {
						t.Errorf("problem %v, want the field missing", p)
					}
				}
			}
			// The contract's optional fields among the examples' fields.
			optional := slices.Contains([]string{"/next_cursor", "/order_cutoff_local", "/opening_hours/monday/opens"}, ex.Field)
			if (named == 1) == optional || named > 1 {
				t.Errorf("%d problems name %s (optional: %v): %v", named, name, optional, fields.Problems)
			}
		})
	}
}

// edit changes a decoded answer in place.
type edit = func(b map[string]any)

// set sets the property at a JSON Pointer.
func set(pointer string, v any) edit {
	return func(b map[string]any) {
		obj, last := parentOf(b, pointer)
		obj[last] = v
	}
}

// del deletes the properties at the JSON Pointers.
func del(pointers ...string) edit {
	return func(b map[string]any) {
		for _, p := range pointers {
			obj, last := parentOf(b, p)
			delete(obj, last)
		}
	}
}

// both applies the edits in order.
func both(edits ...edit) edit {
	return func(b map[string]any) {
		for _, e := range edits {
			e(b)
		}
	}
}

// sentCases are the answers of TestRulesJudgeWhatWasSent: the findings,
// "rule at field", of each edited good answer.
var sentCases = []struct {
	name string
	op   string
	edit edit
	want []string
}{
	{"store_id left out of a store", rules.OpGetStore, del("/store_id"), nil},
	{"another store_id", rules.OpGetStore, set("/store_id", "8"), []string{"path.store_id at /store_id"}},
	{"store_id left out of an inventory", rules.OpGetInventory, del("/store_id", "/sku"), nil},
	{"another sku in an inventory", rules.OpGetInventory, set("/sku", "1234567"), []string{"path.sku at /sku"}},
	{"store_id and sku left out of a POS page", rules.OpListPOS, del("/store_id", "/sku"), nil},
	{"sku left out of a SKU", rules.OpGetSKU, del("/sku"), nil},
	{"supplier_id left out", rules.OpGetSupplier, del("/supplier_id"), nil},
	{"order_id and store_id left out of an order", rules.OpGetOrder, del("/order_id", "/store_id"), nil},

	{"timezone left out", rules.OpGetStore, del("/timezone"), nil},
	{"timezone empty", rules.OpGetStore, set("/timezone", ""), []string{"store.timezone.iana at /timezone"}},
	{"a listed store's timezone left out", rules.OpListStores, del("/stores/0/timezone"), nil},
	{"a listed store's timezone empty", rules.OpListStores, set("/stores/1/timezone", ""), []string{"store.timezone.iana at /stores/1/timezone"}},
	{"a store_id left out of the list", rules.OpListStores,
		func(b map[string]any) {
			b["stores"] = []any{
				map[string]any{"store_id": "47", "name": "A", "timezone": "Europe/Prague"},
				map[string]any{"name": "B", "timezone": "Europe/Prague"},
				map[string]any{"store_id": "102", "name": "C", "timezone": "Europe/Prague"},
			}
		}, nil},
	{"the list out of order around a store without store_id", rules.OpListStores,
		func(b map[string]any) {
			b["stores"] = []any{
				map[string]any{"store_id": "102", "name": "A", "timezone": "Europe/Prague"},
				map[string]any{"name": "B", "timezone": "Europe/Prague"},
				map[string]any{"store_id": "47", "name": "C", "timezone": "Europe/Prague"},
			}
		}, []string{"stores.order at /stores/2/store_id"}},

	{"opening_hours left out", rules.OpGetStore, del("/opening_hours"), nil},
	{"monday left out", rules.OpGetStore, del("/opening_hours/monday"), nil},
	{"monday's closed left out, times kept", rules.OpGetStore, del("/opening_hours/monday/closed"), nil},
	{"monday's closed and times left out", rules.OpGetStore, del("/opening_hours/monday/closed", "/opening_hours/monday/opens",
		"/opening_hours/monday/closes"), nil},
	{"monday without closed, opening after it closes", rules.OpGetStore,
		both(del("/opening_hours/monday/closed"), set("/opening_hours/monday/opens", "23:00")), []string{"store.hours.order at /opening_hours/monday"}},
	{"monday without closed, a bad time", rules.OpGetStore,
		both(del("/opening_hours/monday/closed"), set("/opening_hours/monday/closes", "10pm")), []string{"store.hours.format at /opening_hours/monday/closes"}},
	{"monday open without closes", rules.OpGetStore, del("/opening_hours/monday/closes"), []string{"store.hours.open at /opening_hours/monday"}},
	{"sunday closed with opens", rules.OpGetStore, set("/opening_hours/sunday/opens", "08:00"), []string{"store.hours.closed at /opening_hours/sunday"}},

	{"on_hand_units and counted_at left out", rules.OpGetInventory, del("/on_hand_units", "/counted_at"), nil},
	{"on_hand_units out of range", rules.OpGetInventory, set("/on_hand_units", 2000000), []string{"inventory.range at /on_hand_units"}},
	{"counted_at in the future", rules.OpGetInventory, set("/counted_at", "2030-01-01T00:00:00Z"), []string{"inventory.counted_at at /counted_at"}},

	{"since left out", rules.OpListPOS, del("/since"), nil},
	{"since not the query's", rules.OpListPOS, set("/since", "2026-01-01T00:00:00Z"), []string{"pos.since at /since"}},
	{"total_count left out", rules.OpListPOS, del("/total_count"), nil},
	{"total_count too small", rules.OpListPOS, set("/total_count", 2), []string{"pos.total_count at /total_count"}},
	{"every line's units left out", rules.OpListPOS, del("/transactions/0/units", "/transactions/1/units", "/transactions/2/units"), nil},
	{"units 0 beside a line without units", rules.OpListPOS, both(del("/transactions/0/units"), set("/transactions/2/units", 0)),
		[]string{"pos.units at /transactions/2/units"}},
	{"every line's timestamp left out", rules.OpListPOS, del("/transactions/0/timestamp", "/transactions/1/timestamp", "/transactions/2/timestamp"), nil},
	{"a line in the future beside a line without timestamp", rules.OpListPOS,
		both(del("/transactions/0/timestamp"), set("/transactions/1/timestamp", "2030-01-01T00:00:00Z")),
		[]string{"pos.window at /transactions/1/timestamp"}},
	{"lines out of order around a line without timestamp", rules.OpListPOS,
		func(b map[string]any) {
			txs := b["transactions"].([]any)
			first, last := txs[0].(map[string]any), txs[2].(map[string]any)
			first["timestamp"], last["timestamp"] = last["timestamp"], first["timestamp"]
			delete(txs[1].(map[string]any), "timestamp")
		}, []string{"pos.order at /transactions/2/timestamp"}},
	{"transactions left out", rules.OpListPOS, del("/transactions"), nil},

	{"case_pack and shelf_life_days left out", rules.OpGetSKU, del("/case_pack", "/shelf_life_days"), nil},
	{"case_pack 0", rules.OpGetSKU, set("/case_pack", 0), []string{"sku.range at /case_pack"}},
	{"shelf_life_days 0", rules.OpGetSKU, set("/shelf_life_days", 0), []string{"sku.range at /shelf_life_days"}},
	{"lead_time_days, minimum and cut-off left out", rules.OpGetSupplier, del("/lead_time_days", "/minimum_order_units", "/order_cutoff_local"), nil},
	{"lead_time_days 61", rules.OpGetSupplier, set("/lead_time_days", 61), []string{"supplier.range at /lead_time_days"}},
	{"minimum 0", rules.OpGetSupplier, set("/minimum_order_units", 0), []string{"supplier.range at /minimum_order_units"}},

	{"status and quantity_units left out", rules.OpGetOrder, del("/status", "/quantity_units"), nil},
	{"status unknown", rules.OpGetOrder, set("/status", "lost"), []string{"order.status at /status"}},
	{"quantity_units 0", rules.OpGetOrder, set("/quantity_units", 0), []string{"order.range at /quantity_units"}},
	{"sku and quantity_units left out of the created order", rules.OpCreateOrder, del("/sku", "/quantity_units"), nil},
	{"quantity_units left out, another sku", rules.OpCreateOrder, both(del("/quantity_units"), set("/sku", "1234567")),
		[]string{"order.readback at /sku"}},
	{"sku left out, another quantity", rules.OpCreateOrder, both(del("/sku"), set("/quantity_units", rules.ExampleRaised+1)),
		[]string{"order.readback at /quantity_units"}},
}

// TestRulesJudgeWhatWasSent: a rule does not fire on an absent field and
// fires on a bad value.
func TestRulesJudgeWhatWasSent(t *testing.T) {
	for _, tc := range sentCases {
		t.Run(tc.name, func(t *testing.T) {
			q := rules.ExampleQuery(tc.op)
			body := decode(t, mustJSON(t, rules.Good(tc.op, q))).(map[string]any)
			tc.edit(body)
			if diff := cmp.Diff(tc.want, ids(check(t, tc.op, mustJSON(t, body), q))); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

// TestTypedChecksTakeTheAbsentFields: a reader that decodes the answer
// itself passes what the walk found absent in the Query, and the typed
// check checks as Check does; without it, the zero value is checked.
func TestTypedChecksTakeTheAbsentFields(t *testing.T) {
	q := rules.ExampleQuery(rules.OpListPOS)
	body := decode(t, mustJSON(t, rules.Good(rules.OpListPOS, q))).(map[string]any)
	delete(body, "total_count")
	b := mustJSON(t, body)
	var page sl.POSPage
	fields := sl.BodyFields(b, &page)
	if err := json.Unmarshal(b, &page); err != nil {
		t.Fatal(err)
	}
	if got := ids(rules.CheckPOSPage(&page, rules.Query{StoreID: q.StoreID, SKU: q.SKU, Since: q.Since, Now: q.Now})); !slices.Equal(got, []string{"pos.total_count at /total_count"}) {
		t.Errorf("without Absent: %v, want the zero total_count judged", got)
	}
	q2 := rules.Query{StoreID: q.StoreID, SKU: q.SKU, Since: q.Since, Now: q.Now, Absent: fields.Absent}
	if got := ids(rules.CheckPOSPage(&page, q2)); got != nil {
		t.Errorf("with Absent: %v", got)
	}
	if got := fields.Absent.Pointers(); !slices.Equal(got, []string{"/next_cursor", "/total_count"}) {
		t.Errorf("absent %v", got)
	}
}

// TestQueryStaysComparable: Query was comparable before it carried the
// absent fields, and the client's public API keeps it so (a release is
// checked with apidiff). It would not compile otherwise.
func TestQueryStaysComparable(t *testing.T) {
	if (rules.Query{Absent: sl.NewAbsent("/total_count")}) == (rules.Query{}) {
		t.Error("a query with absent fields equals one without")
	}
}
