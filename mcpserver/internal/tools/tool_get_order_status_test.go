package tools

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

// TestGetOrderStatusDefinition holds the tool's definition to its snapshot,
// testdata/tools/korral_get_order_status.golden.json.
func TestGetOrderStatusDefinition(t *testing.T) {
	checkToolSnap(t, "korral_get_order_status")
}

func TestGetOrderStatus(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), nil)
	env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": "RO-47-000001", "store_id": "47"})
	data := env["data"].(map[string]any)
	if data["status"] != "shipped" || data["is_open"] != true || plain(data["product_name"].(string)) != "Madeta butter 250g" {
		t.Fatalf("got %v", env)
	}
	env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": "RO-47-000001", "store_id": "102"})
	if errCode(env) != "NOT_FOUND" {
		t.Fatalf("another store's order: %v", env)
	}
}

func foreignFake() *fakeUpstream {
	f := newFake()
	f.orders[foreignOrder] = domain.Order{ID: foreignOrder, StoreID: "47", SKU: "8847291", QuantityUnits: 12,
		Status: "acknowledged", SubmittedAt: testNow.Add(-3 * time.Hour), ExpectedArrival: testNow.Add(40 * time.Hour)}
	return f
}

// An order id of another shape than our spec's, unknown to the ledger, is
// asked of StoreLink; its 404 is reported as StoreLink's.
func TestOrderStatusAsksStoreLinkForAnotherIDShape(t *testing.T) {
	for _, writes := range []bool{false, true} {
		f := foreignFake()
		s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), func(o *Options) {
			if writes {
				o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: sharedLedger(t), UpstreamID: "up-1"}
			}
		})
		env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": foreignOrder, "store_id": "47"})
		data, _ := env["data"].(map[string]any)
		if data["order_id"] != foreignOrder || data["status"] != "acknowledged" || data["quantity_units"] != float64(12) {
			t.Fatalf("writes %v: %v", writes, env)
		}
		for _, id := range []string{"rpl_00000000", "x.y~z-1"} {
			before := f.callsFor("47")
			env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"})
			msg := errText(env)
			if errCode(env) != "NOT_FOUND" || !strings.Contains(msg, `StoreLink has no order "`+id+`" at store 47`) || strings.Contains(msg, "is known") {
				t.Errorf("writes %v, %s: %v", writes, id, env)
			}
			if f.callsFor("47") == before {
				t.Errorf("writes %v, %s: StoreLink was not asked", writes, id)
			}
		}
		// Several stores: store_id is still required, and nothing is sent.
		before := f.callsFor("47") + f.callsFor("102")
		env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": foreignOrder})
		if errCode(env) != "STORE_ID_REQUIRED" || f.callsFor("47")+f.callsFor("102") != before {
			t.Errorf("writes %v, no store_id: %v", writes, env)
		}
		env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": foreignOrder, "store_id": "55"})
		if errCode(env) != "STORE_NOT_AUTHORIZED" || f.callsFor("55") != 0 {
			t.Errorf("writes %v, store 55: %v", writes, env)
		}
	}
}

// An id that cannot be any StoreLink's order id is refused naming the
// accepted shape; the ledger's own ids still work.
func TestOrderStatusRefusesImplausibleIDs(t *testing.T) {
	db := sharedLedger(t)
	key := "agent:2026-11-27:butter-47"
	if _, _, err := db.Reserve(t.Context(), state.Entry{IdempotencyKey: key, StoreID: "47", SKU: "8847291", QuantityUnits: 24,
		Reason: "restock", State: state.StatePendingApproval, ApprovalID: "apr-00c0ffee", ApprovalExpiresAt: testNow.Add(time.Hour),
		CreatedAt: testNow, UpstreamID: "up-1"}); err != nil {
		t.Fatal(err)
	}
	for _, writes := range []bool{false, true} {
		f := foreignFake()
		s := connect(t, f, mustKeyring(t, `{"47":"a"}`), func(o *Options) {
			if writes {
				o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: db, UpstreamID: "up-1"}
			}
		})
		// id -> code: none of them is sent to StoreLink.
		bad := map[string]string{"_rpl": "INVALID_ARGUMENT", "rpl 9f": "INVALID_ARGUMENT", "rpl/9f": "INVALID_ARGUMENT",
			strings.Repeat("a", 65): "INVALID_ARGUMENT", "a:b": "INVALID_ARGUMENT"}
		if writes {
			bad = map[string]string{
				// Within the schema's pattern, yet neither a key nor an order id.
				"a:b": "INVALID_ARGUMENT", "a~b:c": "INVALID_ARGUMENT",
				// Well-formed idempotency keys the ledger does not hold.
				"agent:unknown:key": "NOT_FOUND", strings.Repeat("b", 100): "NOT_FOUND",
			}
		}
		for id, code := range bad {
			env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": id})
			if errCode(env) != code {
				t.Errorf("writes %v, %q: %v, want %s", writes, id, env, code)
			}
			if writes && !strings.Contains(errText(env), storeLinkOrderIDShape) {
				t.Errorf("writes %v, %q: the answer does not name a StoreLink order id's shape: %v", writes, id, env)
			}
		}
		if f.callsFor("47") != 0 {
			t.Errorf("writes %v: %d request(s) sent for ids that cannot be orders", writes, f.callsFor("47"))
		}
		if writes {
			// The ledger's own ids: an idempotency key with ':' and an approval id.
			for _, id := range []string{key, "apr-00c0ffee"} {
				env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": id})
				data, _ := env["data"].(map[string]any)
				ledger, _ := data["ledger"].(map[string]any)
				if ledger["idempotency_key"] != key || ledger["state"] != string(state.StatePendingApproval) {
					t.Errorf("%s is no longer found: %v", id, env)
				}
			}
			if f.callsFor("47") != 0 {
				t.Errorf("a pending order was asked of StoreLink")
			}
		}
	}
}

// The input schema's refusal names the shape too (read-only).
func TestOrderIDSchemaRefusalNamesTheShape(t *testing.T) {
	s := connect(t, newFake(), mustKeyring(t, `{"47":"a"}`), nil)
	env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": "rpl 9f"})
	if errCode(env) != "INVALID_ARGUMENT" || !strings.Contains(errText(env), "order_id") {
		t.Fatalf("got %v", env)
	}
}

// ledgerWorld is a server with writes on and a real ledger.
func ledgerWorld(t *testing.T, keyring string) (session, *sqlite.DB) {
	t.Helper()
	db := sharedLedger(t)
	s := connect(t, newFake(), mustKeyring(t, keyring), func(o *Options) {
		o.Writes = &WriteOptions{MaxOrderUnits: 500, AllowWrites: true, Ledger: db, UpstreamID: "http://storelink.test"}
	})
	return s, db
}

// TestOrderStatusOfEveryLedgerState asks for an order in every ledger
// state, by each of its ids, and checks each answer against the output
// schema and its content.
func TestOrderStatusOfEveryLedgerState(t *testing.T) {
	s, db := ledgerWorld(t, `{"47":"k1","102":"k2"}`)
	cases := []struct {
		key      string
		st       state.EntryState
		upstream string
		status   string
		open     bool
	}{
		{"raised-here-0001", state.StateRaised, "http://storelink.test", "shipped", true}, // StoreLink's status
		{"raised-away-0001", state.StateRaised, "http://storelink.elsewhere", "raised", true},
		{"sending-0001", state.StateSending, "http://storelink.test", "sending", true},
		{"unknown-0001", state.StateUnknown, "http://storelink.test", "unknown", true},
		{"failed-0001", state.StateFailed, "http://storelink.test", "failed", false},
		{"retryable-0001", state.StateRetryable, "http://storelink.test", "retryable", false},
		{"pending-0001", state.StatePendingApproval, "http://storelink.test", "pending_approval", true},
		{"rejected-0001", state.StateRejected, "http://storelink.test", "rejected", false},
		{"expired-0001", state.StateExpired, "http://storelink.test", "expired", false},
	}
	covered := map[state.EntryState]bool{}
	for i, c := range cases {
		// Only the first is the fake StoreLink's order RO-47-000001 (24 units).
		qty, orderID := int64(24), "RO-47-000001"
		if i > 0 {
			qty, orderID = int64(100+i), fmt.Sprintf("RO-47-%06d", 700+i)
		}
		e := putEntry(t, db, c.key, "47", qty, c.st, c.upstream, orderID)
		covered[c.st] = true
		refs := []string{c.key}
		if e.ApprovalID != "" {
			refs = append(refs, e.ApprovalID)
		}
		for _, ref := range refs {
			env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": ref, "store_id": "47"})
			d, _ := env["data"].(map[string]any)
			if d["status"] != c.status || d["is_open"] != c.open {
				t.Errorf("%s by %s: status %v open %v, want %s %v: %v", c.st, ref, d["status"], d["is_open"], c.status, c.open, env)
			}
		}
	}
	for _, st := range state.States() {
		if !covered[st] {
			t.Errorf("no case for ledger state %s", st)
		}
	}
}

// TestLedgerEntriesOfOtherStoresAreUnknown: with a ledger shared with store
// 55's deployment, its entries are unknown to the caller (47 and 102); an
// entry of the caller's stores is named with the store_id to pass.
func TestLedgerEntriesOfOtherStoresAreUnknown(t *testing.T) {
	s, db := ledgerWorld(t, `{"47":"k1","102":"k2"}`)
	foreign := putEntry(t, db, "store55:butter:0001", "55", 120, state.StatePendingApproval, "http://storelink.test", "")
	raised55 := putEntry(t, db, "store55.butter.0002", "55", 96, state.StateRaised, "http://storelink.test", "RO-55-000001")
	at102 := putEntry(t, db, "store102:butter:0001", "102", 48, state.StatePendingApproval, "http://storelink.test", "")
	answer := func(ref, store string) (code, text string) {
		t.Helper()
		env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": ref, "store_id": store})
		e, _ := env["error"].(map[string]any)
		return errCode(env), fmt.Sprint(e["message"], " | ", e["remediation"])
	}
	for _, c := range []struct{ what, ref, unknown string }{
		{"idempotency key", foreign.IdempotencyKey, "store99:butter:0001"},
		{"approval id", foreign.ApprovalID, "apr-store99:butter:0001"},
		{"order id", raised55.OrderID, "RO-55-999999"},
		{"key of a raised entry", raised55.IdempotencyKey, "store99.butter.0002"},
	} {
		for _, store := range []string{"47", "102"} {
			code, text := answer(c.ref, store)
			wantCode, wantText := answer(c.unknown, store)
			text, wantText = strings.ReplaceAll(text, c.ref, "ID"), strings.ReplaceAll(wantText, c.unknown, "ID")
			if code != wantCode || text != wantText {
				t.Errorf("store 55's %s at %s: %s %q; an unknown id: %s %q", c.what, store, code, text, wantCode, wantText)
			}
			for _, leak := range []string{"55", "120", "96", "8847291"} {
				if strings.Contains(strings.ReplaceAll(text, "ID", ""), leak) {
					t.Errorf("store 55's %s at %s reveals %q: %s", c.what, store, leak, text)
				}
			}
		}
	}
	code, text := answer(at102.ApprovalID, "47")
	if code != string(apperr.NotFound) || !strings.Contains(text, "store_id 102") {
		t.Errorf("the entry of store 102, asked at 47: %s %s", code, text)
	}
	env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": at102.ApprovalID, "store_id": "102"})
	if d, _ := env["data"].(map[string]any); d["status"] != "pending_approval" {
		t.Errorf("the entry of store 102 at 102: %v", env)
	}
}

// TestOrderStatusFindsTheStoreInTheLedger: with several stores and no
// store_id, an order the ledger holds for a store of the caller's is
// answered for that store; a wrong store_id is still named as wrong, and an
// order the ledger does not hold still needs store_id.
func TestOrderStatusFindsTheStoreInTheLedger(t *testing.T) {
	db := sharedLedger(t)
	putEntry(t, db, "agent:2026-11-27:butter-102", "102", 24, state.StatePendingApproval, "up-1", "")
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), func(o *Options) {
		o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: db, UpstreamID: "up-1"}
	})
	for _, id := range []string{"agent:2026-11-27:butter-102", "apr-agent:2026-11-27:butter-102"} {
		env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": id})
		data, _ := env["data"].(map[string]any)
		if data["store_id"] != "102" || data["quantity_units"] != float64(24) {
			t.Errorf("%s without store_id: %v", id, env)
		}
	}
	env, _ := callTool(t, s, "korral_get_order_status", map[string]any{"order_id": "agent:2026-11-27:butter-102", "store_id": "47"})
	if errCode(env) != "NOT_FOUND" || !strings.Contains(errText(env), "belongs to store 102, not 47") {
		t.Errorf("wrong store: %v", env)
	}
	env, _ = callTool(t, s, "korral_get_order_status", map[string]any{"order_id": "RO-47-000001"})
	if errCode(env) != "STORE_ID_REQUIRED" {
		t.Errorf("an order the ledger does not hold, without store_id: %v", env)
	}
	// A store outside the caller's scope is never found this way.
	narrow := connect(t, f, mustKeyring(t, `{"47":"a","9":"c"}`), func(o *Options) {
		o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: db, UpstreamID: "up-1"}
	})
	env, _ = callTool(t, narrow, "korral_get_order_status", map[string]any{"order_id": "agent:2026-11-27:butter-102"})
	if errCode(env) != "STORE_ID_REQUIRED" || strings.Contains(errText(env), "102") {
		t.Errorf("another deployment's store: %v", env)
	}
	if f.callsFor("102")+f.callsFor("47") != 0 {
		t.Errorf("a pending order was asked of StoreLink")
	}
}
