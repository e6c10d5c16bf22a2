package e2e_test

import (
	"encoding/json"
	"fmt"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// A hostile StoreLink sends strings and arrays past the contract's limits
// (ADR 0037). The adapter refuses them (a decision field) or leaves them out
// (a qualifier) before anything reaches an answer, a log line or the audit,
// so every answer keeps its budget.

// hostileFill is what the hostile StoreLink appends to a string: 100,000
// characters, the size the adversarial pass sent.
var hostileFill = strings.Repeat("Zq", 50000)

// hostileMark is a piece of the fill that must appear nowhere.
const hostileMark = "ZqZqZqZqZqZqZqZq"

// timeKeys are the date-time properties: the adapter decodes them as times,
// never keeps their text, so growing them tests another rule.
var timeKeys = map[string]bool{"counted_at": true, "since": true, "timestamp": true, "submitted_at": true, "expected_arrival": true}

// hostile forwards to the mock and grows what one operation's answers hold
// at one place (a pointer such as transactions/0/transaction_id), or, with
// op "*", every string and array of every answer.
type hostile struct {
	mu      sync.Mutex
	op, ptr string
	srv     *httptest.Server
}

func newHostile(t *testing.T, w *e2etest.World) *hostile {
	t.Helper()
	target, err := url.Parse(w.Mock.URL)
	if err != nil {
		t.Fatal(err)
	}
	h := &hostile{}
	h.srv = httptest.NewServer(&httputilProxy{target: target, modify: h.modify})
	t.Cleanup(h.srv.Close)
	return h
}

// aim sets what the next answers grow; op "" grows nothing.
func (h *hostile) aim(op, ptr string) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.op, h.ptr = op, ptr
}

func (h *hostile) modify(op string, body map[string]any) {
	h.mu.Lock()
	aimOp, ptr := h.op, h.ptr
	h.mu.Unlock()
	switch {
	case aimOp == "*":
		growAll(body)
	case aimOp == op:
		growAt(body, strings.Split(ptr, "/"))
	}
}

// growAll grows every string but the times, and gives every array 1,001
// items (the contract's largest is 1,000), growing only the first's strings.
func growAll(v any) {
	switch x := v.(type) {
	case map[string]any:
		for k, val := range x {
			if s, ok := val.(string); ok && !timeKeys[k] {
				x[k] = s + hostileFill
				continue
			}
			x[k] = grown(val)
		}
	case []any:
		for _, item := range x {
			growAll(item)
		}
	}
}

func grown(v any) any {
	items, ok := v.([]any)
	if !ok {
		growAll(v)
		return v
	}
	return padded(items, true)
}

// padded is items with 1,001 entries, copies of the first (or of a sale when
// there is none); with grow, the first's strings grown.
func padded(items []any, grow bool) []any {
	first := map[string]any{"transaction_id": "T-1", "timestamp": "2026-11-27T09:00:00+01:00", "units": json.Number("1")}
	if len(items) > 0 {
		if m, ok := items[0].(map[string]any); ok {
			first = m
		}
	}
	out := make([]any, 1001)
	for i := range out {
		c := map[string]any{}
		for k, v := range first {
			c[k] = v
		}
		out[i] = c
	}
	if grow {
		growAll(out[0])
	}
	return out
}

// growAt grows the string at path, or pads the array there; "0" is an
// array's first item.
func growAt(v any, path []string) {
	if len(path) == 0 {
		return
	}
	if items, ok := v.([]any); ok && path[0] == "0" && len(items) > 0 {
		growAt(items[0], path[1:])
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	if len(path) > 1 {
		growAt(obj[path[0]], path[1:])
		return
	}
	switch x := obj[path[0]].(type) {
	case string:
		obj[path[0]] = x + hostileFill
	case []any:
		obj[path[0]] = padded(x, false)
	}
}

// hostileBudget is each tool's answer budget: the fixtures' (TestAnswerSizes,
// the sweep's 12,000) plus ADR 0030's allowance per store for a degraded one
// (degradedAllowance in degrade_test.go, 300 bytes since the headline).
var hostileBudget = map[string]int{
	"stores": 700 + 2*300, "risk": 1850 + 300, "risk2": 3350 + 2*300, "sweep": sweepAnswerBudget,
	"sales": 1450 + 300, "preview": 1450 + 300, "raise": 900 + 300, "status": 520 + 300,
}

// hostileCall is one tool call of the test, by its budget's name; a raise
// confirms the order of raise (e2etest.Order's arguments).
func hostileCall(p *e2etest.Proc, name string, raise map[string]any) (string, map[string]any) {
	butter := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	calls := map[string]struct {
		tool string
		args map[string]any
	}{
		"stores":  {"korral_list_authorized_stores", map[string]any{}},
		"risk":    {"korral_check_stock_risk", butter},
		"risk2":   {"korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"47", "102"}}},
		"sweep":   {"korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"all"}}},
		"sales":   {"korral_list_recent_sales", butter},
		"preview": {"korral_raise_replenishment_order", e2etest.Order(24)},
		"status":  {"korral_get_order_status", map[string]any{"store_id": "47", "order_id": mockstorelink.OrderOpen}},
	}
	c, ok := calls[name]
	if name == "raise" {
		// A preview (which sends nothing), then its confirmation.
		preview := p.Call("korral_raise_replenishment_order", raise)
		c.tool, c.args, ok = "korral_raise_replenishment_order", map[string]any{"confirm": true, "idempotency_key": field(preview, "idempotency_key")}, true
		for k, v := range raise {
			c.args[k] = v
		}
	}
	if !ok {
		p.T.Fatalf("no call named %s", name)
	}
	text := answerText(p.T, p, c.tool, c.args)
	var env map[string]any
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		p.T.Fatalf("%s: %v", name, err)
	}
	return text, env
}

// TestHostileStoreLinkEverywhere: every string of every answer 100,000
// characters longer and every array 1,001 items long. Every tool answers
// within its budget with a contract error naming a field and a limit, and
// nothing StoreLink grew reaches an answer, a log line or the audit.
func TestHostileStoreLinkEverywhere(t *testing.T) {
	w := e2etest.NewWorld(t)
	h := newHostile(t, w)
	p := e2etest.StartServer(t, w.Env("UPSTREAM_BASE_URL="+h.srv.URL, "MASTER_DATA_TTL=0", "ALLOW_WRITES=true"))
	h.aim("*", "")
	for _, name := range []string{"stores", "risk", "risk2", "sweep", "sales", "preview", "status"} {
		start := time.Now()
		text, _ := hostileCall(p, name, nil)
		t.Logf("%s: %v", name, time.Since(start))
		t.Logf("%s: %d bytes (budget %d)", name, len(text), hostileBudget[name])
		if len(text) > hostileBudget[name] {
			t.Errorf("%s: %d bytes, over its budget of %d:\n%.3000s", name, len(text), hostileBudget[name], text)
		}
		// Each answer, or each store's, is a contract error naming a limit.
		if !strings.Contains(text, "UPSTREAM_CONTRACT_ERROR") || !strings.Contains(text, "characters, the contract") && !strings.Contains(text, "items, the contract") {
			t.Errorf("%s: no contract error naming a limit: %s", name, text)
		}
	}
	noHostileText(t, p, w)
}

// noHostileText checks that nothing the hostile StoreLink grew reached the
// answers, the log or the audit, and that every audit summary is bounded.
func noHostileText(t *testing.T, p *e2etest.Proc, w *e2etest.World) {
	t.Helper()
	if strings.Contains(p.Stdout.String(), hostileMark) {
		t.Errorf("an answer carries StoreLink's grown text")
	}
	if strings.Contains(p.Stderr.String(), hostileMark) {
		t.Errorf("a log line carries StoreLink's grown text")
	}
	rows := auditRows(t, w)
	if len(rows) == 0 {
		t.Fatal("no audit rows")
	}
	for _, r := range rows {
		s := fmt.Sprint(r["summary"])
		if strings.Contains(s, hostileMark) || utf8.RuneCountInString(s) > 4000 {
			t.Errorf("audit row of %v: a summary of %d characters: %.300s", r["tool"], utf8.RuneCountInString(s), s)
		}
	}
}

// hostileField is one place of one answer grown past its limit, the call
// that reads it, and how the field is named: a decision field is refused as a
// contract error naming it, a qualifier is unknown (ADR 0030).
type hostileField struct {
	op, ptr, call, field string
	qualifier            bool
}

var hostileFields = []hostileField{
	{mockstorelink.OpGetStore, "name", "stores", "store.name", true},
	{mockstorelink.OpGetStore, "timezone", "risk", "store.timezone", false},
	{mockstorelink.OpGetStore, "opening_hours/monday/opens", "risk", "store.opening_hours", true},
	{mockstorelink.OpGetStore, "store_id", "stores", "store.store_id", false},
	{mockstorelink.OpGetInventory, "sku", "risk", "inventory.sku", false},
	{mockstorelink.OpListPOSTransactions, "transactions", "sales", "pos.transactions", false},
	{mockstorelink.OpListPOSTransactions, "transactions/0/transaction_id", "risk", "pos.transactions.0.transaction_id", false},
	{mockstorelink.OpGetSKU, "name", "risk", "sku.name", true},
	{mockstorelink.OpGetSKU, "category", "preview", "sku.category", true},
	{mockstorelink.OpGetSKU, "unit", "risk", "sku.unit", true},
	{mockstorelink.OpGetSKU, "supplier_id", "sweep", "sku.supplier_id", false},
	{mockstorelink.OpGetSupplier, "name", "preview", "supplier.name", true},
	{mockstorelink.OpGetSupplier, "order_cutoff_local", "risk", "supplier.order_cutoff_local", true},
	{mockstorelink.OpGetReplenishmentOrder, "order_id", "status", "order.order_id", false},
	{mockstorelink.OpGetReplenishmentOrder, "reason", "status", "order.reason", true},
	{mockstorelink.OpCreateReplenishmentOrder, "reason", "raise", "order.reason", true},
	{mockstorelink.OpCreateReplenishmentOrder, "status", "raise", "order.status", false},
}

// TestHostileStoreLinkOneFieldAtATime grows one field of one answer at a
// time. The answer keeps its budget; a decision field is a contract error
// naming it and its limit, a qualifier is unknown and logged with its rule.
func TestHostileStoreLinkOneFieldAtATime(t *testing.T) {
	w := e2etest.NewWorld(t)
	h := newHostile(t, w)
	p := e2etest.StartServer(t, w.Env("UPSTREAM_BASE_URL="+h.srv.URL, "MASTER_DATA_TTL=0", "ALLOW_WRITES=true"))
	for i, f := range hostileFields {
		// Each order its own quantity, so none replays another.
		raise := e2etest.Order(24 + 12*i)
		h.aim(f.op, f.ptr)
		text, env := hostileCall(p, f.call, raise)
		h.aim("", "")
		what := f.op + " " + f.ptr
		if len(text) > hostileBudget[f.call] {
			t.Errorf("%s: %s answered %d bytes, over its budget of %d:\n%.3000s", what, f.call, len(text), hostileBudget[f.call], text)
		}
		if !f.qualifier {
			code := "UPSTREAM_CONTRACT_ERROR"
			if f.call == "raise" {
				// StoreLink took the order but its answer is unreadable.
				code = "WRITE_OUTCOME_UNKNOWN"
			}
			if !strings.Contains(text, code) || !strings.Contains(text, f.field+": 100") || !strings.Contains(text, "(rule schema.max_") {
				t.Errorf("%s: %s does not name %s past its limit as %s: %s", what, f.call, f.field, code, text)
			}
			continue
		}
		// The raise's answer lists no order qualifiers; the reason is not echoed.
		if e2etest.Code(env) != "" || f.call != "raise" && !strings.Contains(text, f.field+": ") {
			t.Errorf("%s: %s does not answer with %s unknown: %s", what, f.call, f.field, text)
		}
		logged := false
		for _, l := range p.LinesWhere("upstream.qualifier_unreadable") {
			logged = logged || strings.Contains(fmt.Sprint(l["fields"]), "(schema.max_length)")
		}
		if !logged {
			t.Errorf("%s: no upstream.qualifier_unreadable line names the limit", what)
		}
	}
	noHostileText(t, p, w)
}
