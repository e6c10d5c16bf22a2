package foreignstorelink_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/korral/storelink/conformance/foreignstorelink"
	"github.com/korral/storelink/openapi"
)

var (
	key47  = foreignstorelink.DefaultKeys["47"]
	key102 = foreignstorelink.DefaultKeys["102"]
)

// clock is a settable test clock.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type harness struct {
	t     *testing.T
	s     *foreignstorelink.Server
	url   string
	clock *clock
}

func start(t *testing.T, keys map[string]string) *harness {
	t.Helper()
	c := &clock{t: foreignstorelink.DefaultNow()}
	s := foreignstorelink.New(foreignstorelink.Options{Now: c.now, Keys: keys})
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return &harness{t: t, s: s, url: srv.URL, clock: c}
}

type response struct {
	status int
	header http.Header
	body   []byte
}

func (h *harness) do(method, path, key, body string) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.url+path, rd)
	if err != nil {
		h.t.Fatal(err)
	}
	if key != "" {
		req.Header.Set(foreignstorelink.KeyHeader, key)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		h.t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatal(err)
	}
	for _, k := range []string{key47, key102} {
		if strings.Contains(string(b), k) || strings.Contains(fmt.Sprint(res.Header), k) {
			h.t.Fatalf("%s %s: the response echoes a key", method, path)
		}
	}
	return response{res.StatusCode, res.Header, b}
}

// get asks for path and wants status; it returns the decoded body.
func (h *harness) get(path, key string, status int) map[string]any {
	h.t.Helper()
	return h.want(h.do(http.MethodGet, path, key, ""), status, "GET "+path)
}

func (h *harness) post(path, key, body string, status int) map[string]any {
	h.t.Helper()
	return h.want(h.do(http.MethodPost, path, key, body), status, "POST "+path)
}

func (h *harness) want(res response, status int, what string) map[string]any {
	h.t.Helper()
	if res.status != status {
		h.t.Fatalf("%s: status %d, want %d; body %s", what, res.status, status, res.body)
	}
	if ct := res.header.Get("Content-Type"); ct != "application/json" {
		h.t.Fatalf("%s: Content-Type %q", what, ct)
	}
	var m map[string]any
	if err := json.Unmarshal(res.body, &m); err != nil {
		h.t.Fatalf("%s: body is not a JSON object: %v: %s", what, err, res.body)
	}
	return m
}

// keys returns an object's property names, sorted.
func keys(m map[string]any) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func wantKeys(t *testing.T, what string, m map[string]any, want ...string) {
	t.Helper()
	sort.Strings(want)
	if got := keys(m); !reflect.DeepEqual(got, want) {
		t.Fatalf("%s: properties %v, want %v", what, got, want)
	}
}

// contract validates v against a component schema of openapi/storelink.yaml.
func contract(t *testing.T, schema string, v any) error {
	t.Helper()
	doc, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	ref, ok := doc.Components.Schemas[schema]
	if !ok || ref.Value == nil {
		t.Fatalf("no schema %s in the contract", schema)
	}
	// Round-trip so that the value has the types VisitJSON expects.
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var plain any
	if err := json.Unmarshal(b, &plain); err != nil {
		t.Fatal(err)
	}
	return ref.Value.VisitJSON(plain, openapi3.MultiErrors(), openapi3.EnableFormatValidation())
}

func mustConform(t *testing.T, schema string, v any) {
	t.Helper()
	if err := contract(t, schema, v); err != nil {
		t.Fatalf("%s does not keep the contract: %v\n%v", schema, err, v)
	}
}

func mustBreak(t *testing.T, schema string, v any) {
	t.Helper()
	if err := contract(t, schema, v); err == nil {
		t.Fatalf("%s keeps the contract, but the double must depart from it here: %v", schema, v)
	}
}

func rename(m map[string]any, from, to string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if k == from {
			k = to
		}
		out[k] = v
	}
	return out
}

func without(m map[string]any, names ...string) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		out[k] = v
	}
	for _, n := range names {
		delete(out, n)
	}
	return out
}

func isDetailText(t *testing.T, what string, m map[string]any) string {
	t.Helper()
	wantKeys(t, what, m, "detail")
	s, ok := m["detail"].(string)
	if !ok || s == "" {
		t.Fatalf("%s: detail is %#v, want a non-empty string", what, m["detail"])
	}
	return s
}

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
	body := func(s string) string { return s }
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
		{"broken JSON", "POST", "/v1/stores/47/replenishment", body(`{"sku":`), []any{"body", float64(0)}},
		{"array body", "POST", "/v1/stores/47/replenishment", body(`[]`), []any{"body"}},
		{"quantity 0", "POST", "/v1/stores/47/replenishment", body(`{"sku":"8847291","quantity_units":0,"reason":"r"}`), []any{"body", "quantity_units"}},
		{"quantity too big", "POST", "/v1/stores/47/replenishment", body(`{"sku":"8847291","quantity_units":100001,"reason":"r"}`), []any{"body", "quantity_units"}},
		{"quantity fractional", "POST", "/v1/stores/47/replenishment", body(`{"sku":"8847291","quantity_units":12.5,"reason":"r"}`), []any{"body", "quantity_units"}},
		{"quantity a string", "POST", "/v1/stores/47/replenishment", body(`{"sku":"8847291","quantity_units":"24","reason":"r"}`), []any{"body", "quantity_units"}},
		{"sku a number", "POST", "/v1/stores/47/replenishment", body(`{"sku":8847291,"quantity_units":24,"reason":"r"}`), []any{"body", "sku"}},
		{"reason missing", "POST", "/v1/stores/47/replenishment", body(`{"sku":"8847291","quantity_units":24}`), []any{"body", "reason"}},
		{"reason empty", "POST", "/v1/stores/47/replenishment", body(`{"sku":"8847291","quantity_units":24,"reason":""}`), []any{"body", "reason"}},
		{"extra field", "POST", "/v1/stores/47/replenishment", body(`{"sku":"8847291","quantity_units":24,"reason":"r","quantity":24}`), []any{"body", "quantity"}},
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

var (
	supplierID = regexp.MustCompile(`^sup_[0-9a-f]{8}$`)
	orderID    = regexp.MustCompile(`^rpl_[0-9a-f]{10}$`)
)

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

func orderBody(qty int) string {
	return fmt.Sprintf(`{"sku":"8847291","quantity_units":%d,"reason":"Projected to sell out before close."}`, qty)
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

func posPath(store, sku string, since time.Time, extra string) string {
	return fmt.Sprintf("/v1/stores/%s/pos?sku=%s&since=%s%s", store, sku, url.QueryEscape(since.Format(time.RFC3339)), extra)
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

// Conforming: one store, its timezone and opening hours.
func TestConformsStore(t *testing.T) {
	h := start(t, map[string]string{"47": key47, "61": "foreign-key-61-wien-mitte-0000"})
	m := h.get("/v1/stores/47", key47, 200)
	mustConform(t, "Store", m)
	if m["store_id"] != "47" || m["name"] != "Praha Smíchov" || m["timezone"] != "Europe/Prague" {
		t.Fatalf("store 47: %v", m)
	}
	w := h.get("/v1/stores/61", "foreign-key-61-wien-mitte-0000", 200)
	mustConform(t, "Store", w)
	hours := w["opening_hours"].(map[string]any)
	if w["timezone"] != "Europe/Vienna" || !reflect.DeepEqual(hours["sunday"], map[string]any{"closed": true}) {
		t.Fatalf("store 61: %v", w)
	}
	if !reflect.DeepEqual(hours["monday"], map[string]any{"closed": false, "opens": "07:00", "closes": "21:00"}) {
		t.Fatalf("store 61 monday: %v", hours["monday"])
	}
	for _, id := range []string{"47", "61"} {
		for _, st := range h.get("/v1/stores", key47, 200)["stores"].([]any) {
			if s := st.(map[string]any); s["store_id"] == id {
				if _, err := time.LoadLocation(s["timezone"].(string)); err != nil {
					t.Errorf("store %s: %v", id, err)
				}
			}
		}
	}
}

// Conforming: key scope.
func TestConformsKeyScope(t *testing.T) {
	h := start(t, nil)
	for _, key := range []string{key47, key102} {
		h.get("/v1/stores", key, 200)
		h.get("/v1/skus/8801111", key, 200)
		h.get("/v1/suppliers/sup_5a1c9e02", key, 200)
	}
	h.get("/v1/stores/47", key47, 200)
	h.get("/v1/stores/102", key102, 200)
	h.get("/v1/stores/102", key47, 403)
	h.get("/v1/stores/55/inventory?sku=8847291", key47, 403)
	h.get("/v1/stores/61", key102, 403)
	// 401 whatever the path, before anything else is looked at.
	h.get("/v1/stores/abc", "", 401)
	h.get("/v1/skus/1", "wrong", 401)
	h.get("/v1/stores/47", strings.ToUpper(key47), 401)
}

// Conforming: POS since filter, order, total_count, cursor pagination, fields.
func TestConformsPOSPagination(t *testing.T) {
	h := start(t, nil)
	now := foreignstorelink.DefaultNow()
	since := now.Add(-28 * 24 * time.Hour)
	path := posPath("102", "8847291", since, "&limit=10")
	var all []map[string]any
	seen := map[string]bool{}
	total := -1
	for page, cursor := 0, ""; ; page++ {
		if page > 50 {
			t.Fatal("pagination does not end")
		}
		p := path
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		m := h.get(p, key102, 200)
		mustConform(t, "POSPage", m)
		if m["store_id"] != "102" || m["sku"] != "8847291" || m["since"] != since.Format(time.RFC3339) {
			t.Fatalf("echo: %v %v %v", m["store_id"], m["sku"], m["since"])
		}
		n := int(m["total_count"].(float64))
		if total >= 0 && n != total {
			t.Fatalf("total_count changed from %d to %d", total, n)
		}
		total = n
		for _, x := range m["transactions"].([]any) {
			tx := x.(map[string]any)
			id := tx["transaction_id"].(string)
			if seen[id] {
				t.Fatalf("transaction %s twice", id)
			}
			seen[id] = true
			all = append(all, tx)
		}
		next, ok := m["next_cursor"].(string)
		if !ok {
			break
		}
		cursor = next
	}
	if total < 28 || len(all) != total {
		t.Fatalf("%d transactions over %d pages' worth, total_count %d", len(all), len(all)/10, total)
	}
	var prev time.Time
	for i, tx := range all {
		at, err := time.Parse(time.RFC3339, tx["timestamp"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if _, off := at.Zone(); off != 3600 {
			t.Errorf("%v: offset %d, want +01:00 (Prague in November)", at, off)
		}
		if at.Before(since) || at.After(now) {
			t.Errorf("%v outside [since, now]", at)
		}
		if i > 0 && at.After(prev) {
			t.Errorf("not newest first at %d: %v after %v", i, at, prev)
		}
		prev = at
		if u := tx["units"].(float64); u < 1 || u > 6 || u != float64(int(u)) {
			t.Errorf("units %v", u)
		}
	}

	// since filters.
	recent := h.get(posPath("102", "8847291", now.Add(-7*24*time.Hour), ""), key102, 200)
	if n := int(recent["total_count"].(float64)); n == 0 || n >= total {
		t.Fatalf("last 7 days: %d of %d", n, total)
	}
	future := h.get(posPath("102", "8847291", now.Add(time.Hour), ""), key102, 200)
	if future["total_count"] != float64(0) || len(future["transactions"].([]any)) != 0 {
		t.Fatalf("since in the future: %v", future)
	}

	// A cursor is bound to its query and expires after 15 minutes.
	first := h.get(path, key102, 200)
	cur := url.QueryEscape(first["next_cursor"].(string))
	h.get(posPath("102", "8801111", since, "&cursor="+cur), key102, 422)
	h.get(posPath("102", "8847291", since.Add(time.Second), "&cursor="+cur), key102, 422)
	h.get(path+"&cursor="+cur, key102, 200)
	h.clock.add(16 * time.Minute)
	h.get(path+"&cursor="+cur, key102, 422)
}

func TestDeterministicFromClock(t *testing.T) {
	a, b := start(t, nil), start(t, nil)
	for _, p := range []string{
		posPath("47", "8801111", foreignstorelink.DefaultNow().Add(-28*24*time.Hour), ""),
		"/v1/stores/47/inventory?sku=8801111",
		"/v1/stores",
	} {
		ra, rb := a.do("GET", p, key47, ""), b.do("GET", p, key47, "")
		if ra.status != 200 || string(ra.body) != string(rb.body) {
			t.Fatalf("%s differs between two doubles on the same clock", p)
		}
	}
}

func TestBoundsAndCounting(t *testing.T) {
	h := start(t, nil)
	big := `{"sku":"8847291","quantity_units":24,"reason":"` + strings.Repeat("x", foreignstorelink.MaxBodyBytes) + `"}`
	isDetailText(t, "big body", h.post("/v1/stores/47/replenishment", key47, big, 413))
	if len(h.s.Orders()) != 0 {
		t.Fatal("an oversized body raised an order")
	}
	before := h.s.Requests()
	h.get("/v1/stores", key47, 200)
	h.get("/nowhere", "", 404)
	h.get("/v1/stores", "", 401)
	if got := h.s.Requests() - before; got != 3 {
		t.Fatalf("Requests() grew by %d, want 3", got)
	}
}

// No input makes the double fail (500) or stop answering.
func TestOddInputsNeverFail(t *testing.T) {
	h := start(t, nil)
	paths := []string{
		"/", "//", "/v1", "/v1/", "/v1/stores/", "/v1/stores//inventory", "/v1/stores/47/", "/v1/stores/47/pos/",
		"/v1/stores/%25zz", "/v1/stores/47%2Finventory", "/v1/stores/0000047", "/v1/stores/-1", "/v1/stores/1234567",
		"/v1/stores/47/replenishment/" + strings.Repeat("a", 300), "/v1/suppliers/" + strings.Repeat("s", 300),
		"/v1/skus/" + strings.Repeat("9", 40), "/v1/stores/47/inventory?sku=%ff", "/v1/stores/47/inventory?sku=8847291&sku=abc",
		"/v1/stores/47/pos?sku=8847291&since=2026-11-20T10:00:00%2B01:00&limit=99999999999999999999",
		"/v1/stores/47/pos?sku=8847291&since=2026-11-20T10:00:00Z&cursor=" + strings.Repeat("A", 300),
		"/v1/stores/47/pos?sku=8847291&since=0001-01-01T00:00:00Z&limit=1000",
		"/v1/stores/47/pos?sku=8847291&since=9999-12-31T23:59:59Z",
		"/v1/stores/47/pos?;;;&&&===",
	}
	bodies := []string{"", "null", "{}", "0", `"x"`, `{"sku":null,"quantity_units":null,"reason":null}`,
		`{"sku":"8847291","quantity_units":1e400,"reason":"r"}`, `{"sku":"8847291","quantity_units":-1e400,"reason":"r"}`,
		`{"sku":"8847291","quantity_units":24.0,"reason":"r"}`, `{"sku":"8847291","quantity_units":99999999999999999999999,"reason":"r"}`,
		`{"sku":"8847291","quantity_units":24,"reason":"r"} trailing`, `{"a":{"b":{"c":[[[[]]]]}}}`, "\xff\xfe"}
	for _, key := range []string{"", key47} {
		for _, p := range paths {
			for _, m := range []string{"GET", "POST", "HEAD", "OPTIONS"} {
				if res := h.do(m, p, key, ""); res.status >= 500 {
					t.Errorf("%s %s: %d %s", m, p, res.status, res.body)
				}
			}
		}
		for _, b := range bodies {
			if res := h.do("POST", "/v1/stores/47/replenishment", key, b); res.status >= 500 || res.status == 201 && !strings.Contains(b, "24.0") {
				t.Errorf("POST %q: %d %s", b, res.status, res.body)
			}
		}
	}
}

func TestConcurrentOrders(t *testing.T) {
	h := start(t, nil)
	const n = 24
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := h.do("POST", "/v1/stores/102/replenishment", key102, orderBody(12+i))
			var o map[string]any
			_ = json.Unmarshal(res.body, &o)
			id, _ := o["order_id"].(string)
			ids <- id
			h.do("GET", "/v1/stores/102/pos?sku=8847291&since=2026-11-20T10:00:00Z", key102, "")
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if !orderID.MatchString(id) || seen[id] {
			t.Fatalf("order id %q (duplicate: %v)", id, seen[id])
		}
		seen[id] = true
	}
	if got := len(h.s.Orders()); got != n {
		t.Fatalf("Orders() holds %d, want %d", got, n)
	}
}

func TestNilOptionsUseRealClockAndDefaultKeys(t *testing.T) {
	s := foreignstorelink.New(foreignstorelink.Options{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/stores/47/replenishment", strings.NewReader(orderBody(24)))
	req.Header.Set(foreignstorelink.KeyHeader, key47)
	s.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	o := s.Orders()[0]
	if d := time.Since(o.CreatedAt); d < 0 || d > time.Minute {
		t.Fatalf("created_at %v is not now", o.CreatedAt)
	}
	for id, k := range foreignstorelink.DefaultKeys {
		if len(k) < 24 {
			t.Errorf("default key of %s is shorter than 24", id)
		}
	}
}
