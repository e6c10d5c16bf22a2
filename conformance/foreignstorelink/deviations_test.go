package foreignstorelink_test

// The double's deviations from the contract, D1 to D8, one test each.

import (
	"fmt"
	"net/http"
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/foreignstorelink"
)

// D1: every error is {"detail": "<text>"}.
func TestD1ErrorBodyIsDetailText(t *testing.T) {
	h := start(t, map[string]string{"47": key47, "102": key102, "999": "foreign-key-999-ghost-store-00"})
	cases := []struct {
		name, method, path, key string
		status                  int
	}{
		{"missing key", "GET", "/v1/stores", "", 401},
		{"unknown key", "GET", "/v1/stores/47", "not-a-key-of-anyone-at-all", 401},
		{"missing key on a store path", "GET", "/v1/stores/47/inventory?sku=8847291", "", 401},
		{"another store", "GET", "/v1/stores/55", key47, 403},
		{"another store's order", "GET", "/v1/stores/47/replenishment/rpl_0000000000", key102, 403},
		{"unknown store id", "GET", "/v1/stores/4242", key47, 403},
		{"store that does not exist", "GET", "/v1/stores/999", "foreign-key-999-ghost-store-00", 404},
		{"unknown sku", "GET", "/v1/skus/1234567", key47, 404},
		{"unknown sku in inventory", "GET", "/v1/stores/47/inventory?sku=1234567", key47, 404},
		{"unknown supplier", "GET", "/v1/suppliers/SUP-MADETA", key47, 404},
		{"unknown order", "GET", "/v1/stores/47/replenishment/rpl_0000000000", key47, 404},
		{"unknown path", "GET", "/v2/stores", key47, 404},
		{"wrong method", "DELETE", "/v1/stores/47", key47, 405},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := h.want(h.do(c.method, c.path, c.key, ""), c.status, c.name)
			isDetailText(t, c.name, m)
			mustBreak(t, "Error", m)
		})
	}
	if res := h.do("PUT", "/v1/stores/47/replenishment", key47, ""); res.header.Get("Allow") != "POST" {
		t.Errorf("405 Allow = %q, want POST", res.header.Get("Allow"))
	}
}

// D2: validation errors are 422 with a FastAPI list of {loc, msg, type}.
func TestD2ValidationErrorsAre422WithList(t *testing.T) {
	h := start(t, nil)
	since := url.QueryEscape(foreignstorelink.DefaultNow().Add(-48 * time.Hour).Format(time.RFC3339))
	pos := "/v1/stores/47/pos?sku=8847291&since=" + since
	cases := []struct {
		name, method, path, body string
		loc                      []any
	}{
		{"malformed sku in query", "GET", "/v1/stores/47/inventory?sku=abc", "", []any{"query", "sku"}},
		{"missing sku", "GET", "/v1/stores/47/inventory", "", []any{"query", "sku"}},
		{"malformed sku in path", "GET", "/v1/skus/12", "", []any{"path", "sku"}},
		{"malformed store id", "GET", "/v1/stores/abc", "", []any{"path", "store_id"}},
		{"limit 0", "GET", pos + "&limit=0", "", []any{"query", "limit"}},
		{"limit not a number", "GET", pos + "&limit=ten", "", []any{"query", "limit"}},
		{"limit above 1000", "GET", pos + "&limit=1001", "", []any{"query", "limit"}},
		{"since missing", "GET", "/v1/stores/47/pos?sku=8847291", "", []any{"query", "since"}},
		{"since garbage", "GET", "/v1/stores/47/pos?sku=8847291&since=yesterday", "", []any{"query", "since"}},
		{"since without offset", "GET", "/v1/stores/47/pos?sku=8847291&since=2026-11-20T10:00:00", "", []any{"query", "since"}},
		{"empty cursor", "GET", pos + "&cursor=", "", []any{"query", "cursor"}},
		{"made-up cursor", "GET", pos + "&cursor=c2luY2U9MTcwMDAwMDAwMCZvZmZzZXQ9MjAw", "", []any{"query", "cursor"}},
		{"empty body", "POST", "/v1/stores/47/replenishment", "", []any{"body"}},
		{"broken JSON", "POST", "/v1/stores/47/replenishment", `{"sku":`, []any{"body", float64(0)}},
		{"array body", "POST", "/v1/stores/47/replenishment", `[]`, []any{"body"}},
		{"quantity 0", "POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":0,"reason":"r"}`, []any{"body", "quantity_units"}},
		{"quantity too big", "POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":100001,"reason":"r"}`, []any{"body", "quantity_units"}},
		{"quantity fractional", "POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":12.5,"reason":"r"}`, []any{"body", "quantity_units"}},
		{"quantity a string", "POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":"24","reason":"r"}`, []any{"body", "quantity_units"}},
		{"sku a number", "POST", "/v1/stores/47/replenishment", `{"sku":8847291,"quantity_units":24,"reason":"r"}`, []any{"body", "sku"}},
		{"reason missing", "POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":24}`, []any{"body", "reason"}},
		{"reason empty", "POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":24,"reason":""}`, []any{"body", "reason"}},
		{"extra field", "POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":24,"reason":"r","quantity":24}`, []any{"body", "quantity"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := h.want(h.do(c.method, c.path, key47, c.body), http.StatusUnprocessableEntity, c.name)
			wantKeys(t, c.name, m, "detail")
			list, ok := m["detail"].([]any)
			if !ok || len(list) == 0 {
				t.Fatalf("detail is %#v, want a non-empty list", m["detail"])
			}
			first, _ := list[0].(map[string]any)
			wantKeys(t, c.name, first, "loc", "msg", "type")
			if !reflect.DeepEqual(first["loc"], c.loc) {
				t.Errorf("loc %v, want %v", first["loc"], c.loc)
			}
			if s, _ := first["msg"].(string); s == "" {
				t.Errorf("msg %#v, want text", first["msg"])
			}
			if s, _ := first["type"].(string); s == "" {
				t.Errorf("type %#v, want text", first["type"])
			}
		})
	}
	if n := len(h.s.Orders()); n != 0 {
		t.Fatalf("refused orders were kept: %d", n)
	}
}

// D3: on_hand instead of on_hand_units; the rest as the contract.
func TestD3InventoryOnHand(t *testing.T) {
	h := start(t, nil)
	m := h.get("/v1/stores/47/inventory?sku=8847291", key47, 200)
	wantKeys(t, "inventory", m, "store_id", "sku", "on_hand", "counted_at")
	if m["store_id"] != "47" || m["sku"] != "8847291" || m["on_hand"] != float64(9) {
		t.Fatalf("inventory %v", m)
	}
	if m["counted_at"] != "2026-11-27T06:30:00+01:00" {
		t.Errorf("counted_at %v", m["counted_at"])
	}
	mustBreak(t, "Inventory", m)
	mustConform(t, "Inventory", rename(m, "on_hand", "on_hand_units"))

	neg := h.get("/v1/stores/102/inventory?sku=8801111", key102, 200)
	if neg["on_hand"] != float64(-3) {
		t.Errorf("102/8801111 on_hand %v, want -3 (negative on-hand is allowed)", neg["on_hand"])
	}
	mustConform(t, "Inventory", rename(neg, "on_hand", "on_hand_units"))
}

// D4: supplier ids sup_xxxxxxxx, min_order_qty, contact_email.
func TestD4Supplier(t *testing.T) {
	h := start(t, nil)
	sku := h.get("/v1/skus/8847291", key102, 200)
	id, _ := sku["supplier_id"].(string)
	if !supplierID.MatchString(id) {
		t.Fatalf("SKU supplier_id %q, want sup_ + 8 hex", id)
	}
	sup := h.get("/v1/suppliers/"+id, key47, 200)
	wantKeys(t, "supplier", sup, "supplier_id", "name", "lead_time_days", "order_cutoff_local", "min_order_qty", "contact_email")
	if sup["supplier_id"] != id || sup["lead_time_days"] != float64(2) || sup["order_cutoff_local"] != "14:00" ||
		sup["min_order_qty"] != float64(12) {
		t.Fatalf("supplier %v", sup)
	}
	if s, _ := sup["contact_email"].(string); !strings.Contains(s, "@") {
		t.Errorf("contact_email %#v", sup["contact_email"])
	}
	mustBreak(t, "Supplier", sup)
	// Only the listed departures: with them undone, the contract holds.
	fixed := rename(without(sup, "contact_email"), "min_order_qty", "minimum_order_units")
	fixed["supplier_id"] = "SUP-MADETA"
	mustConform(t, "Supplier", fixed)
	if err := contract(t, "Supplier", without(fixed, "supplier_id")); err == nil {
		t.Fatal("the contract's Supplier should need supplier_id")
	}
	if err := contract(t, "SupplierID", id); err == nil {
		t.Fatalf("%s keeps the contract's SupplierID pattern", id)
	}
}

// D5: order ids, field names and statuses; the POST body is the contract's.
func TestD5Orders(t *testing.T) {
	h := start(t, nil)
	o := h.post("/v1/stores/47/replenishment", key47, orderBody(24), 201)
	wantKeys(t, "order", o, "order_id", "store_id", "sku", "quantity", "reason", "status", "created_at", "expected_delivery")
	id, _ := o["order_id"].(string)
	if !orderID.MatchString(id) {
		t.Fatalf("order_id %q, want rpl_ + 10 hex", id)
	}
	want := map[string]any{
		"order_id": id, "store_id": "47", "sku": "8847291", "quantity": float64(24),
		"reason": "Projected to sell out before close.", "status": "pending",
		"created_at":        "2026-11-27T14:30:00+01:00",
		"expected_delivery": "2026-11-30T06:00:00+01:00", // after the 14:00 cut-off: 2 days + 1
	}
	if !reflect.DeepEqual(o, want) {
		t.Fatalf("order %v\nwant %v", o, want)
	}
	if back := h.get("/v1/stores/47/replenishment/"+id, key47, 200); !reflect.DeepEqual(back, o) {
		t.Fatalf("read back %v, want %v", back, o)
	}
	mustBreak(t, "Order", o)
	fixed := rename(rename(rename(o, "quantity", "quantity_units"), "created_at", "submitted_at"), "expected_delivery", "expected_arrival")
	fixed["status"] = "submitted"
	mustBreak(t, "Order", fixed) // the id still breaks the pattern
	fixed["order_id"] = "RO-47-000123"
	mustConform(t, "Order", fixed)
	mustBreak(t, "OrderStatus", "pending")

	// Below the supplier's minimum: 422 with D1's body, nothing raised.
	m := h.post("/v1/stores/47/replenishment", key47, orderBody(11), 422)
	if s := isDetailText(t, "below minimum", m); !strings.Contains(s, "12") {
		t.Errorf("detail %q does not name the minimum", s)
	}
	// Not a multiple of the case pack (12): accepted.
	odd := h.post("/v1/stores/47/replenishment", key47, orderBody(13), 201)
	if odd["quantity"] != float64(13) || odd["order_id"] == id {
		t.Fatalf("order of 13: %v", odd)
	}
	// Unknown SKU in the body: 404.
	isDetailText(t, "unknown sku", h.post("/v1/stores/47/replenishment", key47,
		`{"sku":"1234567","quantity_units":24,"reason":"r"}`, 404))
	// An order is visible only through its own store.
	isDetailText(t, "order of another store", h.get("/v1/stores/102/replenishment/"+id, key102, 404))
	isDetailText(t, "foreign key", h.post("/v1/stores/47/replenishment", key102, orderBody(24), 403))

	held := h.s.Orders()
	if len(held) != 2 || held[0].OrderID != id || held[0].Quantity != 24 || held[0].Status != foreignstorelink.StatusPending ||
		held[1].Quantity != 13 || held[0].StoreID != "47" || held[0].SKU != "8847291" {
		t.Fatalf("Orders() = %+v", held)
	}
	held[0].Quantity = 999 // a copy
	if h.s.Orders()[0].Quantity != 24 {
		t.Fatal("Orders() returned the double's own slice")
	}
}

// D6: a page holds at least 7 transactions whatever the limit.
func TestD6MinimumPageOfSeven(t *testing.T) {
	h := start(t, nil)
	since := foreignstorelink.DefaultNow().Add(-28 * 24 * time.Hour)
	for _, c := range []struct{ limit, want int }{{1, 7}, {3, 7}, {6, 7}, {7, 7}, {8, 8}, {10, 10}} {
		m := h.get(posPath("47", "8847291", since, fmt.Sprintf("&limit=%d", c.limit)), key47, 200)
		if got := len(m["transactions"].([]any)); got != c.want {
			t.Errorf("limit=%d: %d transactions, want %d", c.limit, got, c.want)
		}
		if _, ok := m["next_cursor"]; !ok {
			t.Errorf("limit=%d: no next_cursor with %v transactions in all", c.limit, m["total_count"])
		}
		mustConform(t, "POSPage", m)
	}
	// Fewer than 7 in all: they all come, without a cursor.
	recent := h.get(posPath("47", "8847291", foreignstorelink.DefaultNow().Add(-30*time.Hour), "&limit=1"), key47, 200)
	n := len(recent["transactions"].([]any))
	if n == 0 || n >= 7 || recent["total_count"] != float64(n) {
		t.Fatalf("last 30 hours: %d transactions, total %v", n, recent["total_count"])
	}
	if _, ok := recent["next_cursor"]; ok {
		t.Fatal("next_cursor on the last page")
	}
}

// D7: stores listed in descending id order, each with a region.
func TestD7StoreListDescendingWithRegion(t *testing.T) {
	h := start(t, nil)
	m := h.get("/v1/stores", key102, 200)
	wantKeys(t, "store list", m, "stores")
	var ids []string
	var fixed []any
	for _, s := range m["stores"].([]any) {
		st := s.(map[string]any)
		wantKeys(t, "listed store", st, "store_id", "name", "timezone", "region")
		if r, _ := st["region"].(string); r == "" {
			t.Errorf("store %v: region %#v", st["store_id"], st["region"])
		}
		ids = append(ids, st["store_id"].(string))
		fixed = append(fixed, without(st, "region"))
	}
	if want := []string{"102", "61", "55", "47"}; !reflect.DeepEqual(ids, want) {
		t.Fatalf("store order %v, want %v", ids, want)
	}
	mustBreak(t, "StoreList", m)
	mustConform(t, "StoreList", map[string]any{"stores": fixed})
}

// D8: the SKU has an extra brand; otherwise the contract's fields.
func TestD8SKUBrand(t *testing.T) {
	h := start(t, nil)
	m := h.get("/v1/skus/8847291", key47, 200)
	wantKeys(t, "sku", m, "sku", "name", "brand", "category", "supplier_id", "unit", "case_pack", "chilled", "shelf_life_days")
	want := map[string]any{"sku": "8847291", "name": "Madeta butter 250g", "brand": "Madeta", "category": "dairy",
		"supplier_id": "sup_5a1c9e02", "unit": "piece", "case_pack": float64(12), "chilled": true, "shelf_life_days": float64(30)}
	if !reflect.DeepEqual(m, want) {
		t.Fatalf("sku %v\nwant %v", m, want)
	}
	mustBreak(t, "SKU", m)
	fixed := without(m, "brand")
	mustBreak(t, "SKU", fixed) // D4's supplier id
	fixed["supplier_id"] = "SUP-MADETA"
	mustConform(t, "SKU", fixed)

	other := h.get("/v1/skus/8801111", key47, 200)
	sup := h.get("/v1/suppliers/"+other["supplier_id"].(string), key47, 200)
	if sup["supplier_id"] == "sup_5a1c9e02" || !supplierID.MatchString(sup["supplier_id"].(string)) {
		t.Fatalf("second supplier %v", sup)
	}
}
