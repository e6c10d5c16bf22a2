package e2e_test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// water is an order of the SKU whose supplier has a minimum (48 units, cases of 6) at store 47.
func water(qty int, extra ...any) map[string]any {
	args := e2etest.Order(qty, extra...)
	args["sku"] = mockstorelink.SKUMinimumOrder
	return args
}

// An order the preview refuses (below the supplier's minimum) is not sent at
// confirm, and the key is not spent.
func TestQuantityGateBindsTheConfirm(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true"))
	preview := data(t, p.Call("korral_raise_replenishment_order", water(45)))
	if v := preview["quantity_check"].(map[string]any)["verdict"]; v != "refuse" {
		t.Fatalf("preview of 45 units: verdict %v", v)
	}
	key := preview["idempotency_key"].(string)

	refused := p.Call("korral_raise_replenishment_order", water(45, "confirm", true, "idempotency_key", key))
	msg := errMessage(refused)
	if e2etest.Code(refused) != "ORDER_QUANTITY_REFUSED" || !strings.Contains(msg, "below the supplier's minimum order of 48 units") ||
		!strings.Contains(msg, "48 units (8 cases of 6)") || !strings.Contains(msg, "not spent") {
		t.Fatalf("confirm below the minimum: %v", refused)
	}
	// Nothing left the process and nothing was kept.
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs for a refused quantity", n)
	}
	if n := len(w.Mock.Server.Orders()); n != 2 {
		t.Fatalf("StoreLink holds %d orders, want its 2 fixtures", n)
	}
	if es := ledgerEntries(t, w.StatePath); len(es) != 0 {
		t.Fatalf("the refused confirm left ledger entries: %v", es)
	}
	// No key was spent: the same key raises the corrected order.
	raised := data(t, p.Call("korral_raise_replenishment_order", water(48, "confirm", true, "idempotency_key", key)))
	if raised["mode"] != "raised" || raised["idempotency_key"] != key {
		t.Fatalf("corrected confirm under the same key: %v", raised)
	}
	if e := onlyEntry(t, w); e.Key != key || e.State != "raised" || e.Units != 48 {
		t.Fatalf("ledger after the corrected confirm: %+v", e)
	}
	judge(t, w)

	// A review verdict (not whole cases) is the buyer's to weigh: it still sends.
	odd := data(t, p.Call("korral_raise_replenishment_order", water(50, "reason", "Heatwave forecast for the weekend.")))
	qc := odd["quantity_check"].(map[string]any)
	if qc["verdict"] != "review" || !strings.Contains(fmt.Sprint(qc["reasons"]), "not a whole number of cases") {
		t.Fatalf("preview of 50 units: %v", qc)
	}
	sent := data(t, p.Call("korral_raise_replenishment_order", water(50, "confirm", true, "reason", "Heatwave forecast for the weekend.")))
	if sent["mode"] != "raised" {
		t.Fatalf("confirm with a review verdict: %v", sent)
	}
	if n := w.Requests(isCreate); n != 2 {
		t.Fatalf("%d POSTs, want 2", n)
	}
	judge(t, w)
}

// In approval mode a confirm below the minimum is not staged, and an approval
// rechecks a staged order before anything is claimed or sent.
func TestQuantityGateHoldsForApprovals(t *testing.T) {
	w, env, cred := approvalWorld(t)
	p := e2etest.StartServer(t, env)
	if c := e2etest.Code(p.Call("korral_raise_replenishment_order", water(45, "confirm", true))); c != "ORDER_QUANTITY_REFUSED" {
		t.Fatalf("staging below the minimum: %s", c)
	}
	if es := ledgerEntries(t, w.StatePath); len(es) != 0 {
		t.Fatalf("the refused confirm was staged: %v", es)
	}
	staged := data(t, p.Call("korral_raise_replenishment_order", water(48, "confirm", true)))
	id := staged["approval_id"].(string)
	execState(t, w.StatePath, `UPDATE entries SET quantity_units = 45 WHERE approval_id = ?`, id)
	_, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", id, "--approver", "Jana")
	if exit != 1 || !strings.Contains(stderr, "ORDER_QUANTITY_REFUSED") || !strings.Contains(stderr, "minimum order of 48 units") ||
		!strings.Contains(stderr, "the approval still stands") {
		t.Fatalf("approve below the minimum: exit %d: %s", exit, stderr)
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" {
		t.Fatalf("a refused approval changed the entry: %+v", e)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs", n)
	}
	if trail, _, _ := e2etest.RunCLI(t, env, "audit", "--tool", "approvals.approve"); !strings.Contains(trail, "ORDER_QUANTITY_REFUSED") {
		t.Fatalf("the refused approval is not in the audit trail:\n%s", trail)
	}
	judge(t, w)
}

// A caller scoped to stores 47 and 102 learns nothing about a store 55 entry
// from its idempotency key in a shared ledger.
func TestAnotherStoresEntryIsNeverDescribed(t *testing.T) {
	w := e2etest.NewWorld(t)
	// Another deployment, holding store 55's key, shares the state file.
	wide := filepath.Join(w.Dir, "keyring-55.json")
	b, _ := json.Marshal(map[string]string{"55": w.Mock.Server.Keys()["55"]})
	if err := os.WriteFile(wide, b, 0o600); err != nil {
		t.Fatal(err)
	}
	other := e2etest.StartServer(t, append(without(w.Env("ALLOW_WRITES=true"), "STORELINK_KEYRING_FILE"), "STORELINK_KEYRING_FILE="+wide))
	theirs := e2etest.Order(120, "sku", mockstorelink.SKUSteady, "store_id", "55", "confirm", true, "idempotency_key", "shared-key-0001")
	if d := data(t, other.Call("korral_raise_replenishment_order", theirs)); d["mode"] != "raised" {
		t.Fatalf("store 55's order: %v", d)
	}
	other.Stop()

	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true")) // stores 47 and 102
	posts := w.Requests(isCreate)
	leaks := func(what string, env map[string]any) {
		t.Helper()
		msg := errMessage(env)
		for _, secret := range []string{"55", mockstorelink.SKUSteady, "120", "Ostrava"} {
			if strings.Contains(msg, secret) {
				t.Errorf("%s reveals %q of another store's entry: %s", what, secret, msg)
			}
		}
	}
	// Key reuse, confirmed and previewed.
	for _, confirm := range []bool{true, false} {
		env := p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", confirm, "idempotency_key", "shared-key-0001"))
		if e2etest.Code(env) != "IDEMPOTENCY_KEY_REUSED" || !strings.Contains(errMessage(env), "shared-key-0001 is already used") {
			t.Fatalf("reused key (confirm %v): %v", confirm, env)
		}
		leaks(fmt.Sprintf("reused key (confirm %v)", confirm), env)
	}
	// Same request at our store with their key: reuse, and just as quiet.
	ours := e2etest.Order(120, "sku", mockstorelink.SKUSteady, "store_id", "47", "confirm", true, "idempotency_key", "shared-key-0001")
	env := p.Call("korral_raise_replenishment_order", ours)
	if e2etest.Code(env) != "IDEMPOTENCY_KEY_REUSED" {
		t.Fatalf("their request at our store under their key: %v", env)
	}
	leaks("their request at our store", env)
	// The duplicate warning counts our store's orders only.
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(120, "sku", mockstorelink.SKUSteady, "store_id", "47")))
	if preview["duplicate_warning"] != nil || len(preview["open_orders_same_sku"].([]any)) != 0 {
		t.Fatalf("store 47's preview lists another store's order: %v", preview["open_orders_same_sku"])
	}
	if n := w.Requests(isCreate); n != posts {
		t.Fatalf("%d POSTs from the scoped server", n-posts)
	}
	judge(t, w)
}

// A ledger may hold an order id twice; the duplicate warning counts it once.
func TestDuplicateWarningCountsAnOrderOnce(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true"))
	first := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "reason", "Second look at the shelf.")))
	execState(t, w.StatePath, `UPDATE entries SET order_id = ? WHERE order_id <> ?`, first["order_id"], first["order_id"])
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "reason", "Third look.")))
	if n := strings.Count(fmt.Sprint(preview["open_orders_same_sku"]), first["order_id"].(string)); n != 1 {
		t.Fatalf("order %s listed %d times: %v", first["order_id"], n, preview["open_orders_same_sku"])
	}
}
