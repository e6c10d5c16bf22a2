package e2e_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// Approvals under faults: only the staged-for StoreLink, the write gate
// rechecked, expired once lapsed, pending if StoreLink did not take the
// order. Each ends with judge.

// An approval from a shell without UPSTREAM_BASE_URL never raises the order at an embedded mock.
func TestApprovalActsOnlyOnTheStoreLinkItWasStagedFor(t *testing.T) {
	w, env, cred := approvalWorld(t)
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id, _ := staged["approval_id"].(string)
	if e := onlyEntry(t, w); e.Upstream != w.Mock.URL {
		t.Fatalf("the entry names StoreLink %q, want %q", e.Upstream, w.Mock.URL)
	}
	approver := append(env, "APPROVER_SECRET="+cred)

	// No StoreLink and no keyring in the shell: nothing is started, sent or consumed.
	bare := without(approver, "UPSTREAM_BASE_URL", "STORELINK_KEYRING_FILE")
	_, stderr, exit := e2etest.RunCLI(t, bare, "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit == 0 || !strings.Contains(stderr, "no key for store 47") || !strings.Contains(stderr, "nothing changed") {
		t.Fatalf("approve without StoreLink or keyring: exit %d: %s", exit, stderr)
	}
	// Another StoreLink configured: refused, naming both.
	other, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	elsewhere := append(without(approver, "UPSTREAM_BASE_URL"), "UPSTREAM_BASE_URL="+other.URL)
	_, stderr, exit = e2etest.RunCLI(t, elsewhere, "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit == 0 || !strings.Contains(stderr, w.Mock.URL) || !strings.Contains(stderr, other.URL) {
		t.Fatalf("approve against another StoreLink: exit %d: %s", exit, stderr)
	}
	// A keyring without the order's store.
	partial := filepath.Join(w.Dir, "keyring-102.json")
	b, _ := json.Marshal(map[string]string{"102": w.Mock.Server.DefaultKeyring()["102"]})
	if err := os.WriteFile(partial, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, exit = e2etest.RunCLI(t, append(without(bare), "STORELINK_KEYRING_FILE="+partial), "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit == 0 || !strings.Contains(stderr, "the keyring holds no key for store 47") {
		t.Fatalf("approve with a keyring lacking store 47: exit %d: %s", exit, stderr)
	}
	// A stale key: StoreLink refuses it before anything is claimed.
	stale := filepath.Join(w.Dir, "keyring-stale.json")
	b, _ = json.Marshal(map[string]string{"47": "stale-key-0000000000"})
	if err := os.WriteFile(stale, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, exit = e2etest.RunCLI(t, append(without(bare), "STORELINK_KEYRING_FILE="+stale), "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit == 0 || !strings.Contains(stderr, "AUTH_KEY_INVALID") {
		t.Fatalf("approve with a stale key: exit %d: %s", exit, stderr)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs from refused approvals", n)
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" {
		t.Fatalf("a refused approval changed the entry: %+v", e)
	}
	judge(t, w)
	if trail, _, _ := e2etest.RunCLI(t, env, "audit", "--tool", "approvals.approve"); strings.Count(trail, "APPROVAL_NOT_SENT") != 4 {
		t.Fatalf("the refused approvals are not all in the audit trail:\n%s", trail)
	}

	// The approver needs only the keyring: the ledger names the StoreLink.
	out, stderr, exit := e2etest.RunCLI(t, without(approver, "UPSTREAM_BASE_URL"), "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit != 0 || !strings.Contains(out, "raised") {
		t.Fatalf("approve with the keyring only: exit %d\n%s\n%s", exit, out, stderr)
	}
	if n := len(other.Server.Orders()); n != 2 {
		t.Fatalf("the other StoreLink holds %d orders, want its 2 fixtures", n)
	}
	judge(t, w)
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"}))
	if st["sku"] != mockstorelink.SKUButter || st["quantity_units"] != 24.0 || st["status"] != "submitted" {
		t.Fatalf("status after approval: %v", st)
	}
}

// An order staged with the embedded mock is not raised at the approving shell's own embedded mock.
func TestApprovalOfAnEmbeddedStoreLinkOrderIsRefused(t *testing.T) {
	dir := t.TempDir()
	const cred = "approver-credential-0123456789"
	statePath := filepath.Join(dir, "state.db")
	env := []string{"STATE_DB_PATH=" + statePath, "HOME=" + dir, "ALLOW_WRITES=true", "WRITE_APPROVAL=required"}
	registerApprover(t, env, "Jana Nováková", cred)
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id, _ := staged["approval_id"].(string)
	_, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit == 0 || !strings.Contains(stderr, "embedded mock StoreLink inside one server process") {
		t.Fatalf("approve of an embedded-StoreLink order: exit %d: %s", exit, stderr)
	}
	for _, e := range ledgerEntries(t, statePath) {
		if e.State != "pending_approval" || e.OrderID != "" {
			t.Fatalf("a refused approval changed the entry: %+v", e)
		}
	}
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"}))
	if st["status"] != "pending_approval" {
		t.Fatalf("status: %v", st)
	}
}

// After APPROVAL_TTL a staged order reads as expired everywhere.
func TestLapsedApprovalsReadAsExpiredEverywhere(t *testing.T) {
	w, env, cred := approvalWorld(t)
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id, key := staged["approval_id"].(string), staged["idempotency_key"].(string)
	// Time passes: the approval's expiry is now behind us.
	execState(t, w.StatePath, `UPDATE entries SET approval_expires_at = ? WHERE approval_id = ?`,
		time.Now().Add(-time.Minute).UTC().Format("2006-01-02T15:04:05.000000000Z07:00"), id)

	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"}))
	if st["status"] != "expired" || st["is_open"] != false {
		t.Fatalf("status of a lapsed approval: %v", st)
	}
	replay := p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key))
	if e2etest.Code(replay) == "" || !strings.Contains(errMessage(replay), "lapsed") {
		t.Fatalf("confirm replay of a lapsed approval: %v", replay)
	}
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(36)))
	if preview["duplicate_warning"] != nil || len(preview["open_orders_same_sku"].([]any)) != 0 {
		t.Fatalf("a lapsed approval still warns of a duplicate: %v", preview)
	}
	if _, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", id, "--approver", "Jana Nováková"); exit == 0 || !strings.Contains(stderr, "expired") {
		t.Fatalf("approve of a lapsed approval: exit %d: %s", exit, stderr)
	}
	show, _, _ := e2etest.RunCLI(t, env, "approvals", "show", id)
	if !strings.Contains(show, `"state":"expired"`) {
		t.Fatalf("show: %s", show)
	}
	list, _, _ := e2etest.RunCLI(t, env, "approvals", "list")
	if strings.Contains(list, id) {
		t.Fatalf("list shows a lapsed approval:\n%s", list)
	}
	all, _, exit := e2etest.RunCLI(t, env, "approvals", "list", "--all")
	if exit != 0 || !strings.Contains(all, id) || !strings.Contains(all, "expired") {
		t.Fatalf("list --all (exit %d):\n%s", exit, all)
	}
	if e := onlyEntry(t, w); e.State != "expired" {
		t.Fatalf("ledger after list: %+v", e)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs", n)
	}
	judge(t, w)
}

// The approval command rechecks the ceiling and the keyring, and an empty
// configured credential never matches.
func TestApprovalRechecksTheGate(t *testing.T) {
	w, env, cred := approvalWorld(t)
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(120, "confirm", true)))
	id := staged["approval_id"].(string)
	approver := append(env, "APPROVER_SECRET="+cred)

	if _, stderr, exit := e2etest.RunCLI(t, append(approver, "MAX_ORDER_UNITS=100"), "approvals", "approve", "--approver", "Jana", id); exit == 0 || !strings.Contains(stderr, "MAX_ORDER_UNITS=100") {
		t.Fatalf("approve above a lowered ceiling: exit %d: %s", exit, stderr)
	}
	only102 := filepath.Join(w.Dir, "only-102.json")
	b, _ := json.Marshal(map[string]string{"102": w.Mock.Server.DefaultKeyring()["102"]})
	if err := os.WriteFile(only102, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, exit := e2etest.RunCLI(t, append(without(approver, "STORELINK_KEYRING_FILE"), "STORELINK_KEYRING_FILE="+only102), "approvals", "approve", id, "--approver", "Jana"); exit == 0 || !strings.Contains(stderr, "the keyring holds no key for store 47") {
		t.Fatalf("approve without store 47's key: exit %d: %s", exit, stderr)
	}
	// A decision needs a registered approver and their secret, whatever WRITE_APPROVAL says.
	modeOff := append(without(env, "WRITE_APPROVAL"), "APPROVER_SECRET="+cred)
	if _, stderr, exit := e2etest.RunCLI(t, modeOff, "approvals", "approve", id, "--approver", "Mallory"); exit != 1 || !strings.Contains(stderr, "approval denied") {
		t.Fatalf("approve by an unregistered name: exit %d: %s", exit, stderr)
	}
	if _, stderr, exit := e2etest.RunCLI(t, append(without(env, "WRITE_APPROVAL"), "APPROVER_SECRET="), "approvals", "reject", id, "--approver", "Jana", "--reason", "not needed"); exit != 2 || !strings.Contains(stderr, "no secret for approver Jana") {
		t.Fatalf("reject without a secret: exit %d: %s", exit, stderr)
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" {
		t.Fatalf("a refused approval changed the entry: %+v", e)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs", n)
	}
	// A rejection needs its reason, which the audit trail then keeps.
	if _, stderr, exit := e2etest.RunCLI(t, approver, "approvals", "reject", id, "--approver", "Jana"); exit != 2 || !strings.Contains(stderr, "--reason is required") {
		t.Fatalf("reject without a reason: exit %d: %s", exit, stderr)
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" {
		t.Fatalf("a reject without a reason changed the entry: %+v", e)
	}
	// Flags after the id, as ADR 0007 writes the command.
	if out, stderr, exit := e2etest.RunCLI(t, approver, "approvals", "reject", id, "--approver", "Jana", "--reason", "Brno has a delivery due on Monday"); exit != 0 || !strings.Contains(out, "rejected") {
		t.Fatalf("reject ID --approver NAME --reason R: exit %d %s %s", exit, out, stderr)
	}
	if out, _, exit := e2etest.RunCLI(t, env, "audit", "--tool", "approvals.reject_reason", "--format", "json"); exit != 0 || !strings.Contains(out, "Brno has a delivery due on Monday") {
		t.Fatalf("the audit trail does not keep the rejection's reason: exit %d\n%s", exit, out)
	}
	judge(t, w)
}

// An approved order StoreLink did not take still stands and can be approved again.
func TestApprovedOrderNotTakenStaysPending(t *testing.T) {
	w, env, cred := approvalWorld(t)
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id := staged["approval_id"].(string)
	approver := append(env, "APPROVER_SECRET="+cred)
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultRateLimit, OperationID: mockstorelink.OpCreateReplenishmentOrder, RetryAfter: 5, Count: 1})
	if _, stderr, exit := e2etest.RunCLI(t, approver, "approvals", "approve", id, "--approver", "Jana"); exit == 0 || !strings.Contains(stderr, "RATE_LIMITED") || !strings.Contains(stderr, "still stands") {
		t.Fatalf("approve while rate-limited: exit %d: %s", exit, stderr)
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" {
		t.Fatalf("ledger: %+v", e)
	}
	judge(t, w)
	if out, stderr, exit := e2etest.RunCLI(t, approver, "approvals", "approve", id, "--approver", "Jana"); exit != 0 || !strings.Contains(out, "raised") {
		t.Fatalf("approve again: exit %d %s %s", exit, out, stderr)
	}
	judge(t, w)
}
