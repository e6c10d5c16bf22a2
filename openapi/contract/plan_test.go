package contract

import (
	"maps"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func planned(sp *spec, cfg Config) []string {
	var out []string
	for _, p := range plan(cfg, sp) {
		s := p.op + "/" + p.name
		if p.skip != "" {
			s += " (skipped)"
		}
		out = append(out, s)
	}
	return out
}

func TestPlan(t *testing.T) {
	sp := mustSpec(t)
	base := Config{Keyring: map[string]string{"102": "k102", "47": "k47"}, OrderID: "RO-47-000123", Now: fixedNow}
	reads := []string{
		"listStores/valid key", "listStores/no key", "listStores/unknown key", "listStores/another store's key",
		"getStore/valid key", "getStore/no key", "getStore/another store's key", "getStore/store absent from the store list",
		"getInventory/valid key", "getInventory/no key", "getInventory/another store's key",
		"getInventory/unknown SKU 99999999999999", "getInventory/malformed SKU",
		"listPOSTransactions/valid key, page 1", "listPOSTransactions/no key", "listPOSTransactions/another store's key",
		"listPOSTransactions/valid key, limit=1", "listPOSTransactions/limit=0", "listPOSTransactions/malformed since",
		"getSKU/valid key", "getSKU/no key", "getSKU/another store's key", "getSKU/unknown SKU 99999999999999", "getSKU/malformed SKU",
		"getSupplier/valid key", "getSupplier/no key", "getSupplier/another store's key", "getSupplier/unknown supplier",
		"getReplenishmentOrder/valid key", "getReplenishmentOrder/no key",
		"getReplenishmentOrder/another store's key", "getReplenishmentOrder/unknown order",
	}
	t.Run("reads only", func(t *testing.T) {
		want := append(append([]string{}, reads...), "createReplenishmentOrder/raise an order (skipped)")
		if diff := cmp.Diff(want, planned(sp, base.withDefaults(sp.exampleSKU))); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
	})
	t.Run("writes allowed", func(t *testing.T) {
		cfg := base
		cfg.AllowWrites, cfg.WriteStore = true, "102"
		want := append(append([]string{}, reads...),
			"createReplenishmentOrder/no key", "createReplenishmentOrder/another store's key",
			"createReplenishmentOrder/quantity_units=0", "createReplenishmentOrder/quantity below the supplier's minimum",
			"createReplenishmentOrder/raise one order")
		if diff := cmp.Diff(want, planned(sp, cfg.withDefaults(sp.exampleSKU))); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
		for _, p := range plan(cfg.withDefaults(sp.exampleSKU), sp) {
			if p.op != opCreateOrder {
				continue
			}
			req, _ := p.build(&state{minOrder: 12})
			if req.path != "/v1/stores/102/replenishment" {
				t.Errorf("%s writes to %s, want only the write store", p.name, req.path)
			}
		}
	})
	t.Run("one store, no order", func(t *testing.T) {
		cfg := Config{Keyring: map[string]string{"47": "k47"}, Now: fixedNow}.withDefaults(sp.exampleSKU)
		var skipped []string
		for _, s := range planned(sp, cfg) {
			if strings.HasSuffix(s, "(skipped)") {
				skipped = append(skipped, s)
			}
		}
		want := []string{
			"listStores/another store's key (skipped)",
			"getStore/another store's key (skipped)", "getInventory/another store's key (skipped)",
			"listPOSTransactions/another store's key (skipped)", "getSKU/another store's key (skipped)",
			"getSupplier/another store's key (skipped)", "getReplenishmentOrder/valid key (skipped)",
			"getReplenishmentOrder/another store's key (skipped)", "createReplenishmentOrder/raise an order (skipped)",
		}
		if diff := cmp.Diff(want, skipped); diff != "" {
			t.Errorf("skipped (-want +got):\n%s", diff)
		}
	})
}

func TestPlanDefaults(t *testing.T) {
	sp := mustSpec(t)
	cfg := Config{BaseURL: "https://storelink.example/", Keyring: map[string]string{"102": "a", "47": "b", "5": "c"}}.withDefaults(sp.exampleSKU)
	if cfg.Store != "5" {
		t.Errorf("default store %q, want the numerically lowest, 5", cfg.Store)
	}
	if cfg.SKU != "8847291" {
		t.Errorf("default SKU %q, want the contract's example", cfg.SKU)
	}
	if cfg.BaseURL != "https://storelink.example" {
		t.Errorf("base URL %q keeps its trailing slash", cfg.BaseURL)
	}
	if otherStore(cfg.Keyring, "5") != "47" || otherStore(map[string]string{"5": "c"}, "5") != "" {
		t.Error("otherStore does not pick the lowest other store")
	}
}

func TestPOSQueryIsWellFormed(t *testing.T) {
	sp := mustSpec(t)
	cfg := Config{Keyring: map[string]string{"47": "k"}, Now: fixedNow}.withDefaults(sp.exampleSKU)
	p := findPlanned(t, plan(cfg, sp), opListPOS, "valid key, page 1")
	req, _ := p.build(&state{})
	want := "/v1/stores/47/pos?limit=10&since=2026-11-20T14%3A30%3A00Z&sku=8847291"
	if got := req.target(); got != want {
		t.Errorf("POS page 1 = %s, want %s", got, want)
	}
	next := p.learn(&state{}, []byte(`{"next_cursor":"abc"}`))
	if len(next) != 1 || next[0].name != "valid key, page 2" {
		t.Fatalf("a cursor did not queue page 2: %v", next)
	}
	if req, _ := next[0].build(&state{}); req.query.Get("cursor") != "abc" || req.query.Get("since") == "" {
		t.Errorf("page 2 query %v", req.query)
	}
	if got := p.learn(&state{}, []byte(`{"transactions":[]}`)); got != nil {
		t.Errorf("the last page queued %d more", len(got))
	}
}

func findPlanned(t *testing.T, ps []*probe, op, name string) *probe {
	t.Helper()
	for _, p := range ps {
		if p.op == op && p.name == name {
			return p
		}
	}
	t.Fatalf("no probe %s/%s planned", op, name)
	return nil
}

// TestKeyScopeDecidesTheOtherKeyProbe: what another store's key must get
// comes from the contract's x-korral-key-scope, not from the check's code.
func TestKeyScopeDecidesTheOtherKeyProbe(t *testing.T) {
	sp := mustSpec(t)
	cfg := Config{Keyring: map[string]string{"102": "k102", "47": "k47"}, Now: fixedNow, AllowWrites: true, WriteStore: "47"}.withDefaults(sp.exampleSKU)
	want := map[string]string{
		opListStores: "200", opGetSKU: "200", opGetSupplier: "200",
		opGetStore: "403", opGetInventory: "403", opListPOS: "403", opGetOrder: "403", opCreateOrder: "403",
	}
	got := map[string]string{}
	for _, p := range plan(cfg, sp) {
		if p.name == "another store's key" {
			got[p.op] = statusList(p.expect)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("another store's key expects (-want +got):\n%s", diff)
	}
	// Flip getSKU's scope in a copy of the spec: the plan follows.
	flipped := *sp
	flipped.ops = maps.Clone(sp.ops)
	o := flipped.ops[opGetSKU]
	o.keyScope = scopeStore
	flipped.ops[opGetSKU] = o
	if p := findPlanned(t, plan(cfg, &flipped), opGetSKU, "another store's key"); statusList(p.expect) != "403" || p.positive {
		t.Errorf("a store-scoped getSKU: other key expects %v (positive %v), want 403", p.expect, p.positive)
	}
}

// TestNoAssumptionsLeavesOutAssumedProbes: exactly the probes that stand on
// an id the contract does not reserve, or on state, are left out.
func TestNoAssumptionsLeavesOutAssumedProbes(t *testing.T) {
	sp := mustSpec(t)
	cfg := Config{Keyring: map[string]string{"102": "k102", "47": "k47"}, Now: fixedNow, NoAssumptions: true}.withDefaults(sp.exampleSKU)
	var skipped []string
	for _, p := range plan(cfg, sp) {
		if strings.Contains(p.skip, "--no-assumptions") {
			skipped = append(skipped, p.op+"/"+p.name)
		}
	}
	want := []string{"listStores/unknown key", "getInventory/unknown SKU 99999999999999", "getSKU/unknown SKU 99999999999999",
		"getSupplier/unknown supplier", "getReplenishmentOrder/unknown order"}
	if diff := cmp.Diff(want, skipped); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
	// The read-back is queued by the write; it is left out too.
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	raise := findPlanned(t, plan(cfg, sp), opCreateOrder, "raise one order")
	next := raise.learn(&state{}, []byte(`{"order_id":"RO-47-000501"}`))
	if len(next) != 1 || !strings.Contains(next[0].skip, "--no-assumptions") {
		t.Errorf("read-back after the write: %+v", next)
	}
}

// TestAbsentStoreIsOutsideTheList: the unknown-store probe picks an id
// outside the store list and keyring; without a list it is an assumption.
func TestAbsentStoreIsOutsideTheList(t *testing.T) {
	listed := map[string]bool{"999999": true, "47": true}
	if got := absentStore(listed, map[string]string{"999998": "k"}); got != "999997" {
		t.Errorf("absentStore = %q, want 999997", got)
	}
	sp := mustSpec(t)
	cfg := Config{Keyring: map[string]string{"47": "k47", "999999": "k9"}, Now: fixedNow}.withDefaults(sp.exampleSKU)
	p := findPlanned(t, plan(cfg, sp), opGetStore, "store absent from the store list")
	if req, why := p.build(&state{}); why != "" || req.path != "/v1/stores/999998" || !strings.Contains(req.assume, "only the keyring's stores are known") {
		t.Errorf("without the store list: built %q (%s), assuming %q; want /v1/stores/999998 as an assumption", req.path, why, req.assume)
	}
	if req, why := p.build(&state{listed: listed}); why != "" || req.path != "/v1/stores/999998" || req.assume != "" {
		t.Errorf("built %q (%s), assuming %q; want /v1/stores/999998 on the contract alone", req.path, why, req.assume)
	}
	cfg.NoAssumptions = true
	p = findPlanned(t, plan(cfg, sp), opGetStore, "store absent from the store list")
	if _, why := p.build(&state{}); !strings.Contains(why, "--no-assumptions") {
		t.Errorf("with --no-assumptions and no store list: %q, want the probe left out", why)
	}
}
