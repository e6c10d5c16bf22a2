package e2e_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// The server degrades where a field or endpoint only qualifies an answer, and
// refuses only where it drives the decision (ADR 0030). A proxy takes fields
// and endpoints away, and each answer is compared with the mock's state.

// departing is a proxy to the mock that drops the named top-level properties
// of successful answers per operation, and answers operations in gone with a
// FastAPI-style 404.
type departing struct {
	drop map[string][]string
	gone map[string]bool
	srv  *httptest.Server
	// asked counts the requests for the operations in gone.
	asked atomic.Int64
}

func newDeparting(t *testing.T, w *e2etest.World, drop map[string][]string, gone ...string) *departing {
	t.Helper()
	target, err := url.Parse(w.Mock.URL)
	if err != nil {
		t.Fatal(err)
	}
	d := &departing{drop: drop, gone: map[string]bool{}}
	for _, op := range gone {
		d.gone[op] = true
	}
	proxy := &httputilProxy{target: target, modify: func(op string, body map[string]any) {
		for _, name := range d.drop[op] {
			delete(body, name)
		}
	}}
	d.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		if d.gone[opOf(r.Method, r.URL.Path)] {
			d.asked.Add(1)
			rw.Header().Set("Content-Type", "application/json")
			rw.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(rw, `{"detail":"Not Found"}`)
			return
		}
		proxy.ServeHTTP(rw, r)
	}))
	t.Cleanup(d.srv.Close)
	return d
}

// opOf names the contract operation of a request.
func opOf(method, path string) string {
	if method == http.MethodPost {
		return mockstorelink.OpCreateReplenishmentOrder
	}
	parts := strings.Split(strings.TrimPrefix(path, "/v1/"), "/")
	switch {
	case len(parts) == 1 && parts[0] == "stores":
		return mockstorelink.OpListStores
	case parts[0] == "skus":
		return mockstorelink.OpGetSKU
	case parts[0] == "suppliers":
		return mockstorelink.OpGetSupplier
	case len(parts) == 2:
		return mockstorelink.OpGetStore
	case parts[2] == "inventory":
		return mockstorelink.OpGetInventory
	case parts[2] == "pos":
		return mockstorelink.OpListPOSTransactions
	default:
		return mockstorelink.OpGetReplenishmentOrder
	}
}

// httputilProxy forwards to the mock and rewrites a successful JSON object answer with modify.
type httputilProxy struct {
	target *url.URL
	modify func(op string, body map[string]any)
}

func (p *httputilProxy) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	out, err := http.NewRequestWithContext(r.Context(), r.Method, p.target.String()+r.URL.RequestURI(), r.Body)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	out.Header = r.Header.Clone()
	resp, err := http.DefaultClient.Do(out)
	if err != nil {
		http.Error(rw, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	var obj map[string]any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if resp.StatusCode < 300 && dec.Decode(&obj) == nil {
		p.modify(opOf(r.Method, r.URL.Path), obj)
		body, _ = json.Marshal(obj)
	}
	for k, v := range resp.Header {
		if k != "Content-Length" {
			rw.Header()[k] = v
		}
	}
	rw.WriteHeader(resp.StatusCode)
	_, _ = rw.Write(body)
}

// mockState reads the mock's own answer at path with the store's key.
func mockState(t *testing.T, w *e2etest.World, store, path string) map[string]any {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, w.Mock.URL+path, nil)
	req.Header.Set(mockstorelink.StoreKeyHeader, w.Mock.Server.DefaultKeyring()[store])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	if err := json.NewDecoder(resp.Body).Decode(&v); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("mock %s: %d %v", path, resp.StatusCode, err)
	}
	return v
}

func unknownHas(v any, name string) bool {
	list, _ := v.([]any)
	return slices.ContainsFunc(list, func(s any) bool { str, _ := s.(string); return strings.HasPrefix(str, name+": ") })
}

// TestMissingQualifiersDegradeTheAnswers: without store hours, names, lead
// time and store list, every tool still answers with the mock's figures and
// caveats, and a confirmed order is raised.
func TestMissingQualifiersDegradeTheAnswers(t *testing.T) {
	w := e2etest.NewWorld(t)
	d := newDeparting(t, w, map[string][]string{
		mockstorelink.OpGetStore:    {"opening_hours", "name"},
		mockstorelink.OpGetSupplier: {"lead_time_days"},
	}, mockstorelink.OpListStores)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true", "UPSTREAM_BASE_URL="+d.srv.URL))

	checkStoresWithoutQualifiers(t, w, p, d)
	inv := checkRiskWithoutQualifiers(t, w, p)
	checkWriteWithoutQualifiers(t, w, p, checkPreviewWithoutQualifiers(t, p, inv))
	checkSalesWithoutQualifiers(t, w, p)
}

// checkStoresWithoutQualifiers: the store list is the keyring's stores with
// the caveats, and the tool never asks StoreLink for the list.
func checkStoresWithoutQualifiers(t *testing.T, w *e2etest.World, p *e2etest.Proc, d *departing) {
	t.Helper()
	list := data(t, p.Call("korral_list_authorized_stores", map[string]any{}))
	var want, got []string
	for id := range w.Mock.Server.DefaultKeyring() {
		want = append(want, id)
	}
	for _, s := range list["stores"].([]any) {
		st := s.(map[string]any)
		got = append(got, st["store_id"].(string))
		if st["error"] != nil || st["timezone"] == nil || st["name"] != nil || st["open_now"] != nil || st["opening_hours_today"] != nil {
			t.Errorf("store %v: %v", st["store_id"], st)
		}
		if !unknownHas(st["unknown"], "store.opening_hours") || !unknownHas(st["unknown"], "store.name") {
			t.Errorf("store %v: unknown %v", st["store_id"], st["unknown"])
		}
	}
	sort.Strings(want)
	sort.Strings(got)
	if !slices.Equal(want, got) {
		t.Errorf("listed %v, the keyring holds %v", got, want)
	}
	if n := d.asked.Load(); n != 0 {
		t.Errorf("the store list was asked for %d times", n)
	}
}

// checkRiskWithoutQualifiers: the mock's on-hand figure and no claim about
// the close or a delivery. It returns the mock's inventory of butter at 47.
func checkRiskWithoutQualifiers(t *testing.T, w *e2etest.World, p *e2etest.Proc) map[string]any {
	t.Helper()
	inv := mockState(t, w, "47", "/v1/stores/47/inventory?sku="+mockstorelink.SKUButter)
	risk := data(t, p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}))
	r := risk["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	if fmt.Sprint(r["on_hand_units"]) != fmt.Sprint(inv["on_hand_units"]) {
		t.Errorf("on hand %v, the mock holds %v", r["on_hand_units"], inv["on_hand_units"])
	}
	if r["will_stockout_before_close_today"] != "unknown" || r["closes_at_today"] != nil || r["units_short_by_close"] != nil {
		t.Errorf("a claim about the close without hours: %v %v %v", r["will_stockout_before_close_today"], r["closes_at_today"], r["units_short_by_close"])
	}
	if r["earliest_delivery"] != nil || r["arrival_beats_stockout"] != "unknown" || risk["product"].(map[string]any)["lead_time_days"] != nil {
		t.Errorf("a delivery claim without a lead time: %v %v", r["earliest_delivery"], r["arrival_beats_stockout"])
	}
	if !unknownHas(r["unknown"], "store.opening_hours") || !unknownHas(risk["product"].(map[string]any)["unknown"], "supplier.lead_time_days") {
		t.Errorf("risk unknown %v, product %v", r["unknown"], risk["product"])
	}
	if r["stockout_window"] == nil || r["confidence"] == "none" {
		t.Errorf("the projection itself did not answer: %v", r)
	}
	return inv
}

// checkPreviewWithoutQualifiers: same figures, no days of cover, the caveats. It returns the key.
func checkPreviewWithoutQualifiers(t *testing.T, p *e2etest.Proc, inv map[string]any) string {
	t.Helper()
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))
	j := preview["justification"].(map[string]any)
	if fmt.Sprint(j["on_hand_units"]) != fmt.Sprint(inv["on_hand_units"]) || j["days_of_cover_after_delivery"] != nil ||
		j["expected_arrival"] != nil || j["will_stockout_before_close_today"] != "unknown" || !unknownHas(j["unknown"], "supplier.lead_time_days") {
		t.Errorf("justification %v", j)
	}
	if reasons := fmt.Sprint(preview["quantity_check"]); !strings.Contains(reasons, "lead time is unknown") {
		t.Errorf("quantity check %v does not say why cover is not judged", reasons)
	}
	key, _ := preview["idempotency_key"].(string)
	return key
}

// checkWriteWithoutQualifiers: one order is sent with the quantity asked.
func checkWriteWithoutQualifiers(t *testing.T, w *e2etest.World, p *e2etest.Proc, key string) {
	t.Helper()
	raised := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key)))
	orderID, _ := raised["order_id"].(string)
	if raised["mode"] != "raised" || orderID == "" {
		t.Fatalf("raise: %v", raised)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs reached the mock, want 1", n)
	}
	var held []mockstorelink.Order
	for _, o := range w.Mock.Server.Orders() {
		if o.OrderID == orderID {
			held = append(held, o)
		}
	}
	if len(held) != 1 || held[0].QuantityUnits != 24 || held[0].StoreID != "47" {
		t.Fatalf("the mock holds %+v for %s", held, orderID)
	}
	status := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": orderID, "store_id": "47"}))
	if status["quantity_units"] != 24.0 || status["order_id"] != orderID {
		t.Fatalf("status: %v", status)
	}
}

// checkSalesWithoutQualifiers: the sales answer matches the mock's POS.
func checkSalesWithoutQualifiers(t *testing.T, w *e2etest.World, p *e2etest.Proc) {
	t.Helper()
	sales := data(t, p.Call("korral_list_recent_sales", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}))
	pos := mockState(t, w, "47", "/v1/stores/47/pos?limit=1000&sku="+mockstorelink.SKUButter+"&since="+url.QueryEscape(sales["window_start"].(string)))
	var units float64
	for _, tx := range pos["transactions"].([]any) {
		units += num(tx.(map[string]any)["units"])
	}
	if num(sales["count_total_available"]) != num(pos["total_count"]) || num(sales["units_sold_in_window"]) != units {
		t.Errorf("sales %v of %v units, the mock holds %v of %v", sales["count_total_available"], sales["units_sold_in_window"], pos["total_count"], units)
	}
}

// TestTheMocksQualifierDriftsDegrade: the mock's qualifier drift faults give
// a risk check with both qualifiers unknown, not a refusal.
func TestTheMocksQualifierDriftsDegrade(t *testing.T) {
	w := e2etest.NewWorld(t)
	w.Mock.Server.SetFaults(
		mockstorelink.Fault{Kind: mockstorelink.FaultDriftRenameField, OperationID: mockstorelink.OpGetStore},
		mockstorelink.Fault{Kind: mockstorelink.FaultDriftMissingField, OperationID: mockstorelink.OpGetSupplier})
	p := e2etest.StartServer(t, w.Env())
	inv := mockState(t, w, "47", "/v1/stores/47/inventory?sku="+mockstorelink.SKUButter)
	risk := data(t, p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}))
	r := risk["stores"].([]any)[0].(map[string]any)["risk"].(map[string]any)
	if fmt.Sprint(r["on_hand_units"]) != fmt.Sprint(inv["on_hand_units"]) || r["will_stockout_before_close_today"] != "unknown" ||
		!unknownHas(r["unknown"], "store.opening_hours") || !unknownHas(risk["product"].(map[string]any)["unknown"], "supplier.lead_time_days") {
		t.Errorf("risk %v", r)
	}
}

// TestBrokenDecisionFieldsAreAllNamed: two broken decision fields from two
// reads are both named, each with its rule id, in one refusal.
func TestBrokenDecisionFieldsAreAllNamed(t *testing.T) {
	w := e2etest.NewWorld(t)
	d := newDeparting(t, w, map[string][]string{mockstorelink.OpGetInventory: {"on_hand_units"}})
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftRenameField, OperationID: mockstorelink.OpGetSKU})
	p := e2etest.StartServer(t, w.Env("UPSTREAM_BASE_URL="+d.srv.URL))
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}},
		{"korral_raise_replenishment_order", e2etest.Order(24)},
	} {
		env := p.Call(call.tool, call.args)
		msg := errMessage(env)
		if e2etest.Code(env) != "UPSTREAM_CONTRACT_ERROR" {
			t.Fatalf("%s: %v", call.tool, env)
		}
		for _, want := range []string{
			"inventory.on_hand_units: required but missing (rule schema.required)",
			"sku.pack_size: not in the contract; sku.case_pack renamed? (rule schema.renamed)",
		} {
			if !strings.Contains(msg, want) {
				t.Errorf("%s: message %q lacks %q", call.tool, msg, want)
			}
		}
	}
}

// TestDegradedAnswersPassTheTypeScriptClient: every answer with unknown
// qualifiers passes the TypeScript client's output-schema check.
func TestDegradedAnswersPassTheTypeScriptClient(t *testing.T) {
	inst := findTSClient(t)
	w := e2etest.NewWorld(t)
	d := newDeparting(t, w, map[string][]string{
		mockstorelink.OpGetStore:                 {"opening_hours", "name"},
		mockstorelink.OpGetSupplier:              {"lead_time_days"},
		mockstorelink.OpGetInventory:             {"counted_at"},
		mockstorelink.OpListPOSTransactions:      {"total_count"},
		mockstorelink.OpGetReplenishmentOrder:    {"expected_arrival", "submitted_at"},
		mockstorelink.OpCreateReplenishmentOrder: {"expected_arrival"},
	}, mockstorelink.OpListStores)
	h := startTSHost(t, inst, &journal{statuses: map[string]bool{}}, "degraded", w.Env("ALLOW_WRITES=true", "UPSTREAM_BASE_URL="+d.srv.URL))
	butter := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	for _, c := range []struct {
		tool string
		args map[string]any
		want string // a qualifier the answer must say is unknown
	}{
		{"korral_list_authorized_stores", map[string]any{}, "store.opening_hours"},
		{"korral_check_stock_risk", butter, "inventory.counted_at"},
		{"korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []string{"all"}}, "store.opening_hours"},
		{"korral_list_recent_sales", butter, "pos.total_count"},
		{"korral_get_order_status", map[string]any{"order_id": mockstorelink.OrderOpen, "store_id": "47"}, "order.expected_arrival"},
		{"korral_raise_replenishment_order", e2etest.Order(24), "supplier.lead_time_days"},
	} {
		env := h.call(c.tool, c.tool, c.args, "ok")
		if b, _ := json.Marshal(env); !strings.Contains(string(b), c.want+": ") {
			t.Errorf("%s: the answer does not say %s is unknown: %s", c.tool, c.want, b)
		}
	}
	preview := h.call("preview", "korral_raise_replenishment_order", e2etest.Order(12), "ok")
	raised := h.call("confirm", "korral_raise_replenishment_order", e2etest.Order(12, "confirm", true, "idempotency_key", field(preview, "idempotency_key")), "ok")
	// StoreLink left the expected arrival out: none is stated.
	if field(raised, "mode") != "raised" || field(raised, "expected_arrival") != "" {
		t.Fatalf("confirm: %v", raised)
	}
}

// TestDegradedAnswerSizes holds degraded answers to the fixtures' budgets
// (ADR 0012) plus degradedAllowance per store answered.
func TestDegradedAnswerSizes(t *testing.T) {
	const degradedAllowance = 300
	w := e2etest.NewWorld(t)
	d := newDeparting(t, w, map[string][]string{
		mockstorelink.OpGetStore:     {"opening_hours", "name"},
		mockstorelink.OpGetSupplier:  {"lead_time_days"},
		mockstorelink.OpGetInventory: {"counted_at"},
	}, mockstorelink.OpListStores)
	p := e2etest.StartServer(t, w.Env("UPSTREAM_BASE_URL="+d.srv.URL))
	butter := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	for _, c := range []struct {
		name           string
		tool           string
		args           map[string]any
		budget, stores int
	}{
		{"stores (2 in keyring)", "korral_list_authorized_stores", map[string]any{}, 700, 2},
		{"risk butter 47", "korral_check_stock_risk", butter, 1850, 1},
		{"risk butter 47+102", "korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"47", "102"}}, 3350, 2},
		{"preview 24 butter 47", "korral_raise_replenishment_order", e2etest.Order(24), 1450, 1},
	} {
		text := answerText(t, p, c.tool, c.args)
		if !strings.Contains(text, `"unknown":`) {
			t.Errorf("%s: no unknown list:\n%s", c.name, text)
		}
		budget := c.budget + c.stores*degradedAllowance
		t.Logf("%s: %d bytes (budget %d)", c.name, len(text), budget)
		if len(text) > budget {
			t.Errorf("%s: %d bytes, over %d:\n%s", c.name, len(text), budget, text)
		}
	}
}
