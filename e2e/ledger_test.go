package e2e_test

import (
	"database/sql"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// Reading and changing the SQLite ledger from a test, and judge.

// judge fails the test unless the mock's new orders are exactly the ledger's
// raised orders (id, store, SKU, units).
func judge(t *testing.T, w *e2etest.World) {
	t.Helper()
	judgeEntries(t, w, ledgerEntries(t, w.StatePath))
}

// judgeEntries is judge over the given ledger entries.
func judgeEntries(t *testing.T, w *e2etest.World, entries map[string]ledgerEntry) {
	t.Helper()
	var held, raised []string
	for _, o := range placed(w) {
		held = append(held, fmt.Sprintf("%s store=%s sku=%s units=%d", o.OrderID, o.StoreID, o.SKU, o.QuantityUnits))
	}
	for _, e := range entries {
		if e.State == "raised" {
			raised = append(raised, fmt.Sprintf("%s store=%s sku=%s units=%d", e.OrderID, e.StoreID, e.SKU, e.Units))
		}
	}
	slices.Sort(held)
	slices.Sort(raised)
	if !slices.Equal(held, raised) {
		t.Fatalf("StoreLink holds %v, the ledger says raised %v", held, raised)
	}
}

// placed is the orders StoreLink holds besides its fixtures.
func placed(w *e2etest.World) []mockstorelink.Order {
	var out []mockstorelink.Order
	for _, o := range w.Mock.Server.Orders() {
		if o.OrderID != mockstorelink.OrderOpen && o.OrderID != mockstorelink.OrderRejected {
			out = append(out, o)
		}
	}
	return out
}

type ledgerEntry struct {
	Key, State, OrderID, StoreID, SKU, ApprovalID, Upstream, ErrorMessage string
	Units                                                                 int64
}

// ledgerEntries reads every entry straight from the state file.
func ledgerEntries(t *testing.T, path string) map[string]ledgerEntry {
	t.Helper()
	out := map[string]ledgerEntry{}
	if _, err := os.Stat(path); err != nil {
		return out
	}
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT idempotency_key, state, COALESCE(order_id, ''), store_id, sku, quantity_units,
		COALESCE(approval_id, ''), upstream_id, error_message FROM entries`)
	if err != nil {
		if strings.Contains(err.Error(), "no such table") {
			return out
		}
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var e ledgerEntry
		if err := rows.Scan(&e.Key, &e.State, &e.OrderID, &e.StoreID, &e.SKU, &e.Units, &e.ApprovalID, &e.Upstream, &e.ErrorMessage); err != nil {
			t.Fatal(err)
		}
		out[e.Key] = e
	}
	return out
}

// ledgerRows is each entry's state by idempotency key, read from the state file.
func ledgerRows(t *testing.T, path string) map[string]string {
	t.Helper()
	out := map[string]string{}
	for k, e := range ledgerEntries(t, path) {
		out[k] = e.State
	}
	return out
}

func onlyEntry(t *testing.T, w *e2etest.World) ledgerEntry {
	t.Helper()
	es := ledgerEntries(t, w.StatePath)
	if len(es) != 1 {
		t.Fatalf("ledger holds %d entries, want 1: %v", len(es), es)
	}
	for _, e := range es {
		return e
	}
	panic("unreachable")
}

// execState changes the state file as time or an older version would have.
func execState(t *testing.T, path, query string, args ...any) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}

func errMessage(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	m, _ := e["message"].(string)
	r, _ := e["remediation"].(string)
	return m + " | " + r
}

// approvalWorld is a world in approval mode with approvers Jana and Jana Nováková, secret cred.
func approvalWorld(t *testing.T) (w *e2etest.World, env []string, cred string) {
	w = e2etest.NewWorld(t)
	cred = "approver-credential-0123456789"
	env = w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	registerApprover(t, env, "Jana", cred)
	registerApprover(t, env, "Jana Nováková", cred)
	return w, env, cred
}

// without drops the variables named from an environment.
func without(env []string, names ...string) []string {
	var out []string
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		if !slices.Contains(names, name) {
			out = append(out, kv)
		}
	}
	return out
}

// postsReached waits up to within for at least n order POSTs, and says whether they came.
func postsReached(w *e2etest.World, n int, within time.Duration) bool {
	for deadline := time.Now().Add(within); w.Requests(isCreate) < n; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			return false
		}
	}
	return true
}
