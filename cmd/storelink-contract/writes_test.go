package main

import (
	"strings"
	"testing"

	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi/contract"
)

// worldSKUs are the SKUs of the mock's world but the quirk's, whose
// inventory answers 200 with an error body on purpose (the drift the
// checker must report).
var worldSKUs = []string{
	mockstorelink.SKUButter, mockstorelink.SKUSteady, mockstorelink.SKUThinHistory, mockstorelink.SKUNoSales,
	mockstorelink.SKUBulkOrder, mockstorelink.SKUPhantomStockout, mockstorelink.SKUVolatile, mockstorelink.SKUStaleCount,
	mockstorelink.SKUNegativeOnHand, mockstorelink.SKUInjection, mockstorelink.SKUMinimumOrder,
}

// operationIDs are the contract's operations.
var operationIDs = []string{"listStores", "getStore", "getInventory", "listPOSTransactions",
	"createReplenishmentOrder", "getReplenishmentOrder", "getSKU", "getSupplier"}

// TestWritesConformForEverySKUAndSelection: a check with writes allowed
// passes against the project's mock for every SKU of its world, with and
// without --generate, and for every single --operation: the write probe
// reads the SKU's case pack and its supplier's minimum itself (also when
// getSKU and getSupplier are not selected) and orders what the contract
// says StoreLink must take. Before, --operation createReplenishmentOrder
// alone ordered 1 unit against a minimum of 48 and reported "expected
// 201, got 422".
func TestWritesConformForEverySKUAndSelection(t *testing.T) {
	t.Parallel()
	type run struct {
		name string
		args []string
	}
	var runs []run
	for _, sku := range worldSKUs {
		runs = append(runs, run{"sku " + sku, []string{"--sku", sku}},
			run{"sku " + sku + " generate", []string{"--sku", sku, "--generate", "--seed", "11", "--max-requests", "400", "--deadline", "30s"}})
	}
	for _, op := range operationIDs {
		for _, sku := range []string{mockstorelink.SKUMinimumOrder, mockstorelink.SKUButter} {
			runs = append(runs, run{"only " + op + " sku " + sku, []string{"--sku", sku, "--operation", op}},
				run{"only " + op + " sku " + sku + " generate", []string{"--sku", sku, "--operation", op, "--generate", "--seed", "3", "--deadline", "30s"}})
		}
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			mock, keyring := startMock(t)
			args := append(checkArgs(mock.URL, keyring, "--allow-writes", "--write-store", mockstorelink.StoreSmichov, "--format", "json"), r.args...)
			code, stdout, stderr := cli(t, args...)
			rep := decodeReport(t, stdout)
			mustConform(t, code, rep, stderr)
			if len(rep.Causes) != 0 {
				t.Errorf("causes against the conformant mock: %+v", rep.Causes)
			}
			for _, p := range rep.Probes {
				if p.Operation == "createReplenishmentOrder" && p.Probe == "raise one order" && p.Got != 201 {
					t.Errorf("the write probe got %d: %s", p.Got, p.Detail)
				}
			}
			for _, c := range rep.Coverage {
				selected := !strings.Contains(strings.Join(r.args, " "), "--operation") || strings.Contains(strings.Join(r.args, " "), "--operation "+c.Operation)
				if selected && c.Status != contract.Checked {
					t.Errorf("%s %s: %s", c.Operation, c.Status, c.Why)
				}
			}
			// The mock holds what the check says it raised: each order
			// the report shows a 201 for, and nothing else.
			raised := 0
			for _, p := range rep.Probes {
				if p.Got == 201 {
					raised++
				}
			}
			if got := len(mock.Server.Orders()) - initialOrders(t); got != raised {
				t.Errorf("the mock holds %d new orders, the report shows %d raised", got, raised)
			}
		})
	}
}

// initialOrders is how many orders a fresh mock world holds.
func initialOrders(t *testing.T) int {
	t.Helper()
	mock, _ := startMock(t)
	return len(mock.Server.Orders())
}
