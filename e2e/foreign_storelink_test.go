package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/foreignstorelink"
	"github.com/korral/storelink/internal/e2etest"
)

// The real binary against a StoreLink that departs from the contract
// (conformance/foreignstorelink, D1-D8): no tool states as fact something
// StoreLink did not say, and no order is sent unless a tool says it raised it.

const (
	foreignSKU    = "8847291"
	foreignPrague = "Europe/Prague"
)

// foreignWorld is the double on loopback behind a recorder, plus the server's files.
type foreignWorld struct {
	double      *foreignstorelink.Server
	url         string
	keyringPath string
	statePath   string
	dir         string

	mu   sync.Mutex
	seen []string // "METHOD path" of every request, in order
	// direct are the order ids the test itself raised at the double.
	direct []string
}

// newForeignWorld starts the double. repair, if not nil, may rewrite a 200
// body of a path, to take one departure out of the way.
func newForeignWorld(t *testing.T, repair func(path, body string) string) *foreignWorld {
	t.Helper()
	w := &foreignWorld{double: foreignstorelink.New(foreignstorelink.Options{}), dir: t.TempDir()}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		w.seen = append(w.seen, r.Method+" "+r.URL.Path)
		w.mu.Unlock()
		if repair == nil {
			w.double.ServeHTTP(rw, r)
			return
		}
		rec := httptest.NewRecorder()
		w.double.ServeHTTP(rec, r)
		body := rec.Body.String()
		if rec.Code == http.StatusOK {
			body = repair(r.URL.Path, body)
		}
		for k, v := range rec.Header() {
			if k != "Content-Length" {
				rw.Header()[k] = v
			}
		}
		rw.WriteHeader(rec.Code)
		_, _ = io.WriteString(rw, body)
	}))
	t.Cleanup(srv.Close)
	w.url = srv.URL
	w.keyringPath = filepath.Join(w.dir, "keyring.json")
	w.statePath = filepath.Join(w.dir, "state.db")
	b, _ := json.Marshal(foreignstorelink.DefaultKeys)
	if err := os.WriteFile(w.keyringPath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	return w
}

func (w *foreignWorld) env() []string {
	return []string{
		"UPSTREAM_BASE_URL=" + w.url,
		"STORELINK_KEYRING_FILE=" + w.keyringPath,
		"STATE_DB_PATH=" + w.statePath,
		"ALLOW_WRITES=true",
		"LOG_LEVEL=debug",
		"HOME=" + w.dir,
	}
}

// requests returns the requests seen so far.
func (w *foreignWorld) requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return slices.Clone(w.seen)
}

// posts counts the POSTs the double received from anyone but the test.
func (w *foreignWorld) posts() int {
	n := 0
	for _, r := range w.requests() {
		if strings.HasPrefix(r, "POST ") {
			n++
		}
	}
	return n - len(w.direct)
}

// http asks the double directly with store 47's key and returns the status and body.
func (w *foreignWorld) http(t *testing.T, method, path, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, w.url+path, rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set(foreignstorelink.KeyHeader, foreignstorelink.DefaultKeys["47"])
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var m map[string]any
	if err := json.NewDecoder(res.Body).Decode(&m); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	return res.StatusCode, m
}

// judge checks the double holds exactly the orders the test raised itself
// plus those the ledger says the tools raised.
func (w *foreignWorld) judge(t *testing.T, after string) {
	t.Helper()
	var held []string
	for _, o := range w.double.Orders() {
		held = append(held, o.OrderID)
	}
	var raised []string
	for _, e := range ledgerEntries(t, w.statePath) {
		if e.State == "raised" || e.OrderID != "" {
			raised = append(raised, e.OrderID)
		}
	}
	want := append(slices.Clone(w.direct), raised...)
	slices.Sort(held)
	slices.Sort(want)
	if !slices.Equal(held, want) || len(raised) != 0 || w.posts() != 0 {
		t.Fatalf("after %s: StoreLink holds %v; the test raised %v and the ledger says the tools raised %v; %d POST(s) came from the server",
			after, held, w.direct, raised, w.posts())
	}
}

// foreignCall calls a tool, checks no store key is in the answer, and runs judge.
func foreignCall(t *testing.T, p *e2etest.Proc, w *foreignWorld, name string, args map[string]any) map[string]any {
	t.Helper()
	env := p.Call(name, args)
	b, _ := json.Marshal(env)
	for store, key := range foreignstorelink.DefaultKeys {
		if strings.Contains(string(b), key) {
			t.Fatalf("%s: the answer holds store %s's key", name, store)
		}
	}
	w.judge(t, name)
	return env
}

// wantContractError wants UPSTREAM_CONTRACT_ERROR, no data, every part of
// want in the message and none of absent.
func wantContractError(t *testing.T, what string, env map[string]any, want []string, absent ...string) string {
	t.Helper()
	msg := errMessage(env)
	if e2etest.Code(env) != "UPSTREAM_CONTRACT_ERROR" || env["data"] != nil {
		t.Fatalf("%s: want UPSTREAM_CONTRACT_ERROR and no data, got %v", what, env)
	}
	for _, s := range want {
		if !strings.Contains(msg, s) {
			t.Errorf("%s: the message does not say %q:\n%s", what, s, msg)
		}
	}
	for _, s := range absent {
		if regexp.MustCompile(`(^|[^0-9A-Za-z_.@])` + regexp.QuoteMeta(s) + `($|[^0-9A-Za-z_@])`).MatchString(msg) {
			t.Errorf("%s: the message states %q, a value of StoreLink's body:\n%s", what, s, msg)
		}
	}
	return msg
}

// claimsUnknown matches wording that declares an order unknown to StoreLink.
var claimsUnknown = regexp.MustCompile(`(?i)unknown order|no such order|has no order|not known|is unknown to|never raised|not found`)

// valuesOfTheDouble are values in the double's bodies that a refusal must not relay.
var valuesOfTheDouble = []string{"9", "12", "orders@madeta.example", "sup_5a1c9e02", "Madeta a.s.", "Madeta"}

func TestForeignStoreLinkFiveTools(t *testing.T) {
	w := newForeignWorld(t, nil)
	p := e2etest.StartServer(t, w.env())

	foreignStores(t, p, w)
	foreignRisk(t, p, w)
	// --- korral_list_recent_sales: the answer is exactly what the double holds.
	checkSales(t, p, w, map[string]any{"sku": foreignSKU, "store_id": "47"}, 0)
	since := time.Now().Add(-6 * 24 * time.Hour).Format(time.RFC3339)
	checkSales(t, p, w, map[string]any{"sku": foreignSKU, "store_id": "47", "since": since, "limit": 1}, 1)

	foreignHeldOrderStatus(t, p, w)
	foreignUnheldOrderStatus(t, p, w)
	foreignOrder(t, p, w)
}

// foreignStores: open_now is what the double's hours say at the tool's local time, or absent.
func foreignStores(t *testing.T, p *e2etest.Proc, w *foreignWorld) {
	t.Helper()
	env := foreignCall(t, p, w, "korral_list_authorized_stores", map[string]any{})
	stores, _ := data(t, env)["stores"].([]any)
	names := map[string]string{"47": "Praha Smíchov", "102": "Brno Královo Pole"}
	var ids []string
	for _, s := range stores {
		st := s.(map[string]any)
		id, _ := st["store_id"].(string)
		ids = append(ids, id)
		if plainText(st["name"]) != names[id] || st["timezone"] != foreignPrague {
			t.Errorf("store %s: %v", id, st)
		}
		checkOpenNow(t, w, id, st)
	}
	if slices.Sort(ids); !slices.Equal(ids, []string{"102", "47"}) {
		t.Fatalf("stores %v, want exactly 47 and 102", ids)
	}
}

// foreignRisk: the renamed on_hand_units (D3) and the SKU's extra property
// (D8) are both named in one refusal, and no count is stated (ADR 0030).
func foreignRisk(t *testing.T, p *e2etest.Proc, w *foreignWorld) {
	t.Helper()
	before := len(w.requests())
	env := foreignCall(t, p, w, "korral_check_stock_risk", map[string]any{"sku": foreignSKU, "store_id": "47"})
	msg := wantContractError(t, "check_stock_risk", env, []string{
		"StoreLink's answers to 2 reads broke the contract in 2 field(s)",
		// One break per rename: its field is not listed again as missing.
		": inventory.on_hand: not in the contract; inventory.on_hand_units renamed? (rule schema.renamed);",
		"sku.brand: not in the contract (rule schema.additional_properties) |",
	}, valuesOfTheDouble...)
	t.Logf("check_stock_risk: %s", msg)
	if !slices.Contains(w.requests()[before:], "GET /v1/stores/47/inventory") {
		t.Fatalf("the risk check did not read the inventory: %v", w.requests()[before:])
	}
}

// foreignHeldOrderStatus: an order the double holds is asked of StoreLink and
// refused for the renamed quantity (D5); renamed times only qualify (ADR 0030).
func foreignHeldOrderStatus(t *testing.T, p *e2etest.Proc, w *foreignWorld) {
	t.Helper()
	status, created := w.http(t, http.MethodPost, "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":12,"reason":"e2e"}`)
	orderID, _ := created["order_id"].(string)
	if status != http.StatusCreated || !regexp.MustCompile(`^rpl_[0-9a-f]{10}$`).MatchString(orderID) {
		t.Fatalf("direct POST: %d %v", status, created)
	}
	w.direct = append(w.direct, orderID)
	w.judge(t, "the direct POST")
	before := len(w.requests())
	env := foreignCall(t, p, w, "korral_get_order_status", map[string]any{"order_id": orderID, "store_id": "47"})
	msg := wantContractError(t, "order status of "+orderID, env, []string{
		"StoreLink's answer to GET /v1/stores/{store_id}/replenishment/{order_id} broke the contract",
		"order.quantity: not in the contract; order.quantity_units renamed? (rule schema.renamed)",
	}, "12", "pending", "e2e", created["created_at"].(string), created["expected_delivery"].(string))
	t.Logf("order status %s: %s", orderID, msg)
	if strings.Contains(msg, "created_at") || strings.Contains(msg, "expected_delivery") {
		t.Errorf("a qualifier's rename is given as why the order status is refused: %s", msg)
	}
	if claimsUnknown.MatchString(msg) {
		t.Errorf("the order StoreLink holds is called unknown: %s", msg)
	}
	if got := w.requests()[before:]; !slices.Equal(got, []string{"GET /v1/stores/47/replenishment/" + orderID}) {
		t.Fatalf("the order status asked StoreLink %v, want exactly GET of %s", got, orderID)
	}
	// stderr is copied asynchronously: wait (bounded) for the lines.
	var all string
	for deadline := time.Now().Add(3 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		var logged []string
		for _, msg := range []string{"upstream.contract_error", "upstream.unknown_fields"} {
			for _, l := range p.LinesWhere(msg, "route", "/v1/stores/{store_id}/replenishment/{order_id}") {
				b, _ := json.Marshal([]any{l["field"], l["fields"]})
				logged = append(logged, msg+" "+string(b))
			}
		}
		all = strings.Join(logged, " ")
		if len(logged) > 1 || time.Now().After(deadline) {
			break
		}
	}
	if !strings.Contains(all, `upstream.contract_error ["order.quantity"`) || !strings.Contains(all, `"created_at"`) || !strings.Contains(all, `"expected_delivery"`) {
		t.Errorf("the log does not name the double's order fields: %s", all)
	}
}

// foreignUnheldOrderStatus: a 404 with a FastAPI body (D1) is not read as "no such order".
func foreignUnheldOrderStatus(t *testing.T, p *e2etest.Proc, w *foreignWorld) {
	t.Helper()
	before := len(w.requests())
	env := foreignCall(t, p, w, "korral_get_order_status", map[string]any{"order_id": "rpl_0000000000", "store_id": "47"})
	msg := wantContractError(t, "order status of rpl_0000000000", env, []string{
		"StoreLink answered GET /v1/stores/{store_id}/replenishment/{order_id} with status 404",
		`without the contract's error object {"error": {"code", "message"}} (it has detail)`,
		"what the refusal means is unknown",
	}, "Order rpl_0000000000 not found")
	t.Logf("order status rpl_0000000000: %s", msg)
	if claimsUnknown.MatchString(strings.ReplaceAll(msg, "what the refusal means is unknown", "")) {
		t.Errorf("the server declares the order unknown: %s", msg)
	}
	if got := w.requests()[before:]; !slices.Equal(got, []string{"GET /v1/stores/47/replenishment/rpl_0000000000"}) {
		t.Fatalf("the order status asked StoreLink %v", got)
	}
}

// foreignOrder: the preview needs the renamed on-hand; refused, nothing sent.
func foreignOrder(t *testing.T, p *e2etest.Proc, w *foreignWorld) {
	t.Helper()
	order := map[string]any{"sku": foreignSKU, "store_id": "47", "quantity_units": 24, "reason": "e2e foreign preview"}
	env := foreignCall(t, p, w, "korral_raise_replenishment_order", order)
	msg := wantContractError(t, "preview", env, []string{
		"StoreLink's answers to 2 reads broke the contract",
		"inventory.on_hand_units renamed? (rule schema.renamed)",
		"sku.brand: not in the contract (rule schema.additional_properties)",
	}, valuesOfTheDouble...)
	t.Logf("preview: %s", msg)

	// --- confirm true: refused before any POST (D8).
	order["confirm"] = true
	before := len(w.requests())
	env = foreignCall(t, p, w, "korral_raise_replenishment_order", order)
	msg = wantContractError(t, "confirm", env, []string{
		"StoreLink's answer to GET /v1/skus/{sku} broke the contract",
		"sku.brand: not in the contract (rule schema.additional_properties)",
	}, valuesOfTheDouble...)
	t.Logf("confirm: %s", msg)
	for _, r := range w.requests()[before:] {
		if strings.HasPrefix(r, "POST ") {
			t.Fatalf("the confirmed order was sent: %v", w.requests()[before:])
		}
	}
	checkNoOrderRaised(t, p, w)
}

// With D3 and D8 repaired, the supplier's renamed minimum (D4) is refused by
// name and rule, never read as "no minimum", and nothing is sent.
func TestForeignStoreLinkSupplierMinimumIsNeverReadAsAbsent(t *testing.T) {
	w := newForeignWorld(t, func(path, body string) string {
		switch {
		case strings.HasSuffix(path, "/inventory"):
			return strings.Replace(body, `"on_hand":`, `"on_hand_units":`, 1)
		case strings.HasPrefix(path, "/v1/skus/"):
			return strings.Replace(body, `"brand":"Madeta",`, "", 1)
		}
		return body
	})
	p := e2etest.StartServer(t, w.env())
	supplierFinding := []string{
		"StoreLink's answer to GET /v1/suppliers/{supplier_id} broke the contract",
		"supplier.min_order_qty: not in the contract; supplier.minimum_order_units renamed? (rule schema.renamed)",
		"supplier.contact_email: not in the contract (rule schema.additional_properties)",
	}
	env := foreignCall(t, p, w, "korral_check_stock_risk", map[string]any{"sku": foreignSKU, "store_id": "47"})
	t.Logf("check_stock_risk: %s", wantContractError(t, "check_stock_risk", env, supplierFinding, valuesOfTheDouble...))

	order := map[string]any{"sku": foreignSKU, "store_id": "47", "quantity_units": 6, "reason": "e2e below the supplier's minimum"}
	for _, confirm := range []bool{false, true} {
		order["confirm"] = confirm
		env = foreignCall(t, p, w, "korral_raise_replenishment_order", order)
		msg := wantContractError(t, fmt.Sprintf("raise confirm=%v", confirm), env, supplierFinding, valuesOfTheDouble...)
		t.Logf("raise confirm=%v: %s", confirm, msg)
		if regexp.MustCompile(`(?i)no (supplier )?minimum|minimum[^.;]*(unknown|none|not set)`).MatchString(msg) {
			t.Errorf("the answer says there is no supplier minimum: %s", msg)
		}
	}
	if !slices.Contains(w.requests(), "GET /v1/suppliers/sup_5a1c9e02") {
		t.Fatalf("the supplier was never read: %v", w.requests())
	}
	checkNoOrderRaised(t, p, w)
}

// checkOpenNow: open_now may be absent, never contrary to the double's hours.
func checkOpenNow(t *testing.T, w *foreignWorld, id string, st map[string]any) {
	t.Helper()
	local, err := time.Parse(time.RFC3339, fmt.Sprint(st["local_time_now"]))
	if err != nil {
		t.Fatalf("store %s: local_time_now: %v", id, st)
	}
	loc, _ := time.LoadLocation(foreignPrague)
	local = local.In(loc)
	key := foreignstorelink.DefaultKeys[id]
	req, _ := http.NewRequest(http.MethodGet, w.url+"/v1/stores/"+id, nil)
	req.Header.Set(foreignstorelink.KeyHeader, key)
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	var body struct {
		OpeningHours map[string]struct {
			Closed        bool
			Opens, Closes string
		} `json:"opening_hours"`
	}
	if err := json.NewDecoder(res.Body).Decode(&body); err != nil {
		t.Fatal(err)
	}
	day := body.OpeningHours[strings.ToLower(local.Weekday().String())]
	clock := local.Format("15:04")
	open := !day.Closed && clock >= day.Opens && clock < day.Closes
	said, present := st["open_now"]
	if present && said != open {
		t.Errorf("store %s: open_now %v at %s, but StoreLink's hours today are %+v", id, said, local, day)
	}
	if !present {
		t.Logf("store %s: open_now left out", id)
	}
	if want := day.Opens + "-" + day.Closes; !day.Closed && st["opening_hours_today"] != want {
		t.Errorf("store %s: opening_hours_today %v, StoreLink says %s", id, st["opening_hours_today"], want)
	}
	if open {
		closes, _ := time.ParseInLocation("2006-01-02 15:04", local.Format("2006-01-02 ")+day.Closes, loc)
		if m := num(st["closes_in_minutes"]); m < closes.Sub(local).Minutes()-1 || m > closes.Sub(local).Minutes()+1 {
			t.Errorf("store %s: closes_in_minutes %v at %s, closes %s", id, st["closes_in_minutes"], local, day.Closes)
		}
	}
}

// checkSales checks every row and total against the double's POS over the
// tool's window. limit 0 means the tool's default.
func checkSales(t *testing.T, p *e2etest.Proc, w *foreignWorld, args map[string]any, limit int) {
	t.Helper()
	env := foreignCall(t, p, w, "korral_list_recent_sales", args)
	d := data(t, env)
	start, err1 := time.Parse(time.RFC3339, fmt.Sprint(d["window_start"]))
	end, err2 := time.Parse(time.RFC3339, fmt.Sprint(d["window_end"]))
	if err1 != nil || err2 != nil || d["store_id"] != "47" || d["sku"] != foreignSKU {
		t.Fatalf("sales %v: %v", args, d)
	}
	q := url.Values{"sku": {foreignSKU}, "since": {start.Format(time.RFC3339)}, "limit": {"1000"}}
	status, pos := w.http(t, http.MethodGet, "/v1/stores/47/pos?"+q.Encode(), "")
	if status != http.StatusOK || pos["next_cursor"] != nil {
		t.Fatalf("the double's POS: %d %v", status, pos)
	}
	var want [][]any
	var units float64
	for _, x := range pos["transactions"].([]any) {
		tx := x.(map[string]any)
		at, _ := time.Parse(time.RFC3339, tx["timestamp"].(string))
		if at.After(end) { // sold after the tool answered
			continue
		}
		want = append(want, []any{at.In(start.Location()).Format(time.RFC3339), tx["units"], tx["transaction_id"]})
		units += tx["units"].(float64)
	}
	if len(want) == 0 && limit > 0 {
		// The six-day window always holds sales; an empty one would prove nothing.
		t.Fatalf("the double sold nothing in %s..%s: the comparison would prove nothing", start, end)
	}
	items := d["items"].(map[string]any)
	rows := items["rows"].([]any)
	if fmt.Sprint(items["columns"]) != "[timestamp units transaction_id]" {
		t.Fatalf("columns %v", items["columns"])
	}
	shown := len(want)
	if limit > 0 {
		shown = min(limit, len(want))
	}
	if len(rows) != shown || num(d["count_returned"]) != float64(shown) ||
		num(d["count_total_available"]) != float64(len(want)) || num(d["units_sold_in_window"]) != units ||
		(d["units_total_complete"] != true && len(want) > 0) || d["truncated"] != (shown < len(want)) {
		t.Fatalf("sales %v: %d rows of %v total, %v units (complete %v, truncated %v); the double holds %d sales, %v units",
			args, len(rows), d["count_total_available"], d["units_sold_in_window"], d["units_total_complete"], d["truncated"], len(want), units)
	}
	for i, r := range rows {
		if fmt.Sprint(r) != fmt.Sprint(want[i]) {
			t.Fatalf("sales %v, row %d: %v; the double's sale is %v", args, i, r, want[i])
		}
	}
}

// checkNoOrderRaised: no tool raised an order, and no key reached the log or audit trail.
func checkNoOrderRaised(t *testing.T, p *e2etest.Proc, w *foreignWorld) {
	t.Helper()
	w.judge(t, "the last call")
	for k, e := range ledgerEntries(t, w.statePath) {
		if e.State == "raised" || e.OrderID != "" {
			t.Errorf("ledger entry %s: %+v", k, e)
		}
	}
	rows := auditRowsIn(t, w.env())
	var raises int
	for _, r := range rows {
		if r["tool"] != "korral_raise_replenishment_order" {
			continue
		}
		raises++
		if r["outcome"] != "error" || r["error_code"] != "UPSTREAM_CONTRACT_ERROR" {
			t.Errorf("audit row of a refused order: %v", r)
		}
		if s := fmt.Sprint(r["summary"]); regexp.MustCompile(`(?i)\braised\b|rpl_|order_id`).MatchString(s) {
			t.Errorf("the audit row says an order was raised: %v", r)
		}
	}
	if raises != 2 {
		t.Errorf("%d audit rows of korral_raise_replenishment_order, want 2: %v", raises, rows)
	}
	p.Stop()
	p.LogLines() // every line is JSON
	trail, _, _ := e2etest.RunCLI(t, w.env(), "audit")
	for store, key := range foreignstorelink.DefaultKeys {
		if strings.Contains(p.Stderr.String(), key) || strings.Contains(trail, key) {
			t.Errorf("store %s's key is in the server's log or the audit trail", store)
		}
	}
}
