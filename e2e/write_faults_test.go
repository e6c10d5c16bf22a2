package e2e_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// The write path under faults. Every test ends with judge, which checks the
// mock holds exactly the orders the ledger says were raised.

// An entry whose order id another SKU's order shares upstream (from ledgers
// written before approvals were bound to their StoreLink) must not show that order.
func TestStatusNeverShowsAnotherOrderForALedgerEntry(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true"))
	raised := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	orderID, _ := raised["order_id"].(string)
	// An approval "raised" elsewhere under the same order id, for another SKU.
	now := time.Now().UTC().Format("2006-01-02T15:04:05.000000000Z07:00")
	execState(t, w.StatePath, `INSERT INTO entries (idempotency_key, store_id, sku, quantity_units, reason, request_hash, state, order_id,
		approval_id, approval_expires_at, decided_by, created_at, updated_at)
		VALUES ('phantom-key-0001', '47', ?, 24, 'promo', 'x', 'raised', ?, 'apr-phantom', ?, 'Jana', ?, ?)`,
		mockstorelink.SKUSteady, orderID, now, now, now)
	for _, ref := range []string{"phantom-key-0001", "apr-phantom"} {
		st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": ref, "store_id": "47"}))
		if st["sku"] != mockstorelink.SKUSteady || st["status"] != "raised" || st["expected_arrival"] != nil {
			t.Fatalf("status of %s shows another order: %v", ref, st)
		}
		if note := st["ledger"].(map[string]any)["note"].(string); !strings.Contains(note, "not the order") {
			t.Fatalf("status of %s: note %q", ref, note)
		}
	}
	// The real order is still shown as StoreLink has it.
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": raised["idempotency_key"], "store_id": "47"}))
	if st["sku"] != mockstorelink.SKUButter || st["status"] != "submitted" {
		t.Fatalf("status of the real order: %v", st)
	}
}

// A confirm stopped before reaching StoreLink is left retryable, not stored as a permanent failure.
func TestNothingSentLeavesTheRequestRetryable(t *testing.T) {
	for _, f := range nothingSentFaults {
		t.Run(f.name, func(t *testing.T) { f.check(t) })
	}
}

// nothingSentFault stops a confirm before StoreLink takes it; heal, if set, undoes it.
type nothingSentFault struct {
	name   string
	inject func(t *testing.T, w *e2etest.World, p *e2etest.Proc)
	code   string
	retry  bool // the error carries retry_after_seconds
	heal   func(t *testing.T, w *e2etest.World, p *e2etest.Proc)
}

var nothingSentFaults = []nothingSentFault{
	{
		name: "rate limited",
		inject: func(t *testing.T, w *e2etest.World, p *e2etest.Proc) {
			w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit, OperationID: mockstorelink.OpCreateReplenishmentOrder, RetryAfter: 7, Count: 1})
		},
		code: "RATE_LIMITED", retry: true,
	},
	{
		name: "key rotated",
		inject: func(t *testing.T, w *e2etest.World, p *e2etest.Proc) {
			w.Mock.Server.RotateKey("47")
		},
		code: "AUTH_KEY_INVALID",
		heal: func(t *testing.T, w *e2etest.World, p *e2etest.Proc) { w.WriteKeyring(t, w.Mock.Server.Keys()) },
	},
	{
		name: "connection refused",
		inject: func(t *testing.T, w *e2etest.World, p *e2etest.Proc) {
			// Close may report the pre-dialled connection it force-closes; either way the port is shut.
			_ = w.Mock.Close()
		},
		code: "UPSTREAM_UNAVAILABLE",
		heal: func(t *testing.T, w *e2etest.World, p *e2etest.Proc) {
			// StoreLink comes back at the same address, with its keys.
			addr := strings.TrimPrefix(w.Mock.URL, "http://")
			r, err := mockstorelink.StartOn(addr, mockstorelink.Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = r.Close() })
			w.Mock = r
			w.WriteKeyring(t, r.Server.DefaultKeyring())
			waitForBreaker(t, p) // the refused connection opened it
		},
	},
	{
		name: "breaker open",
		inject: func(t *testing.T, w *e2etest.World, p *e2etest.Proc) {
			w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, OperationID: mockstorelink.OpGetInventory, Status: 503, Count: 1})
			if c := e2etest.Code(p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})); c != "UPSTREAM_UNAVAILABLE" {
				t.Fatalf("risk check during the outage: %s", c)
			}
		},
		code: "UPSTREAM_UNAVAILABLE", retry: true,
		heal: func(t *testing.T, w *e2etest.World, p *e2etest.Proc) { waitForBreaker(t, p) },
	},
}

// check confirms through the fault (retryable), then after healing (raised).
func (f nothingSentFault) check(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true", "BREAKER_FAILURES=1", "BREAKER_COOLDOWN=1s"))
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))
	key := preview["idempotency_key"].(string)
	f.inject(t, w, p)
	failed := p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key))
	if e2etest.Code(failed) != f.code {
		t.Fatalf("confirm: %v", failed)
	}
	if ra, _ := failed["error"].(map[string]any)["retry_after_seconds"].(float64); f.retry != (ra > 0) {
		t.Fatalf("retry_after_seconds = %v: %v", ra, failed)
	}
	if e := onlyEntry(t, w); e.State != "retryable" {
		t.Fatalf("ledger after %s: %+v", f.name, e)
	}
	judge(t, w)
	if f.heal != nil {
		f.heal(t, w, p)
	}
	again := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))
	if again["mode"] != "preview" || again["idempotency_key"] != key || again["duplicate_warning"] != nil {
		t.Fatalf("preview after %s: %v", f.name, again)
	}
	raised := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key)))
	if raised["mode"] != "raised" || raised["order_id"] == nil {
		t.Fatalf("confirm after %s: %v", f.name, raised)
	}
	if e := onlyEntry(t, w); e.State != "raised" {
		t.Fatalf("ledger: %+v", e)
	}
	judge(t, w)
}

// waitForBreaker waits (bounded) until the breaker's own probe lets reads pass.
func waitForBreaker(t *testing.T, p *e2etest.Proc) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for e2etest.Code(p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})) != "" {
		if time.Now().After(deadline) {
			t.Fatal("the breaker never closed")
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// After WRITE_OUTCOME_UNKNOWN, no new or omitted key sends the order again,
// and a person resolves the outcome.
func TestOneRequestOneOrderWhateverTheKey(t *testing.T) {
	t.Run("no order at StoreLink", unknownOutcomeWithoutOrder)
	t.Run("order at StoreLink", unknownOutcomeWithOrder)
}

// unknownOutcomeWithoutOrder: StoreLink holds no order; no retry resends it;
// once a person says so, it is raised later.
func unknownOutcomeWithoutOrder(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=400ms")
	p := e2etest.StartServer(t, env)
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 10 * time.Second})
	first := p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "first-key-0001"))
	if e2etest.Code(first) != "WRITE_OUTCOME_UNKNOWN" || !strings.Contains(errMessage(first), "korral_get_order_status") {
		t.Fatalf("timeout: %v", first)
	}
	w.Mock.Server.ClearFaults()
	// Neither the same key nor another raises it again.
	if c := e2etest.Code(p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "first-key-0001"))); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("retry: %s", c)
	}
	if e := onlyEntry(t, w); e.State != "unknown" {
		t.Fatalf("ledger: %+v", e)
	}
	if st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": "first-key-0001", "store_id": "47"})); st["status"] != "unknown" {
		t.Fatalf("status of an unknown outcome: %v", st)
	}
	for _, args := range []map[string]any{
		e2etest.Order(24, "confirm", true, "idempotency_key", "second-key-0002"),
		e2etest.Order(24, "confirm", true),
		e2etest.Order(24, "confirm", true, "reason", "  PROJECTED to sell out before close; 22 sold in 24 h against 5 on hand.\u00a0"),
	} {
		env := p.Call("korral_raise_replenishment_order", args)
		if e2etest.Code(env) != "ORDER_IN_FLIGHT" || !strings.Contains(errMessage(env), "korral_get_order_status") || !strings.Contains(errMessage(env), "first-key-0001") {
			t.Fatalf("same order under another key: %v", env)
		}
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	judge(t, w)
	// A person checks StoreLink, finds nothing, and says so.
	if _, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "first-key-0001", "--approver", "Korral IT"); exit != 2 || !strings.Contains(stderr, "--not-raised") {
		t.Fatalf("resolve without a finding: exit %d: %s", exit, stderr)
	}
	out, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "first-key-0001", "--not-raised", "--approver", "Korral IT")
	if exit != 0 || !strings.Contains(out, "retryable") {
		t.Fatalf("resolve: exit %d\n%s\n%s", exit, out, stderr)
	}
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": "first-key-0001", "store_id": "47"}))
	if st["status"] != "retryable" || st["is_open"] != false {
		t.Fatalf("status after resolution: %v", st)
	}
	raised := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "second-key-0002")))
	if raised["mode"] != "raised" {
		t.Fatalf("confirm after resolution: %v", raised)
	}
	judge(t, w)
	trail, _, _ := e2etest.RunCLI(t, env, "audit")
	if !strings.Contains(trail, "Korral IT resolved first-key-0001") {
		t.Fatalf("audit trail lacks the resolution:\n%s", trail)
	}
}

// unknownOutcomeWithOrder: the person names the order, which is checked against StoreLink.
func unknownOutcomeWithOrder(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true")
	p := e2etest.StartServer(t, env)
	// StoreLink takes the order, then the answer is lost on the way back.
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultMalformedJSON, OperationID: mockstorelink.OpCreateReplenishmentOrder, Count: 1})
	if c := e2etest.Code(p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "lost-answer-0001"))); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("lost answer: %s", c)
	}
	if c := e2etest.Code(p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))); c != "ORDER_IN_FLIGHT" {
		t.Fatalf("same order again: %s", c)
	}
	orders := w.Mock.Server.Orders()
	held := orders[len(orders)-1]
	if held.SKU != mockstorelink.SKUButter || held.QuantityUnits != 24 {
		t.Fatalf("StoreLink's newest order: %+v", held)
	}
	// The person's finding is checked against StoreLink.
	if _, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "lost-answer-0001", "--raised", mockstorelink.OrderOpen, "--approver", "Korral IT"); exit == 0 || !strings.Contains(stderr, "not this entry") {
		t.Fatalf("resolve with another order: exit %d: %s", exit, stderr)
	}
	out, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "--approver", "Korral IT", "lost-answer-0001", "--raised", held.OrderID)
	if exit != 0 || !strings.Contains(out, "raised") {
		t.Fatalf("resolve: exit %d\n%s\n%s", exit, out, stderr)
	}
	judge(t, w)
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": "lost-answer-0001", "store_id": "47"}))
	if st["order_id"] != held.OrderID || st["status"] != "submitted" {
		t.Fatalf("status after resolution: %v", st)
	}
	// Resolved, it is an open order like any other: the preview warns.
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))
	if preview["duplicate_warning"] == nil || !strings.Contains(fmt.Sprint(preview["open_orders_same_sku"]), held.OrderID) {
		t.Fatalf("preview after the resolution: %v", preview)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	judge(t, w)
}

// An order below the supplier's minimum is refused at preview and at
// confirm, without reaching StoreLink or spending the key.
func TestPreviewRefusesWhatStoreLinkWouldRefuse(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true"))
	preview := data(t, p.Call("korral_raise_replenishment_order", water(24)))
	qc := preview["quantity_check"].(map[string]any)
	if qc["verdict"] != "refuse" || !strings.Contains(fmt.Sprint(qc["reasons"]), "minimum order of 48 units") {
		t.Fatalf("preview below the minimum: %v", qc)
	}
	key := preview["idempotency_key"].(string)
	// The verdict binds: the confirm is refused here, and nothing is kept.
	refused := p.Call("korral_raise_replenishment_order", water(24, "confirm", true, "idempotency_key", key))
	if e2etest.Code(refused) != "ORDER_QUANTITY_REFUSED" || !strings.Contains(errMessage(refused), "minimum order of 48 units") {
		t.Fatalf("confirm below the minimum: %v", refused)
	}
	if es := ledgerEntries(t, w.StatePath); len(es) != 0 {
		t.Fatalf("the refused confirm left ledger entries: %v", es)
	}
	again := data(t, p.Call("korral_raise_replenishment_order", water(24)))
	if again["mode"] != "preview" || again["quantity_check"].(map[string]any)["verdict"] != "refuse" {
		t.Fatalf("preview after the refusal: %v", again)
	}
	if replay := p.Call("korral_raise_replenishment_order", water(24, "confirm", true)); e2etest.Code(replay) != "ORDER_QUANTITY_REFUSED" {
		t.Fatalf("confirm again: %v", replay)
	}
	ok := data(t, p.Call("korral_raise_replenishment_order", water(48)))
	if strings.Contains(fmt.Sprint(ok["quantity_check"]), "minimum") {
		t.Fatalf("preview at the minimum: %v", ok["quantity_check"])
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs, want none", n)
	}
	judge(t, w)
}

// Blank-looking reasons are refused, and reason case does not make IDEMPOTENCY_KEY_REUSED.
func TestOneReasonNormalisation(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true"))
	for _, reason := range []string{"\u00a0\u00a0\u00a0", "\u200b\u200b", "\u3000", "sold\u200bout", "sold\u202eout", "---"} {
		env := p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "reason", reason))
		if e2etest.Code(env) != "INVALID_ARGUMENT" || !strings.Contains(errMessage(env), "reason") {
			t.Fatalf("reason %q: %v", reason, env)
		}
	}
	if n := w.Requests(isCreate); n != 0 || len(ledgerEntries(t, w.StatePath)) != 0 {
		t.Fatalf("%d POSTs, ledger %v", n, ledgerEntries(t, w.StatePath))
	}
	const reason = "Café promo: 22 sold in 24 h, 5 on hand."
	first := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "reason", reason)))
	key := first["idempotency_key"].(string)
	for _, same := range []string{
		strings.ToLower(reason),
		"  CAFE\u0301 PROMO:\u00a022 sold in 24 h,\t5 on hand. ",
	} {
		for _, args := range []map[string]any{
			e2etest.Order(24, "confirm", true, "reason", same),
			e2etest.Order(24, "confirm", true, "reason", same, "idempotency_key", key),
		} {
			again := data(t, p.Call("korral_raise_replenishment_order", args))
			if again["replayed"] != true || again["order_id"] != first["order_id"] || again["idempotency_key"] != key {
				t.Fatalf("reason %q: %v", same, again)
			}
		}
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	judge(t, w)
}

// The derived key names the store-local day: 23:30 and 00:30 in Prague are
// two days within one UTC day.
func TestDerivedKeyFollowsTheStoreLocalDate(t *testing.T) {
	keyAt := func(now string) string {
		dir := t.TempDir()
		p := e2etest.StartServer(t, []string{"STATE_DB_PATH=" + filepath.Join(dir, "state.db"), "HOME=" + dir, "STORELINK_MOCK_NOW=" + now})
		defer p.Stop()
		return data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))["idempotency_key"].(string)
	}
	evening := keyAt("2026-11-27T21:30:00Z") // 22:30 in Prague
	late := keyAt("2026-11-27T22:30:00Z")    // 23:30 in Prague, the same day
	night := keyAt("2026-11-27T23:30:00Z")   // 00:30 in Prague, the next day; the same UTC day
	if evening != late {
		t.Fatalf("two times of one Prague day give keys %s and %s", evening, late)
	}
	if late == night {
		t.Fatalf("23:30 and 00:30 in Prague share the key %s", late)
	}
}

// An order raised at one StoreLink is never looked up at another whose
// order numbers collide. The mocks are embedded, so this checks only what
// the status tool reads.
func TestOrdersOfAnotherStoreLinkAreNotLookedUp(t *testing.T) {
	dir := t.TempDir()
	env := []string{"STATE_DB_PATH=" + filepath.Join(dir, "state.db"), "HOME=" + dir, "ALLOW_WRITES=true"}
	p := e2etest.StartServer(t, env)
	first := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	p.Stop()

	p2 := e2etest.StartServer(t, env)
	second := data(t, p2.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "reason", "Second order, another StoreLink.")))
	if second["order_id"] != first["order_id"] {
		t.Fatalf("the two mocks numbered their orders %v and %v; the test needs them alike", first["order_id"], second["order_id"])
	}
	st := data(t, p2.Call("korral_get_order_status", map[string]any{"order_id": first["idempotency_key"], "store_id": "47"}))
	note, _ := st["ledger"].(map[string]any)["note"].(string)
	if st["status"] != "raised" || st["expected_arrival"] != nil || !strings.Contains(note, "another StoreLink") {
		t.Fatalf("status of an order raised at another StoreLink: %v", st)
	}
}
