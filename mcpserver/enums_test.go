package mcpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

func values[T ~string](vs []T) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = string(v)
	}
	return out
}

// enumsIn collects every enum of a schema (as JSON), by JSON pointer.
func enumsIn(v any, at string, out map[string][]string) {
	switch v := v.(type) {
	case map[string]any:
		if e, ok := v["enum"].([]any); ok {
			for _, x := range e {
				out[at] = append(out[at], fmt.Sprint(x))
			}
		}
		for k, x := range v {
			enumsIn(x, at+"/"+k, out)
		}
	case []any:
		for i, x := range v {
			enumsIn(x, fmt.Sprintf("%s/%d", at, i), out)
		}
	}
}

// TestEveryEnumIsItsSchema holds each closed set of the answers to the enum
// a host checks it with, in every configuration: every constant the code
// can emit is in the schema, the schema allows nothing else, and no enum of
// tools/list goes unchecked here.
func TestEveryEnumIsItsSchema(t *testing.T) {
	const (
		data    = "/properties/data/properties/"
		risk    = data + "stores/items/properties/risk/properties/"
		justify = data + "justification/properties/"
		errCode = "/$defs/error/properties/code"
	)
	if bad := slices.DeleteFunc(slices.Clone(storeErrorCodes), apperr.Code.Valid); len(bad) > 0 {
		t.Errorf("per-store error codes outside the taxonomy: %v", bad)
	}
	configs := map[string]*WriteOptions{
		"read-only":  nil,
		"writes off": {MaxOrderUnits: 500},
		"writes on":  {MaxOrderUnits: 500, AllowWrites: true},
		"approval":   {MaxOrderUnits: 500, AllowWrites: true, RequireApproval: true},
	}
	for name, w := range configs {
		t.Run(name, func(t *testing.T) {
			s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) { o.Writes = w })
			res, err := s.cs.ListTools(context.Background(), nil)
			if err != nil {
				t.Fatal(err)
			}
			status := values(orderStatuses())
			if w == nil {
				status = values(domain.OrderStatuses())
			}
			want := map[string]map[string][]string{
				"korral_list_authorized_stores": {errCode: values(storeErrorCodes)},
				"korral_list_recent_sales":      {},
				"korral_check_stock_risk": {
					errCode:             values(storeErrorCodes),
					risk + "confidence": values(projection.Confidences()),
					risk + "will_stockout_before_close_today": values(projection.Answers()),
					risk + "arrival_beats_stockout":           values(projection.Answers()),
					risk + "data_quality_flags/items":         values(projection.Flags()),
				},
				"korral_get_order_status": {data + "status": status},
			}
			if w != nil {
				want["korral_get_order_status"][data+"ledger/properties/state"] = values(state.States())
				want["korral_raise_replenishment_order"] = map[string][]string{
					data + "mode":         values(raiseModes()),
					data + "order_status": values(domain.OrderStatuses()),
					data + "quantity_check/properties/verdict":           values(verdicts()),
					data + "open_orders_same_sku/items/properties/state": values(openOrderStatuses()),
					justify + "confidence":                               values(projection.Confidences()),
					justify + "will_stockout_before_close_today":         values(projection.Answers()),
					justify + "data_quality_flags/items":                 values(projection.Flags()),
				}
			}
			if len(res.Tools) != len(want) {
				t.Fatalf("%d tools, want %d", len(res.Tools), len(want))
			}
			for _, tool := range res.Tools {
				b, _ := json.Marshal(tool.OutputSchema)
				var schema any
				if err := json.Unmarshal(b, &schema); err != nil {
					t.Fatal(err)
				}
				got := map[string][]string{}
				enumsIn(schema, "", got)
				wantTool, ok := want[tool.Name]
				if !ok {
					t.Errorf("%s: no closed sets are declared for it here", tool.Name)
					continue
				}
				for at, enum := range got {
					w, ok := wantTool[at]
					if !ok {
						t.Errorf("%s: enum at %s %v is held to no constant list here", tool.Name, at, enum)
						continue
					}
					sort.Strings(enum)
					w = slices.Clone(w)
					sort.Strings(w)
					if !slices.Equal(enum, slices.Compact(slices.Clone(enum))) {
						t.Errorf("%s: enum at %s repeats a value: %v", tool.Name, at, enum)
					}
					if !slices.Equal(enum, w) {
						t.Errorf("%s: enum at %s is %v, the constants the code emits are %v", tool.Name, at, enum, w)
					}
				}
				for at := range wantTool {
					if _, ok := got[at]; !ok {
						t.Errorf("%s: no enum at %s", tool.Name, at)
					}
				}
			}
		})
	}
}

// TestOrderStatusSetsAgree checks the sets the status union is made of: it
// holds every StoreLink status and every ledger state, what is open in it is
// what each part calls open, and the shared name "rejected" is closed on
// both sides.
func TestOrderStatusSetsAgree(t *testing.T) {
	all := orderStatuses()
	for _, s := range domain.OrderStatuses() {
		if !slices.Contains(all, storeLinkStatus(s)) || storeLinkStatus(s).open() != s.Open() {
			t.Errorf("StoreLink status %s: in the union %v, open %v", s, slices.Contains(all, storeLinkStatus(s)), storeLinkStatus(s).open())
		}
	}
	openLedger := map[state.EntryState]bool{state.StatePendingApproval: true, state.StateSending: true, state.StateUnknown: true, state.StateRaised: true}
	for _, s := range state.States() {
		if !slices.Contains(all, ledgerStatus(s)) || ledgerStatus(s).open() != openLedger[s] {
			t.Errorf("ledger state %s: in the union %v, open %v", s, slices.Contains(all, ledgerStatus(s)), ledgerStatus(s).open())
		}
	}
	if len(all) != len(domain.OrderStatuses())+len(state.States())-1 {
		t.Errorf("the union %v should share exactly one name (rejected)", all)
	}
	if storeLinkStatus(domain.OrderRejected) != ledgerStatus(state.StateRejected) || storeLinkStatus(domain.OrderRejected).open() {
		t.Error("rejected must be the one shared name, and closed")
	}
}

// ledgerWorld is a server with writes on and a real ledger.
func ledgerWorld(t *testing.T, keyring string) (session, *sqlite.DB) {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	s := connect(t, newFake(), mustKeyring(t, keyring), func(o *Options) {
		o.Writes = &WriteOptions{MaxOrderUnits: 500, AllowWrites: true, Ledger: db, UpstreamID: "http://storelink.test"}
	})
	return s, db
}

// putEntry records an entry of store for SKU 8847291 and moves it into st
// (raised as orderID). Callers give each key its own quantity, so no two
// entries are the same request.
func putEntry(t *testing.T, db *sqlite.DB, key, store string, qty int64, st state.EntryState, upstream, orderID string) state.Entry {
	t.Helper()
	ctx := context.Background()
	now := testNow.Add(-time.Hour)
	e := state.Entry{IdempotencyKey: key, StoreID: store, SKU: "8847291", QuantityUnits: qty, Reason: "test " + key,
		RequestHash: state.RequestHash(store, "8847291", qty, "test "+key), State: state.StateSending,
		UpstreamID: upstream, CreatedAt: now, UpdatedAt: now}
	staged := st == state.StatePendingApproval || st == state.StateRejected || st == state.StateExpired
	if staged {
		e.State, e.ApprovalID, e.ApprovalExpiresAt = state.StatePendingApproval, "apr-"+key, testNow.Add(time.Hour)
		if st == state.StateExpired {
			e.ApprovalExpiresAt = testNow.Add(-time.Minute)
		}
	}
	if _, created, err := db.Reserve(ctx, e); err != nil || !created {
		t.Fatalf("reserve %s: %v (created %v)", key, err, created)
	}
	var err error
	switch st {
	case state.StateRaised:
		_, err = db.Finish(ctx, key, st, orderID, "", "", now)
	case state.StateFailed, state.StateRetryable, state.StateUnknown:
		_, err = db.Finish(ctx, key, st, "", string(apperr.UpstreamRejected), "refused", now)
	case state.StateRejected:
		_, err = db.Reject(ctx, e.ApprovalID, "Jana", now)
	}
	if err != nil {
		t.Fatalf("%s to %s: %v", key, st, err)
	}
	got, _, _ := db.Get(ctx, key)
	return got
}

// TestOrderStatusOfEveryLedgerState asks for an order in every state the
// ledger has, by each of its ids, and checks each answer against the output
// schema (callTool validates it, as a host does) and against what it says.
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

// TestLedgerEntriesOfOtherStoresAreUnknown: a ledger shared with a
// deployment of store 55. Whatever id of its entries the caller (keyring 47
// and 102) passes, the answer is the answer about an id nobody knows; an
// entry of a store the caller holds is named, with the store_id to pass.
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
