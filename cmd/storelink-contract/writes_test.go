package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi/contract"
)

// worldSKUs are the mock's SKUs except SKUQuirk.
var worldSKUs = []string{
	mockstorelink.SKUButter, mockstorelink.SKUSteady, mockstorelink.SKUThinHistory, mockstorelink.SKUNoSales,
	mockstorelink.SKUBulkOrder, mockstorelink.SKUPhantomStockout, mockstorelink.SKUVolatile, mockstorelink.SKUStaleCount,
	mockstorelink.SKUNegativeOnHand, mockstorelink.SKUInjection, mockstorelink.SKUMinimumOrder,
}

// operationIDs are the contract's operations.
var operationIDs = []string{"listStores", "getStore", "getInventory", "listPOSTransactions",
	"createReplenishmentOrder", "getReplenishmentOrder", "getSKU", "getSupplier"}

// TestWritesConformForEverySKUAndSelection: a check with writes passes
// against the mock for every SKU and every single --operation, with and
// without --generate.
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
			if got := len(mock.Server.Orders()) - initialOrders(t); got != raised || len(rep.OrdersCreated) != raised {
				t.Errorf("the mock holds %d new orders, the report shows %d raised and names %d", got, raised, len(rep.OrdersCreated))
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

// laxWrites forwards to the mock but answers every POST to store 47's
// replenishment with 201 and a new order, and counts them.
func laxWrites(t *testing.T, mockURL string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(mockURL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	var posts atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != "/v1/stores/47/replenishment" {
			proxy.ServeHTTP(w, r)
			return
		}
		n := posts.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		fmt.Fprintf(w, `{"order_id":"rpl_%d","store_id":"47","sku":"8847291","quantity_units":1,"reason":"x","status":"submitted","submitted_at":"2026-11-27T14:30:00+01:00","expected_arrival":"2026-11-29T06:00:00+01:00"}`, n)
	}))
	t.Cleanup(srv.Close)
	return srv, &posts
}

// TestCheckLeavesOneAnnouncedOrderAtALaxStoreLink: against laxWrites one
// write is sent and named; --max-orders needs --allow-writes and >= 1.
func TestCheckLeavesOneAnnouncedOrderAtALaxStoreLink(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	lax, posts := laxWrites(t, mock.URL)
	code, stdout, stderr := cli(t, checkArgs(lax.URL, keyring, "--allow-writes", "--write-store", "47", "--format", "json")...)
	if code != exitDrift {
		t.Fatalf("exit %d, want 1 (drift)\n%s", code, stderr)
	}
	rep := decodeReport(t, stdout)
	if posts.Load() != 1 || len(rep.OrdersCreated) != 1 || rep.OrdersCreated[0].OrderID != "rpl_1" {
		t.Errorf("%d writes reached StoreLink; orders named %+v; want one, rpl_1", posts.Load(), rep.OrdersCreated)
	}
	if !strings.Contains(stderr, "left at StoreLink: order rpl_1 at store 47") {
		t.Errorf("stderr does not name the order left:\n%s", stderr)
	}
	for _, bad := range [][]string{{"--max-orders", "2"}, {"--allow-writes", "--write-store", "47", "--max-orders", "0"}} {
		if code, _, stderr := cli(t, checkArgs(lax.URL, keyring, bad...)...); code != exitUsage || !strings.Contains(stderr, "--max-orders") {
			t.Errorf("%v: exit %d, %q; want a usage error naming --max-orders", bad, code, stderr)
		}
	}
	if posts.Load() != 1 {
		t.Errorf("a refused command line wrote: %d writes", posts.Load())
	}
}

// TestNoIDFlagsAgainstTheMock: without id flags the check learns its ids
// and passes, with and without writes and generated cases.
func TestNoIDFlagsAgainstTheMock(t *testing.T) {
	t.Parallel()
	runs := map[string][]string{
		"default": nil,
		"writes":  {"--allow-writes", "--write-store", mockstorelink.StoreSmichov},
	}
	for _, seed := range []string{"1", "2", "3"} {
		runs["generate seed "+seed] = []string{"--allow-writes", "--write-store", mockstorelink.StoreSmichov,
			"--generate", "--seed", seed, "--max-orders", "3", "--deadline", "30s"}
	}
	for name, extra := range runs {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			mock, keyring := startMock(t)
			args := append([]string{"check", "--base-url", mock.URL, "--keyring-file", keyring, "--rate", "1000/s", "--format", "json"}, extra...)
			code, stdout, stderr := cli(t, args...)
			rep := decodeReport(t, stdout)
			mustConform(t, code, rep, stderr)
			for _, c := range rep.Coverage {
				if c.Status == contract.Checked || (extra == nil && c.Operation == "createReplenishmentOrder") {
					continue
				}
				if extra == nil && c.Operation == "getReplenishmentOrder" && c.Status == contract.PartlyChecked {
					continue // no order id to read without writes
				}
				t.Errorf("%s %s: %s", c.Operation, c.Status, c.Why)
			}
			if got := len(mock.Server.Orders()) - initialOrders(t); got != len(rep.OrdersCreated) {
				t.Errorf("the mock holds %d new orders, the report names %d", got, len(rep.OrdersCreated))
			}
		})
	}
}
