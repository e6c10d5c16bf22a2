package tools

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// TestRaiseReplenishmentOrderDefinition holds the tool's definition to its snapshot,
// testdata/tools/korral_raise_replenishment_order.golden.json.
func TestRaiseReplenishmentOrderDefinition(t *testing.T) {
	checkToolSnap(t, "korral_raise_replenishment_order")
}

// TestRaiseDescriptionSaysWhatConfirmDoesHere: what confirm does depends
// on the deployment.
func TestRaiseDescriptionSaysWhatConfirmDoesHere(t *testing.T) {
	for w, want := range map[WriteOptions]string{
		{MaxOrderUnits: 500}:                                                "confirm is refused",
		{MaxOrderUnits: 500, AllowWrites: true}:                             "confirm sends at once",
		{MaxOrderUnits: 500, AllowWrites: true, RequireApproval: true}:      "only stages the order; a person releases it",
		{MaxOrderUnits: 500, AllowWrites: true, HostConsent: testSealer(t)}: "asks the user, via the host, to type the quantity before sending: a person saw it, not who",
	} {
		s := connect(t, newFake(), mustKeyring(t, `{"47":"k1"}`), func(o *Options) { o.Writes = &w })
		res, err := s.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tool := range res.Tools {
			if tool.Name != "korral_raise_replenishment_order" {
				continue
			}
			if !strings.Contains(tool.Description, "not a person's approval") || !strings.Contains(tool.Description, want) {
				t.Errorf("%+v: description %q lacks %q", w, tool.Description, want)
			}
			max := tool.InputSchema.(map[string]any)["properties"].(map[string]any)["quantity_units"].(map[string]any)["maximum"]
			if max != float64(500) {
				t.Errorf("%+v: quantity_units maximum %v, want the ceiling 500", w, max)
			}
		}
	}
}

// blockedLedger is a shared ledger in which every new send is refused as in
// flight behind blocker.
type blockedLedger struct {
	state.Ledger
	blocker state.Entry
}

func (l blockedLedger) Reserve(context.Context, state.Entry) (state.Entry, bool, error) {
	return state.Entry{}, false, &state.InFlightError{Entry: l.blocker}
}

// The in-flight refusal names the blocking entry only when its store is in
// the caller's keyring.
func TestInFlightNamesOnlyEntriesInScope(t *testing.T) {
	for _, tc := range []struct {
		store string
		named bool
	}{{"55", false}, {"102", true}} {
		blocker := state.Entry{IdempotencyKey: "their-key-0001", StoreID: tc.store, SKU: "8800101", QuantityUnits: 120, State: state.StateUnknown}
		led := blockedLedger{Ledger: sharedLedger(t), blocker: blocker}
		s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) {
			o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: led, UpstreamID: "up-1"}
		})
		env, _ := callTool(t, s, "korral_raise_replenishment_order", map[string]any{"sku": "8847291", "store_id": "47", "quantity_units": 24,
			"reason": "Butter low before the weekend", "confirm": true, "idempotency_key": "our-key-0001"})
		text := errText(env)
		if errCode(env) != "ORDER_IN_FLIGHT" {
			t.Fatalf("blocker at store %s: %v", tc.store, env)
		}
		for _, detail := range []string{"store " + tc.store, "8800101", "120", "their-key-0001"} {
			if strings.Contains(text, detail) != tc.named {
				t.Errorf("blocker at store %s: naming %q is %v, want %v: %s", tc.store, detail, !tc.named, tc.named, text)
			}
		}
	}
}

// A key naming another store's entry in a shared ledger is "already used",
// whatever the call: no store, SKU, quantity or reason of that entry.
func TestReusedKeyOfAnotherStoreSaysNothingOfIt(t *testing.T) {
	db := sharedLedger(t)
	if _, _, err := db.Reserve(context.Background(), state.Entry{IdempotencyKey: "shared-key-0001", StoreID: "55", SKU: "8800101", QuantityUnits: 120,
		Reason: "Ostrava promotion", State: state.StateSending, CreatedAt: testNow}); err != nil {
		t.Fatal(err)
	}
	for _, approval := range []bool{false, true} {
		s := connect(t, newFake(), mustKeyring(t, `{"47":"k1","102":"k2"}`), func(o *Options) {
			o.Writes = &WriteOptions{AllowWrites: true, RequireApproval: approval, ApprovalTTL: time.Hour, MaxOrderUnits: 500, Ledger: db, UpstreamID: "up-1"}
		})
		for _, confirm := range []bool{false, true} {
			env, _ := callTool(t, s, "korral_raise_replenishment_order", map[string]any{"sku": "8847291", "store_id": "47", "quantity_units": 24,
				"reason": "Butter low before the weekend", "confirm": confirm, "idempotency_key": "shared-key-0001"})
			text := errText(env)
			if errCode(env) != "IDEMPOTENCY_KEY_REUSED" || !strings.Contains(text, "already used") {
				t.Fatalf("approval %v, confirm %v: %v", approval, confirm, env)
			}
			for _, detail := range []string{"55", "8800101", "120", "Ostrava", "sending"} {
				if strings.Contains(text, detail) {
					t.Errorf("approval %v, confirm %v: the answer reveals %q: %s", approval, confirm, detail, text)
				}
			}
		}
	}
}
