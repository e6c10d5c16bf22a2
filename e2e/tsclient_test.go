package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi"
)

// The official TypeScript SDK client checks each structured result against
// the tool's output schema; every tool, ledger state and reachable error
// path must pass it.

// movableClock is the mock StoreLink's clock, moved forward so orders change
// status; the servers keep the real clock.
type movableClock struct{ offset atomic.Int64 }

func (c *movableClock) now() time.Time { return time.Now().Add(time.Duration(c.offset.Load())) }

func (c *movableClock) advance(d time.Duration) { c.offset.Add(int64(d)) }

// atServerTime runs fn with the clock at the real time, then restores it.
func (c *movableClock) atServerTime(fn func()) {
	was := c.offset.Swap(0)
	defer c.offset.Store(was)
	fn()
}

// TestEveryAnswerPassesTheTypeScriptClient: no answer, in any ledger state,
// StoreLink status or reachable error, is refused by the TypeScript client.
func TestEveryAnswerPassesTheTypeScriptClient(t *testing.T) {
	inst := findTSClient(t)
	j := &journal{statuses: map[string]bool{}}
	t.Cleanup(func() {
		t.Logf("every call and its answer as the TypeScript client got it:\n| host | call | tool | answer |\n|---|---|---|---|\n%s", strings.Join(j.rows, "\n"))
	})
	worlds := map[string]func(*testing.T, tsInstall, *journal){
		"main world": tsMainWorld, "order in flight": tsInFlight, "per-store errors": tsPerStoreErrors, "shared ledger": tsSharedLedger,
	}
	ran := 0
	for _, name := range []string{"main world", "order in flight", "per-store errors", "shared ledger"} {
		t.Run(name, func(t *testing.T) { ran++; worlds[name](t, inst, j) })
	}
	if ran < len(worlds) {
		return // -run chose some worlds only
	}
	// Every ledger state and every StoreLink status the mock shows was answered.
	for _, st := range []string{"pending_approval", "sending", "unknown", "raised", "failed", "retryable", "rejected", "expired",
		"submitted", "acknowledged", "shipped", "delivered"} {
		if !j.statuses[st] {
			t.Errorf("no status answer said %q; answered: %v", st, j.statuses)
		}
	}
}

// tsWorld is a mock StoreLink with a movable clock and a deployment's files.
func tsWorld(t *testing.T) (*e2etest.World, *movableClock) {
	t.Helper()
	clock := &movableClock{}
	return e2etest.NewWorld(t, e2etest.WithClock(clock.now)), clock
}

func risk(sku, store string) map[string]any { return map[string]any{"sku": sku, "store_id": store} }

func status(ref, store string) map[string]any {
	return map[string]any{"order_id": ref, "store_id": store}
}

// with is order's arguments for another SKU.
func with(sku string, qty int, extra ...any) map[string]any {
	args := e2etest.Order(qty, extra...)
	args["sku"] = sku
	return args
}

// tsMain is the main deployment: one mock, one state file, four modes' environments.
type tsMain struct {
	t                                *testing.T
	inst                             tsInstall
	j                                *journal
	w                                *e2etest.World
	clock                            *movableClock
	base, direct, approval, approver []string
	// key is the idempotency key of the order the direct host raised first.
	key string
}

func tsMainWorld(t *testing.T, inst tsInstall, j *journal) {
	w, clock := tsWorld(t)
	m := &tsMain{t: t, inst: inst, j: j, w: w, clock: clock}
	const cred = "approver-credential-0123456789"
	m.base = w.Env("UPSTREAM_TIMEOUT=1s", "MAX_ORDER_UNITS=200")
	m.direct = append(slices.Clone(m.base), "ALLOW_WRITES=true")
	m.approval = append(slices.Clone(m.direct), "WRITE_APPROVAL=required")
	m.approver = append(slices.Clone(m.approval), "APPROVER_SECRET="+cred)
	registerApprover(t, m.approval, "Jana Nováková", cred)

	m.readOnly()
	m.writesOff()
	d := m.writesOn()
	m.outcomes(d)
	a := m.approvals()
	m.statusesOverTime(d)
	d.stop()
	a.stop()
	judge(t, w)
}

// cli runs a command of the binary, which must succeed, and journals it.
func (m *tsMain) cli(env []string, args ...string) string {
	m.t.Helper()
	out, stderr, exit := e2etest.RunCLI(m.t, env, args...)
	if exit != 0 {
		m.t.Fatalf("storelink-mcp %s: exit %d\n%s\n%s", strings.Join(args, " "), exit, out, stderr)
	}
	m.j.add("| cli | %s | - | %s |", strings.Join(args, " "), strings.TrimSpace(out))
	return out
}

// readOnly: no write tool, StoreLink's statuses only.
func (m *tsMain) readOnly() {
	t, butter := m.t, mockstorelink.SKUButter
	ro := startTSHost(t, m.inst, m.j, "read-only", append(slices.Clone(m.base), "READ_ONLY=true"))
	checkStatusesAreTheContracts(t, ro)
	ro.call("stores", "korral_list_authorized_stores", map[string]any{}, "ok")
	ro.call("risk butter 47", "korral_check_stock_risk", risk(butter, "47"), "ok")
	ro.call("status of the open fixture order", "korral_get_order_status", status(mockstorelink.OrderOpen, "47"), "ok")
	ro.call("status of the rejected fixture order", "korral_get_order_status", status(mockstorelink.OrderRejected, "102"), "ok")
	ro.call("status of an unknown order", "korral_get_order_status", status("RO-47-999999", "47"), "NOT_FOUND")
	// An id that cannot be a StoreLink id (':') is refused naming the shape, never "unknown".
	ro.call("status of a malformed id", "korral_get_order_status", status("no.such:order", "47"), "INVALID_ARGUMENT")
	ro.stop()
}

// writesOff: reads, argument errors, upstream faults, previews.
func (m *tsMain) writesOff() {
	t, butter, steady, water := m.t, mockstorelink.SKUButter, mockstorelink.SKUSteady, mockstorelink.SKUMinimumOrder
	off := startTSHost(t, m.inst, m.j, "writes off", m.base)
	off.call("stores", "korral_list_authorized_stores", map[string]any{}, "ok")
	off.call("risk butter 47", "korral_check_stock_risk", risk(butter, "47"), "ok")
	off.call("risk butter 47+102", "korral_check_stock_risk", map[string]any{"sku": butter, "store_ids": []string{"47", "102"}}, "ok")
	off.call("risk butter 47+55 (55 not in the keyring)", "korral_check_stock_risk", map[string]any{"sku": butter, "store_ids": []string{"47", "55"}}, "ok")
	for _, sku := range []string{mockstorelink.SKUThinHistory, mockstorelink.SKUNoSales, mockstorelink.SKUBulkOrder,
		mockstorelink.SKUPhantomStockout, mockstorelink.SKUVolatile, mockstorelink.SKUInjection, steady, water} {
		off.call("risk "+sku+" 47", "korral_check_stock_risk", risk(sku, "47"), "ok")
	}
	off.call("sales butter 47", "korral_list_recent_sales", risk(butter, "47"), "ok")
	off.call("sales butter 102, limit 3", "korral_list_recent_sales", map[string]any{"sku": butter, "store_id": "102", "limit": 3}, "ok")
	off.call("risk at store 55", "korral_check_stock_risk", risk(butter, "55"), "STORE_NOT_AUTHORIZED")
	off.call("sales at store 55", "korral_list_recent_sales", risk(butter, "55"), "STORE_NOT_AUTHORIZED")
	off.call("status at store 55", "korral_get_order_status", status(mockstorelink.OrderOpen, "55"), "STORE_NOT_AUTHORIZED")
	off.call("risk without store_id", "korral_check_stock_risk", map[string]any{"sku": butter}, "STORE_ID_REQUIRED")
	off.call("risk of a malformed SKU", "korral_check_stock_risk", risk("abc", "47"), "INVALID_ARGUMENT")
	off.call("risk with an unknown argument", "korral_check_stock_risk", map[string]any{"sku": butter, "store_id": "47", "store": "47"}, "INVALID_ARGUMENT")
	off.call("risk with store_id and store_ids", "korral_check_stock_risk", map[string]any{"sku": butter, "store_id": "47", "store_ids": []string{"102"}}, "INVALID_ARGUMENT")
	off.call("sales since the future", "korral_list_recent_sales", map[string]any{"sku": butter, "store_id": "47", "since": time.Now().Add(time.Hour).Format(time.RFC3339)}, "INVALID_ARGUMENT")
	off.call("sales since 8 days back", "korral_list_recent_sales", map[string]any{"sku": butter, "store_id": "47", "since": time.Now().AddDate(0, 0, -8).Format(time.RFC3339)}, "INVALID_ARGUMENT")
	off.call("risk of an unknown SKU", "korral_check_stock_risk", risk("99999999", "47"), "NOT_FOUND")
	off.call("preview butter 24", "korral_raise_replenishment_order", e2etest.Order(24), "ok")
	off.call("preview above the ceiling", "korral_raise_replenishment_order", e2etest.Order(300), "INVALID_ARGUMENT")
	off.call("preview below the supplier minimum", "korral_raise_replenishment_order", with(water, 24), "ok")
	off.call("confirm with writes off", "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true), "WRITES_DISABLED")
	off.call("preview with an empty reason", "korral_raise_replenishment_order", e2etest.Order(24, "reason", "\u200b\u200b"), "INVALID_ARGUMENT")
	faults := []struct {
		label string
		fault mockstorelink.Fault
		want  string
	}{
		{"rate limited", mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit, RetryAfter: 3}, "RATE_LIMITED"},
		{"StoreLink failing", mockstorelink.Fault{Kind: mockstorelink.FaultStatus, Status: 503}, "UPSTREAM_UNAVAILABLE"},
		{"StoreLink hanging", mockstorelink.Fault{Kind: mockstorelink.FaultHang, Delay: 5 * time.Second}, "UPSTREAM_TIMEOUT"},
		{"malformed JSON", mockstorelink.Fault{Kind: mockstorelink.FaultMalformedJSON}, "UPSTREAM_CONTRACT_ERROR"},
		{"error in a 200", mockstorelink.Fault{Kind: mockstorelink.FaultErrorIn200}, "UPSTREAM_CONTRACT_ERROR"},
		{"field of the wrong type", mockstorelink.Fault{Kind: mockstorelink.FaultDriftWrongType}, "UPSTREAM_CONTRACT_ERROR"},
		{"undeclared status", mockstorelink.Fault{Kind: mockstorelink.FaultDriftUndeclaredStatus}, "UPSTREAM_CONTRACT_ERROR"},
	}
	for _, f := range faults {
		f.fault.OperationID, f.fault.Count = mockstorelink.OpGetInventory, 1
		m.w.Mock.Server.SetFaults(f.fault)
		off.call("risk, "+f.label, "korral_check_stock_risk", risk(butter, "47"), f.want)
		off.call("risk 47+102, "+f.label+" at 47", "korral_check_stock_risk", map[string]any{"sku": butter, "store_ids": []string{"47", "102"}}, "ok")
	}
	m.w.Mock.Server.ClearFaults()
	m.w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, Status: 503, OperationID: mockstorelink.OpGetReplenishmentOrder, Count: 1})
	off.call("status while StoreLink fails", "korral_get_order_status", status(mockstorelink.OrderOpen, "47"), "UPSTREAM_UNAVAILABLE")
	m.w.Mock.Server.ClearFaults()
	old := m.w.Mock.Server.Keys()["102"]
	m.w.Mock.Server.RotateKey("102")
	off.call("risk at 102 after its key rotated", "korral_check_stock_risk", risk(butter, "102"), "AUTH_KEY_INVALID")
	off.call("risk 47+102 after 102's key rotated", "korral_check_stock_risk", map[string]any{"sku": butter, "store_ids": []string{"47", "102"}}, "ok")
	m.w.Mock.Server.SetKey("102", old)
	off.stop()
}

// writesOn: writes on, sent at once; an order raised, replayed, looked up.
func (m *tsMain) writesOn() *tsHost {
	d := startTSHost(m.t, m.inst, m.j, "direct", m.direct)
	d.call("confirm above the ceiling", "korral_raise_replenishment_order", e2etest.Order(300, "confirm", true), "INVALID_ARGUMENT")
	preview := d.call("preview butter 24", "korral_raise_replenishment_order", e2etest.Order(24), "ok")
	m.key = field(preview, "idempotency_key")
	raised := d.call("confirm butter 24", "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", m.key), "ok")
	orderID := field(raised, "order_id")
	d.call("status by key (submitted)", "korral_get_order_status", status(m.key, "47"), "ok")
	d.call("status by order id", "korral_get_order_status", status(orderID, "47"), "ok")
	d.call("status by key at the other store", "korral_get_order_status", status(m.key, "102"), "NOT_FOUND")
	// The ledger names a known order's store (issue 42); an unknown one still needs store_id.
	d.call("status without store_id", "korral_get_order_status", map[string]any{"order_id": m.key}, "ok")
	d.call("unknown order without store_id", "korral_get_order_status", map[string]any{"order_id": "RO-47-999999"}, "STORE_ID_REQUIRED")
	d.call("replay of the confirm", "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", m.key), "ok")
	d.call("replay as a preview", "korral_raise_replenishment_order", e2etest.Order(24, "idempotency_key", m.key), "ok")
	d.call("key reused for another quantity", "korral_raise_replenishment_order", e2etest.Order(48, "confirm", true, "idempotency_key", m.key), "IDEMPOTENCY_KEY_REUSED")
	d.call("preview with a raised order open", "korral_raise_replenishment_order", e2etest.Order(36), "ok")
	return d
}

// outcomes walks failed, retryable, unknown then resolved, and raised at another StoreLink.
func (m *tsMain) outcomes(d *tsHost) {
	t, steady, water := m.t, mockstorelink.SKUSteady, mockstorelink.SKUMinimumOrder
	// A confirm below the supplier minimum is refused here, before StoreLink.
	d.call("confirm below the supplier minimum", "korral_raise_replenishment_order", with(water, 24, "confirm", true, "idempotency_key", "refused-water-0001"), "ORDER_QUANTITY_REFUSED")
	// failed: StoreLink refuses an order on a business rule of its own.
	m.w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, OperationID: mockstorelink.OpCreateReplenishmentOrder, Status: 422, Count: 1})
	d.call("confirm StoreLink refuses", "korral_raise_replenishment_order", with(water, 48, "confirm", true, "idempotency_key", "refused-water-0001"), "UPSTREAM_REJECTED")
	m.w.Mock.Server.SetFaults()
	d.call("status of the refused order (failed)", "korral_get_order_status", status("refused-water-0001", "47"), "ok")
	d.call("preview of the refused request", "korral_raise_replenishment_order", with(water, 48, "idempotency_key", "refused-water-0001"), "ok")
	d.call("confirm of the refused request again", "korral_raise_replenishment_order", with(water, 48, "confirm", true, "idempotency_key", "refused-water-0001"), "UPSTREAM_REJECTED")

	// retryable: StoreLink did not take it.
	m.w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit, OperationID: mockstorelink.OpCreateReplenishmentOrder, RetryAfter: 2, Count: 1})
	d.call("confirm while rate-limited", "korral_raise_replenishment_order", with(steady, 12, "confirm", true, "idempotency_key", "retry-steady-0001"), "RATE_LIMITED")
	d.call("status of the request not taken (retryable)", "korral_get_order_status", status("retry-steady-0001", "47"), "ok")
	d.call("preview of the retryable request", "korral_raise_replenishment_order", with(steady, 12, "idempotency_key", "retry-steady-0001"), "ok")

	// unknown: StoreLink took the order, and its answer was lost.
	m.w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultMalformedJSON, OperationID: mockstorelink.OpCreateReplenishmentOrder, Count: 1})
	d.call("confirm whose answer is lost", "korral_raise_replenishment_order", with(steady, 24, "confirm", true, "idempotency_key", "lost-steady-0001"), "WRITE_OUTCOME_UNKNOWN")
	d.call("status of the lost answer (unknown)", "korral_get_order_status", status("lost-steady-0001", "47"), "ok")
	d.call("confirm of the lost answer again", "korral_raise_replenishment_order", with(steady, 24, "confirm", true, "idempotency_key", "lost-steady-0001"), "WRITE_OUTCOME_UNKNOWN")
	d.call("same order under another key", "korral_raise_replenishment_order", with(steady, 24, "confirm", true), "ORDER_IN_FLIGHT")
	d.call("preview with an unknown outcome open", "korral_raise_replenishment_order", with(steady, 36), "ok")
	orders := m.w.Mock.Server.Orders()
	lost := orders[len(orders)-1]
	m.cli(m.direct, "approvals", "resolve", "lost-steady-0001", "--raised", lost.OrderID, "--approver", "Korral IT")
	d.call("status of the resolved order", "korral_get_order_status", status("lost-steady-0001", "47"), "ok")

	// raised at another StoreLink: the ledger alone answers.
	elsewhere := d.call("confirm butter 12", "korral_raise_replenishment_order", e2etest.Order(12, "confirm", true, "idempotency_key", "elsewhere-0001"), "ok")
	execState(t, m.w.StatePath, `UPDATE entries SET upstream_id = 'http://storelink.elsewhere.example' WHERE idempotency_key = 'elsewhere-0001'`)
	d.call("status of an order at another StoreLink (raised)", "korral_get_order_status", status("elsewhere-0001", "47"), "ok")
	d.call("status of it by order id", "korral_get_order_status", status(field(elsewhere, "order_id"), "47"), "ok")
	d.call("preview with it open", "korral_raise_replenishment_order", e2etest.Order(60), "ok")
}

// approvals: approval mode; staged, rejected, expired, approved.
func (m *tsMain) approvals() *tsHost {
	t, butter := m.t, mockstorelink.SKUButter
	a := startTSHost(t, m.inst, m.j, "approval", m.approval)
	staged := a.call("confirm butter 24 (staged)", "korral_raise_replenishment_order", with(butter, 24, "confirm", true, "idempotency_key", "staged-butter-0001"), "ok")
	approvalID := field(staged, "approval_id")
	a.call("status by approval id (pending_approval)", "korral_get_order_status", status(approvalID, "47"), "ok")
	a.call("status by key (pending_approval)", "korral_get_order_status", status("staged-butter-0001", "47"), "ok")
	a.call("replay of the staged confirm", "korral_raise_replenishment_order", with(butter, 24, "confirm", true, "idempotency_key", "staged-butter-0001"), "ok")
	a.call("preview with a staged order open", "korral_raise_replenishment_order", e2etest.Order(48), "ok")
	m.cli(m.approver, "approvals", "reject", approvalID, "--approver", "Jana Nováková", "--reason", "Store 47 has a delivery due")
	a.call("status of the rejected order (rejected)", "korral_get_order_status", status(approvalID, "47"), "ok")
	a.call("confirm of the rejected order again", "korral_raise_replenishment_order", with(butter, 24, "confirm", true, "idempotency_key", "staged-butter-0001"), "WRITES_DISABLED")

	lapsing := a.call("confirm butter 30 (staged)", "korral_raise_replenishment_order", with(butter, 30, "confirm", true, "idempotency_key", "lapsing-butter-0001"), "ok")
	execState(t, m.w.StatePath, `UPDATE entries SET approval_expires_at = ? WHERE idempotency_key = 'lapsing-butter-0001'`,
		time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000000000Z07:00"))
	a.call("status of the lapsed order (expired)", "korral_get_order_status", status(field(lapsing, "approval_id"), "47"), "ok")
	a.call("confirm of the lapsed order again", "korral_raise_replenishment_order", with(butter, 30, "confirm", true, "idempotency_key", "lapsing-butter-0001"), "WRITES_DISABLED")

	released := a.call("confirm butter 36 (staged)", "korral_raise_replenishment_order", with(butter, 36, "confirm", true, "idempotency_key", "released-butter-0001"), "ok")
	m.cli(m.approver, "approvals", "approve", field(released, "approval_id"), "--approver", "Jana Nováková")
	a.call("status of the approved order", "korral_get_order_status", status(field(released, "approval_id"), "47"), "ok")
	return a
}

// statusesOverTime: StoreLink's statuses as time passes at StoreLink.
func (m *tsMain) statusesOverTime(d *tsHost) {
	m.clock.advance(time.Hour)
	d.call("status an hour later (acknowledged)", "korral_get_order_status", status(m.key, "47"), "ok")
	m.clock.advance(36 * time.Hour)
	d.call("status a day and a half later", "korral_get_order_status", status(m.key, "47"), "ok")
	// StoreLink may not date stock after the server's clock
	// (inventory.counted_at), so the preview runs at the server's time.
	m.clock.atServerTime(func() {
		d.call("preview with orders on their way", "korral_raise_replenishment_order", e2etest.Order(72), "ok")
	})
	m.clock.advance(30 * 24 * time.Hour)
	d.call("status a month later (delivered)", "korral_get_order_status", status(m.key, "47"), "ok")
	d.call("status of the rejected fixture order", "korral_get_order_status", status(mockstorelink.OrderRejected, "102"), "ok")
	m.clock.atServerTime(func() {
		d.call("preview with everything delivered", "korral_raise_replenishment_order", e2etest.Order(84), "ok")
	})
}

// tsInFlight holds a confirmed order at StoreLink (sending), then stops StoreLink (unknown).
func tsInFlight(t *testing.T, inst tsInstall, j *journal) {
	w, _ := tsWorld(t)
	h := startTSHost(t, inst, j, "in flight", w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=30s"))
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: time.Minute})
	held := h.send("confirm held by StoreLink", "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "held-butter-0001"), "WRITE_OUTCOME_UNKNOWN")
	if !postsReached(w, 1, 20*time.Second) {
		t.Fatal("the POST never reached StoreLink")
	}
	h.call("status while the POST is held (sending)", "korral_get_order_status", status("held-butter-0001", "47"), "ok")
	h.call("preview while the POST is held", "korral_raise_replenishment_order", e2etest.Order(36), "ok")
	h.call("same key while the POST is held", "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "held-butter-0001"), "WRITE_OUTCOME_UNKNOWN")
	h.call("same order under another key", "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true), "ORDER_IN_FLIGHT")
	// StoreLink shuts down: the held POST is answered 503, the outcome unknown.
	_ = w.Mock.Close()
	held()
	h.call("status after StoreLink went away (unknown)", "korral_get_order_status", status("held-butter-0001", "47"), "ok")
	h.call("risk with StoreLink gone", "korral_check_stock_risk", risk(mockstorelink.SKUButter, "47"), "UPSTREAM_UNAVAILABLE")
	h.call("stores with StoreLink gone", "korral_list_authorized_stores", map[string]any{}, "ok")
	if e := onlyEntry(t, w); e.State != "unknown" {
		t.Errorf("ledger: %+v", e)
	}
	judge(t, w)
}

// tsPerStoreErrors: single stores' errors inside one successful answer.
func tsPerStoreErrors(t *testing.T, inst tsInstall, j *journal) {
	w, _ := tsWorld(t)
	keys := w.Mock.Server.Keys()
	// 12's key is stale and 999 is no store StoreLink knows.
	w.WriteKeyring(t, map[string]string{"47": keys["47"], "102": keys["102"], "131": keys["131"], "12": "stale-key-0000000000", "999": "no-such-store-key-00"})
	w.Mock.Server.SetFaults(
		mockstorelink.Fault{Kind: mockstorelink.FaultStatus, Status: 503, OperationID: mockstorelink.OpGetStore, StoreID: "102"},
		mockstorelink.Fault{Kind: mockstorelink.FaultMalformedJSON, OperationID: mockstorelink.OpGetStore, StoreID: "131"},
		mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit, RetryAfter: 4, OperationID: mockstorelink.OpGetInventory, StoreID: "131"},
	)
	h := startTSHost(t, inst, j, "per-store errors", w.Env("BREAKER_FAILURES=100"))
	stores := h.call("stores, three of them failing", "korral_list_authorized_stores", map[string]any{}, "ok")
	var codes []string
	if d, _ := stores["data"].(map[string]any); d != nil {
		for _, s := range d["stores"].([]any) {
			if e, _ := s.(map[string]any)["error"].(map[string]any); e != nil {
				codes = append(codes, e["code"].(string))
				// Hours not read: open or not is unknown, never false.
				if open, said := s.(map[string]any)["open_now"]; said {
					t.Errorf("store %v could not be read, yet open_now is %v", s.(map[string]any)["store_id"], open)
				}
			}
		}
	}
	slices.Sort(codes)
	if want := []string{"AUTH_KEY_INVALID", "AUTH_KEY_INVALID", "UPSTREAM_CONTRACT_ERROR", "UPSTREAM_UNAVAILABLE"}; !slices.Equal(codes, want) && stores != nil {
		t.Errorf("per-store error codes %v, want %v", codes, want)
	}
	h.call("risk at five stores, four failing", "korral_check_stock_risk",
		map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []string{"47", "12", "999", "131", "55"}}, "ok")
	h.call("risk of an unknown SKU at two stores", "korral_check_stock_risk",
		map[string]any{"sku": "99999999", "store_ids": []string{"47", "102"}}, "ok")
}

// tsSharedLedger: two deployments share a ledger; an id of the other
// deployment's store tells the caller nothing an unknown id does not.
func tsSharedLedger(t *testing.T, inst tsInstall, j *journal) {
	w, _ := tsWorld(t)
	const cred = "approver-credential-0123456789"
	keyring55 := filepath.Join(w.Dir, "keyring-55.json")
	b, _ := json.Marshal(map[string]string{"55": w.Mock.Server.Keys()["55"]})
	if err := os.WriteFile(keyring55, b, 0o600); err != nil {
		t.Fatal(err)
	}
	ours := w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	theirs := append(without(ours, "STORELINK_KEYRING_FILE"), "STORELINK_KEYRING_FILE="+keyring55)
	registerApprover(t, ours, "Jana Nováková", cred)

	h55 := startTSHost(t, inst, j, "store 55", theirs)
	at55 := func(qty int, extra ...any) map[string]any {
		args := e2etest.Order(qty, extra...)
		args["store_id"] = "55"
		return args
	}
	named := h55.call("stage 120 butter at 55 under a named key", "korral_raise_replenishment_order", at55(120, "confirm", true, "idempotency_key", "store55:butter:0001"), "ok")
	derived := h55.call("stage 96 butter at 55 under a derived key", "korral_raise_replenishment_order", at55(96, "confirm", true), "ok")
	h55.stop()
	out, stderr, exit := e2etest.RunCLI(t, append(theirs, "APPROVER_SECRET="+cred), "approvals", "approve", field(derived, "approval_id"), "--approver", "Jana Nováková")
	if exit != 0 {
		t.Fatalf("approve at 55: exit %d\n%s\n%s", exit, out, stderr)
	}
	var orderID55 string
	for _, e := range ledgerEntries(t, w.StatePath) {
		if e.Key == field(derived, "idempotency_key") {
			orderID55 = e.OrderID
		}
	}
	if !strings.HasPrefix(orderID55, "RO-55-") {
		t.Fatalf("store 55's order id %q", orderID55)
	}

	h := startTSHost(t, inst, j, "stores 47+102", ours)
	at102 := h.call("stage 24 butter at 102", "korral_raise_replenishment_order", with(mockstorelink.SKUButter, 24, "confirm", true, "store_id", "102"), "ok")
	foreign := []struct{ what, ref, unknown string }{
		{"store 55's named key", "store55:butter:0001", "store99:butter:0001"},
		{"store 55's approval id", field(named, "approval_id"), "apr-0000000000000000"},
		{"store 55's derived key", field(derived, "idempotency_key"), "auto-00000000000000000000000000000000"},
		{"store 55's order id", orderID55, "RO-55-999999"},
	}
	for _, f := range foreign {
		for _, store := range []string{"47", "102"} {
			got := h.call(f.what+" at "+store, "korral_get_order_status", status(f.ref, store), "NOT_FOUND")
			want := h.call("an unknown id like "+f.what+" at "+store, "korral_get_order_status", status(f.unknown, store), "NOT_FOUND")
			if got == nil || want == nil {
				continue
			}
			g := strings.ReplaceAll(errMessage(got), f.ref, "ID")
			u := strings.ReplaceAll(errMessage(want), f.unknown, "ID")
			if g != u {
				t.Errorf("%s at %s answers %q; an unknown id answers %q", f.what, store, g, u)
			}
			if text := fmt.Sprint(got); strings.Contains(text, "store 55") || strings.Contains(text, "120") || strings.Contains(text, "96 ") || strings.Contains(text, mockstorelink.SKUButter) {
				t.Errorf("%s at %s reveals the entry: %v", f.what, store, got)
			}
		}
		h.call(f.what+" without store_id", "korral_get_order_status", map[string]any{"order_id": f.ref}, "STORE_ID_REQUIRED")
	}
	// An entry of a store the caller holds may be named, with the fix.
	other := h.call("store 102's approval id at 47", "korral_get_order_status", status(field(at102, "approval_id"), "47"), "NOT_FOUND")
	if other != nil && !strings.Contains(errMessage(other), "store_id 102") {
		t.Errorf("the entry of store 102 at 47: %s", errMessage(other))
	}
	h.call("store 102's approval id at 102", "korral_get_order_status", status(field(at102, "approval_id"), "102"), "ok")
	judge(t, w)
}

// checkStatusesAreTheContracts: the status answer allows exactly the contract's order statuses.
func checkStatusesAreTheContracts(t *testing.T, h *tsHost) {
	t.Helper()
	spec, err := openapi.Load()
	if err != nil {
		t.Fatal(err)
	}
	var contract []string
	for _, v := range spec.Components.Schemas["OrderStatus"].Value.Enum {
		contract = append(contract, fmt.Sprint(v))
	}
	var allowed []string
	for _, tool := range h.tools {
		if tool["name"] != "korral_get_order_status" {
			continue
		}
		b, _ := json.Marshal(tool["outputSchema"])
		var s struct {
			Properties struct {
				Data struct {
					Properties struct {
						Status struct {
							Enum []string `json:"enum"`
						} `json:"status"`
					} `json:"properties"`
				} `json:"data"`
			} `json:"properties"`
		}
		_ = json.Unmarshal(b, &s)
		allowed = s.Properties.Data.Properties.Status.Enum
	}
	slices.Sort(contract)
	slices.Sort(allowed)
	if len(contract) == 0 || !slices.Equal(contract, allowed) {
		t.Errorf("the status answer allows %v; the contract's order statuses are %v", allowed, contract)
	}
}
