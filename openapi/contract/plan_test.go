package contract

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func planned(cfg Config) []string {
	var out []string
	for _, p := range plan(cfg) {
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
		"listStores/valid key", "listStores/no key", "listStores/unknown key",
		"getStore/valid key", "getStore/no key", "getStore/another store's key", "getStore/unknown store 999999",
		"getInventory/valid key", "getInventory/no key", "getInventory/another store's key",
		"getInventory/unknown SKU 99999999999999", "getInventory/malformed SKU",
		"listPOSTransactions/valid key, page 1", "listPOSTransactions/no key", "listPOSTransactions/another store's key",
		"listPOSTransactions/limit=0", "listPOSTransactions/malformed since",
		"getSKU/valid key", "getSKU/no key", "getSKU/unknown SKU 99999999999999", "getSKU/malformed SKU",
		"getSupplier/valid key", "getSupplier/no key", "getSupplier/unknown supplier",
		"getReplenishmentOrder/valid key", "getReplenishmentOrder/no key",
		"getReplenishmentOrder/another store's key", "getReplenishmentOrder/unknown order",
	}
	t.Run("reads only", func(t *testing.T) {
		want := append(append([]string{}, reads...), "createReplenishmentOrder/raise an order (skipped)")
		if diff := cmp.Diff(want, planned(base.withDefaults(sp.exampleSKU))); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
	})
	t.Run("writes allowed", func(t *testing.T) {
		cfg := base
		cfg.AllowWrites, cfg.WriteStore = true, "102"
		want := append(append([]string{}, reads...),
			"createReplenishmentOrder/no key", "createReplenishmentOrder/another store's key",
			"createReplenishmentOrder/quantity_units=0", "createReplenishmentOrder/raise one order")
		if diff := cmp.Diff(want, planned(cfg.withDefaults(sp.exampleSKU))); diff != "" {
			t.Errorf("plan (-want +got):\n%s", diff)
		}
		for _, p := range plan(cfg.withDefaults(sp.exampleSKU)) {
			if p.op != opCreateOrder {
				continue
			}
			req, _ := p.build(&state{})
			if req.path != "/v1/stores/102/replenishment" {
				t.Errorf("%s writes to %s, want only the write store", p.name, req.path)
			}
		}
	})
	t.Run("one store, no order", func(t *testing.T) {
		cfg := Config{Keyring: map[string]string{"47": "k47"}, Now: fixedNow}.withDefaults(sp.exampleSKU)
		var skipped []string
		for _, s := range planned(cfg) {
			if strings.HasSuffix(s, "(skipped)") {
				skipped = append(skipped, s)
			}
		}
		want := []string{
			"getStore/another store's key (skipped)", "getInventory/another store's key (skipped)",
			"listPOSTransactions/another store's key (skipped)", "getReplenishmentOrder/valid key (skipped)",
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
	p := plan(cfg)[12]
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
