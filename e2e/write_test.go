package e2e_test

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	_ "modernc.org/sqlite"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

func isCreate(r mockstorelink.RequestRecord) bool {
	return r.OperationID == mockstorelink.OpCreateReplenishmentOrder
}

func TestWritesRefusedByDefaultAndPreviewChangesNothing(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env())
	ordersBefore := len(w.Mock.Server.Orders())
	env := p.Call("korral_raise_replenishment_order", e2etest.Order(24))
	d := data(t, env)
	if d["mode"] != "preview" || d["writes_enabled"] != false || plainText(d["product_name"]) != "Madeta butter 250g" {
		t.Fatalf("preview: %v", d)
	}
	j := d["justification"].(map[string]any)
	if j["days_of_cover_after_delivery"] == nil || j["supplier_lead_time_days"] == nil || d["quantity_check"] == nil {
		t.Fatalf("preview lacks its justification: %v", d)
	}
	req := d["request"].(map[string]any)
	if req["path"] != "/v1/stores/47/replenishment" || req["body"].(map[string]any)["quantity_units"] != 24.0 {
		t.Fatalf("request: %v", req)
	}
	if c := e2etest.Code(p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))); c != "WRITES_DISABLED" {
		t.Fatalf("confirm without ALLOW_WRITES: %s", c)
	}
	if n := w.Requests(isCreate); n != 0 || len(w.Mock.Server.Orders()) != ordersBefore {
		t.Fatalf("%d POSTs, orders %d -> %d", n, ordersBefore, len(w.Mock.Server.Orders()))
	}
	if rows := ledgerRows(t, w.StatePath); len(rows) != 0 {
		t.Fatalf("ledger changed: %v", rows)
	}
	judge(t, w)
}

func TestCeilingHoldsWithConfirm(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true", "MAX_ORDER_UNITS=100"))
	// The input schema's maximum is the ceiling (issue 42): a confirm or a
	// preview above it is refused in words that name it.
	for _, args := range []map[string]any{e2etest.Order(120, "confirm", true), e2etest.Order(120)} {
		res := p.Call("korral_raise_replenishment_order", args)
		if c := e2etest.Code(res); c != "INVALID_ARGUMENT" || !strings.Contains(fmt.Sprint(res), "quantity_units must be at most 100 (got 120)") {
			t.Fatalf("%v: got %s: %v", args, c, res)
		}
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs", n)
	}
	judge(t, w)
}

func TestConfirmedOrderIdempotentAcrossRestartWithDuplicateWarning(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true")
	p := e2etest.StartServer(t, env)
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))
	key := preview["idempotency_key"].(string)
	if len(preview["open_orders_same_sku"].([]any)) != 0 {
		t.Fatalf("unexpected open orders: %v", preview)
	}
	raised := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key)))
	orderID, _ := raised["order_id"].(string)
	if raised["mode"] != "raised" || orderID == "" {
		t.Fatalf("raise: %v", raised)
	}
	status := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": orderID, "store_id": "47"}))
	if status["status"] != "submitted" || status["quantity_units"] != 24.0 || status["ledger"] == nil {
		t.Fatalf("status: %v", status)
	}
	again := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key)))
	if again["mode"] != "replay" || again["replayed"] != true || again["order_id"] != orderID {
		t.Fatalf("same key again: %v", again)
	}
	p.Stop()

	p2 := e2etest.StartServer(t, env)
	replay := data(t, p2.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key)))
	if replay["replayed"] != true || replay["order_id"] != orderID {
		t.Fatalf("same key after restart: %v", replay)
	}
	// A derived key is stable too: the same request on the same day is one order.
	derived := data(t, p2.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	if derived["idempotency_key"] != key || derived["replayed"] != true {
		t.Fatalf("derived key: %v", derived)
	}
	second := data(t, p2.Call("korral_raise_replenishment_order", e2etest.Order(36)))
	if second["duplicate_warning"] == nil || len(second["open_orders_same_sku"].([]any)) != 1 {
		t.Fatalf("no duplicate warning after restart: %v", second)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want exactly 1", n)
	}
	reused := p2.Call("korral_raise_replenishment_order", e2etest.Order(48, "confirm", true, "idempotency_key", key))
	if e2etest.Code(reused) != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatalf("key reused for another request: %v", reused)
	}
	judge(t, w)
}

// TestCrashAfterPostLeaves: after a crash mid-POST and a restart, a retry
// with the same key raises no second order.
func TestCrashAfterPostLeaves(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=30s")
	p := e2etest.StartServer(t, env)
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 20 * time.Second})
	go p.CallNoCheck("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "crash-test-key-01"))
	if !postsReached(w, 1, 10*time.Second) {
		t.Fatal("the POST never reached StoreLink")
	}
	p.Kill()
	w.Mock.Server.ClearFaults()

	p2 := e2etest.StartServer(t, env)
	if c := e2etest.Code(p2.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", "crash-test-key-01"))); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("retry after crash: %s", c)
	}
	// Nor may the same order under another key.
	if c := e2etest.Code(p2.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))); c != "ORDER_IN_FLIGHT" {
		t.Fatalf("same order under a derived key after crash: %s", c)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	judge(t, w)
}

func TestApprovalModeOnlyAPersonReleases(t *testing.T) {
	w := e2etest.NewWorld(t)
	const cred = "approver-credential-0123456789"
	// The server needs no approval secret; the approver is in its register.
	env := w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	registerApprover(t, env, "Jana Nováková", cred)
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	approvalID, _ := staged["approval_id"].(string)
	if staged["mode"] != "pending_approval" || approvalID == "" || strings.Contains(fmt.Sprint(staged), cred) {
		t.Fatalf("staged: %v", staged)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("staging sent %d POSTs", n)
	}
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": approvalID, "store_id": "47"}))
	if st["status"] != "pending_approval" {
		t.Fatalf("status while pending: %v", st)
	}

	list, _, exit := e2etest.RunCLI(t, env, "approvals", "list")
	if exit != 0 || !strings.Contains(list, approvalID) {
		t.Fatalf("list (exit %d): %s", exit, list)
	}
	// No secret, a wrong one, no --approver, or --as: nothing is released.
	if _, stderr, exit := e2etest.RunCLI(t, env, "approvals", "approve", "--approver", "Jana Nováková", approvalID); exit != 2 || !strings.Contains(stderr, "no secret for approver") {
		t.Fatalf("approve without a secret: exit %d %s", exit, stderr)
	}
	if _, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET=wrong-credential-0123456789"), "approvals", "approve", "--approver", "Jana Nováková", approvalID); exit != 1 || !strings.Contains(stderr, "approval denied") {
		t.Fatalf("approve with a wrong secret: exit %d %s", exit, stderr)
	}
	if _, _, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", approvalID); exit != 2 {
		t.Fatalf("approve without --approver: exit %d", exit)
	}
	if _, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", approvalID, "--as", "Jana Nováková"); exit != 2 || !strings.Contains(stderr, "--approver") || !strings.Contains(stderr, "approvers add") {
		t.Fatalf("approve with --as: exit %d %s", exit, stderr)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs before a valid approval", n)
	}
	// Lower case from a secret file; the ledger records the register's spelling.
	secretFile := filepath.Join(w.Dir, "jana.secret")
	if err := os.WriteFile(secretFile, []byte(cred+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A secret file others can read is refused, and nothing is sent.
	if err := os.Chmod(secretFile, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, exit := e2etest.RunCLI(t, env, "approvals", "approve", "--approver", "jana nováková", "--secret-file", secretFile, approvalID); exit != 2 || !strings.Contains(stderr, "chmod 600 "+secretFile) || w.Requests(isCreate) != 0 {
		t.Fatalf("approve with a secret file of mode 0644: exit %d %s", exit, stderr)
	}
	if err := os.Chmod(secretFile, 0o600); err != nil {
		t.Fatal(err)
	}
	out, stderr, exit := e2etest.RunCLI(t, env, "approvals", "approve", "--approver", "jana nováková", "--secret-file", secretFile, approvalID)
	if exit != 0 || !strings.Contains(out, "raised") {
		t.Fatalf("approve: exit %d\n%s\n%s", exit, out, stderr)
	}
	if _, _, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", "--approver", "Jana Nováková", approvalID); exit == 0 {
		t.Fatal("a second approval of the same order succeeded")
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want exactly 1", n)
	}
	st = data(t, p.Call("korral_get_order_status", map[string]any{"order_id": approvalID, "store_id": "47"}))
	if st["status"] != "submitted" || st["ledger"].(map[string]any)["decided_by"] != "Jana Nováková" {
		t.Fatalf("status after approval: %v", st)
	}
	trail, _, _ := e2etest.RunCLI(t, env, "audit")
	if !strings.Contains(trail, "approvals.approve") || !strings.Contains(trail, "Jana Nováková approved") || strings.Contains(trail+p.Stderr.String(), cred) {
		t.Fatalf("audit trail:\n%s", trail)
	}
	judge(t, w)
}

// A self-chosen credential approves nothing: the shared credential's
// variables stop every command at start-up, and an unregistered approver is
// denied.
func TestSelfChosenCredentialApprovesNothing(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	registerApprover(t, env, "Jana Nováková", "approver-credential-0123456789")
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id, _ := staged["approval_id"].(string)
	if staged["mode"] != "pending_approval" || id == "" {
		t.Fatalf("staged: %v", staged)
	}
	for _, old := range []string{"APPROVAL_CREDENTIAL", "APPROVER_CREDENTIAL"} {
		mine := append(slices.Clone(env), "APPROVAL_CREDENTIAL=x-credential-of-my-own", "APPROVER_CREDENTIAL=x-credential-of-my-own")
		for _, args := range [][]string{
			{"approvals", "approve", id, "--approver", "mallory", "--secret-stdin"},
			{"approvals", "list"},
			{"stdio"},
			{"serve", "--http", "127.0.0.1:0"},
			{"doctor"},
		} {
			stdout, stderr, exit := e2etest.RunCLIStdin(t, mine, "x-credential-of-my-own\n", args...)
			want := old + " is no longer used: approvers are named and verified by the server's own record; run `storelink-mcp approvers add NAME` for each approver, hand each their secret, and remove " + old + " from the environment"
			if args[0] == "doctor" {
				// doctor reports an unloadable configuration as a failed check (exit 1) on stdout.
				exit, stderr = exit+1, stdout
			}
			if exit != 2 || !strings.Contains(stderr, want) || strings.Contains(stderr, "x-credential-of-my-own") {
				t.Fatalf("%v with %s: exit %d\n%s", args, old, exit, stderr)
			}
		}
	}
	file := filepath.Join(w.Dir, "old.cred")
	if err := os.WriteFile(file, []byte("x-credential-of-my-own"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, stderr, exit := e2etest.RunCLI(t, append(slices.Clone(env), "APPROVAL_CREDENTIAL_FILE="+file), "approvals", "list"); exit != 2 || !strings.Contains(stderr, "APPROVAL_CREDENTIAL_FILE is no longer used") {
		t.Fatalf("APPROVAL_CREDENTIAL_FILE: exit %d\n%s", exit, stderr)
	}
	// An unregistered name, or a registered one with the wrong secret: exit 1.
	for _, who := range []string{"mallory", "Jana Nováková"} {
		_, stderr, exit := e2etest.RunCLI(t, append(slices.Clone(env), "APPROVER_SECRET=x-credential-of-my-own"), "approvals", "approve", id, "--approver", who)
		if exit != 1 || !strings.Contains(stderr, "approval denied: the approver name or secret is not recognised; nothing was changed") {
			t.Fatalf("approve as %s: exit %d\n%s", who, exit, stderr)
		}
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs, want none", n)
	}
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"}))
	if st["status"] != "pending_approval" {
		t.Fatalf("status: %v", st)
	}
	trail, _, _ := e2etest.RunCLI(t, env, "audit", "--tool", "approvals.approve")
	if strings.Count(trail, "APPROVAL_DENIED") != 2 {
		t.Fatalf("audit trail:\n%s", trail)
	}
	judge(t, w)
}
