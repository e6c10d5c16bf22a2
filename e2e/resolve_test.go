package e2e_test

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// `approvals resolve --raised` checks a person's finding against StoreLink
// and the ledger; a refusal names the fact that disagrees and changes nothing.

// entryRow reads every column of a ledger entry as text, to check a refusal changed nothing.
func entryRow(t *testing.T, path, key string) map[string]string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query(`SELECT * FROM entries WHERE idempotency_key = ?`, key)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	if !rows.Next() {
		t.Fatalf("no ledger entry %s", key)
	}
	vals := make([]sql.NullString, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	if err := rows.Scan(ptrs...); err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for i, c := range cols {
		out[c] = fmt.Sprintf("%v:%s", vals[i].Valid, vals[i].String)
	}
	return out
}

// sameRow fails unless the entry under key is still before.
func sameRow(t *testing.T, w *e2etest.World, key string, before map[string]string) {
	t.Helper()
	after := entryRow(t, w.StatePath, key)
	for c, v := range before {
		if after[c] != v {
			t.Errorf("the refused resolution changed %s of %s: %s -> %s", c, key, v, after[c])
		}
	}
}

// skewedWorld is newWorld with the mock's clock *behind the real one (changeable).
func skewedWorld(t *testing.T) (*e2etest.World, *atomic.Int64) {
	t.Helper()
	behind := &atomic.Int64{}
	w := e2etest.NewWorld(t, e2etest.WithClock(func() time.Time { return time.Now().Add(-time.Duration(behind.Load())) }))
	return w, behind
}

// raiseAtStoreLink raises an order directly at StoreLink, unseen by this deployment.
func raiseAtStoreLink(t *testing.T, w *e2etest.World, storeID, sku string, units int) string {
	t.Helper()
	body, _ := json.Marshal(map[string]any{"sku": sku, "quantity_units": units, "reason": "Raised by hand in StoreLink."})
	req, _ := http.NewRequest(http.MethodPost, w.Mock.URL+"/v1/stores/"+storeID+"/replenishment", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(mockstorelink.StoreKeyHeader, w.Mock.Server.DefaultKeyring()[storeID])
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var o struct {
		OrderID string `json:"order_id"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&o); err != nil || resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK || o.OrderID == "" {
		t.Fatalf("raise at StoreLink: %d, %v", resp.StatusCode, err)
	}
	return o.OrderID
}

// timedOut confirms args while StoreLink hangs: the outcome is unknown and no order exists.
func timedOut(t *testing.T, w *e2etest.World, p *e2etest.Proc, args map[string]any) {
	t.Helper()
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 10 * time.Second})
	defer w.Mock.Server.ClearFaults()
	if c := e2etest.Code(p.Call("korral_raise_replenishment_order", args)); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("confirm while StoreLink hangs: %s", c)
	}
}

// lostAnswer confirms args while StoreLink's answer is lost, and returns the order it holds.
func lostAnswer(t *testing.T, w *e2etest.World, p *e2etest.Proc, args map[string]any) mockstorelink.Order {
	t.Helper()
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultMalformedJSON, OperationID: mockstorelink.OpCreateReplenishmentOrder, Count: 1})
	defer w.Mock.Server.ClearFaults()
	if c := e2etest.Code(p.Call("korral_raise_replenishment_order", args)); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("confirm with a lost answer: %s", c)
	}
	orders := w.Mock.Server.Orders()
	return orders[len(orders)-1]
}

// An order raised 30 hours before the entry existed is refused, even with
// the entry's store, SKU and quantity.
func TestResolveRefusesAnOrderOlderThanItsEntry(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=400ms")
	p := e2etest.StartServer(t, env)
	// The fixture order: 48 units of SKUSteady at store 47, 30 h old.
	steady := e2etest.Order(48, "sku", mockstorelink.SKUSteady, "confirm", true, "idempotency_key", "steady-key-0001")
	timedOut(t, w, p, steady)
	before := entryRow(t, w.StatePath, "steady-key-0001")
	_, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "steady-key-0001", "--raised", mockstorelink.OrderOpen, "--approver", "Korral IT")
	if exit != 1 || !strings.Contains(stderr, "submitted at") || !strings.Contains(stderr, "before the entry was created") ||
		!strings.Contains(stderr, "nothing changed") {
		t.Fatalf("resolve with an order older than the entry: exit %d: %s", exit, stderr)
	}
	sameRow(t, w, "steady-key-0001", before)
	// The status tool does not take the old order for ours.
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": "steady-key-0001", "store_id": "47"}))
	if st["order_id"] == mockstorelink.OrderOpen {
		t.Fatalf("status shows the old order as the entry's: %v", st)
	}
	judge(t, w)
}

// Clock skew within the tolerance is accepted; beyond it, refused.
func TestResolveClockSkewTolerance(t *testing.T) {
	for _, tc := range []struct {
		behind time.Duration
		ok     bool
	}{{4 * time.Minute, true}, {6 * time.Minute, false}} {
		t.Run(fmt.Sprintf("StoreLink %s behind", tc.behind), func(t *testing.T) {
			w, behind := skewedWorld(t)
			env := w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=400ms")
			p := e2etest.StartServer(t, env)
			// Raised in StoreLink just before the agent's attempt, by StoreLink's clock.
			behind.Store(int64(tc.behind))
			handRaised := raiseAtStoreLink(t, w, "47", mockstorelink.SKUButter, 24)
			behind.Store(0)
			timedOut(t, w, p, e2etest.Order(24, "confirm", true, "idempotency_key", "skew-key-0001"))
			before := entryRow(t, w.StatePath, "skew-key-0001")
			out, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "skew-key-0001", "--raised", handRaised, "--approver", "Korral IT")
			if !tc.ok {
				if exit != 1 || !strings.Contains(stderr, "before the entry was created") || !strings.Contains(stderr, "5m0s") {
					t.Fatalf("resolve with an order %s older: exit %d: %s", tc.behind, exit, stderr)
				}
				sameRow(t, w, "skew-key-0001", before)
				return
			}
			if exit != 0 || !strings.Contains(out, "raised") {
				t.Fatalf("resolve within the tolerance: exit %d\n%s\n%s", exit, out, stderr)
			}
			judge(t, w)
		})
	}
}

// Two entries cannot be resolved to one order id.
func TestResolveRefusesAnOrderAnotherEntryHolds(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true")
	p := e2etest.StartServer(t, env)
	// Two requests with the same order and lost answers: StoreLink holds two orders.
	first := lostAnswer(t, w, p, e2etest.Order(24, "confirm", true, "idempotency_key", "twin-key-0001"))
	second := lostAnswer(t, w, p, e2etest.Order(24, "confirm", true, "idempotency_key", "twin-key-0002", "reason", "Weekend demand; second look at the shelf."))
	if first.OrderID == second.OrderID {
		t.Fatalf("StoreLink holds one order for two attempts: %v", first)
	}
	if out, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "twin-key-0001", "--raised", first.OrderID, "--approver", "Korral IT"); exit != 0 {
		t.Fatalf("resolve the first: exit %d\n%s\n%s", exit, out, stderr)
	}
	before := entryRow(t, w.StatePath, "twin-key-0002")
	_, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "twin-key-0002", "--raised", first.OrderID, "--approver", "Korral IT")
	if exit != 1 || !strings.Contains(stderr, "already recorded for another entry") || !strings.Contains(stderr, "twin-key-0001") ||
		!strings.Contains(stderr, "nothing changed") {
		t.Fatalf("resolve the second to the first's order: exit %d: %s", exit, stderr)
	}
	sameRow(t, w, "twin-key-0002", before)
	preview := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24)))
	if n := strings.Count(fmt.Sprint(preview["open_orders_same_sku"]), first.OrderID); n != 1 {
		t.Fatalf("the duplicate warning lists %s %d times: %v", first.OrderID, n, preview["open_orders_same_sku"])
	}
	// The right finding still goes through.
	if out, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "twin-key-0002", "--raised", second.OrderID, "--approver", "Korral IT"); exit != 0 {
		t.Fatalf("resolve the second to its own order: exit %d\n%s\n%s", exit, out, stderr)
	}
	judge(t, w)
}

// Each disagreeing fact is named: SKU, quantity, or another store's order.
func TestResolveNamesTheMismatch(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=400ms")
	p := e2etest.StartServer(t, env)
	timedOut(t, w, p, e2etest.Order(24, "confirm", true, "idempotency_key", "mismatch-key-0001"))
	before := entryRow(t, w.StatePath, "mismatch-key-0001")
	for _, tc := range []struct {
		name, orderID, want string
	}{
		{"quantity", raiseAtStoreLink(t, w, "47", mockstorelink.SKUButter, 30), "it is for 30 unit(s), the entry for 24"},
		{"SKU", raiseAtStoreLink(t, w, "47", mockstorelink.SKUSteady, 24), "its SKU is " + mockstorelink.SKUSteady + ", the entry's is " + mockstorelink.SKUButter},
		{"store", raiseAtStoreLink(t, w, "102", mockstorelink.SKUButter, 24), "NOT_FOUND"},
	} {
		_, stderr, exit := e2etest.RunCLI(t, env, "approvals", "resolve", "mismatch-key-0001", "--raised", tc.orderID, "--approver", "Korral IT")
		if exit != 1 || !strings.Contains(stderr, tc.want) || !strings.Contains(stderr, "nothing changed") {
			t.Errorf("resolve with an order of another %s: exit %d: %s", tc.name, exit, stderr)
		}
		sameRow(t, w, "mismatch-key-0001", before)
	}
}
