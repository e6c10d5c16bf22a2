package storelinkclient_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"sort"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/jarcoal/httpmock"

	sl "github.com/korral/storelink/storelinkclient"
)

// The example bodies of openapi/storelink.yaml, as StoreLink sends them.
const (
	exampleStoreList = `{"stores":[{"store_id":"47","name":"Praha Smíchov","timezone":"Europe/Prague"}]}`
	exampleStore     = `{"store_id":"47","name":"Praha Smíchov","timezone":"Europe/Prague","opening_hours":{
		"monday":{"closed":false,"opens":"07:00","closes":"22:00"},
		"tuesday":{"closed":false,"opens":"07:00","closes":"22:00"},
		"wednesday":{"closed":false,"opens":"07:00","closes":"22:00"},
		"thursday":{"closed":false,"opens":"07:00","closes":"22:00"},
		"friday":{"closed":false,"opens":"07:00","closes":"22:00"},
		"saturday":{"closed":false,"opens":"08:00","closes":"20:00"},
		"sunday":{"closed":true}}}`
	exampleInventory = `{"store_id":"47","sku":"8847291","on_hand_units":9,"counted_at":"2026-11-28T06:30:00+01:00"}`
	examplePOSPage   = `{"store_id":"47","sku":"8847291","since":"2026-11-27T10:00:00+01:00",
		"transactions":[{"transaction_id":"T-47-20261128-000431","timestamp":"2026-11-28T10:14:07+01:00","units":2}],
		"total_count":1}`
	exampleOrderRequest = `{"sku":"8847291","quantity_units":24,"reason":"Projected to sell out before close; gap of 14 units."}`
	exampleOrder        = `{"order_id":"RO-47-000123","store_id":"47","sku":"8847291","quantity_units":24,
		"reason":"Projected to sell out before close; gap of 14 units.","status":"submitted",
		"submitted_at":"2026-11-28T10:20:00+01:00","expected_arrival":"2026-11-30T06:00:00+01:00"}`
	exampleSKU      = `{"sku":"8847291","name":"Madeta butter 250g","category":"dairy","supplier_id":"SUP-MADETA","unit":"piece","case_pack":12,"chilled":true,"shelf_life_days":30}`
	exampleSupplier = `{"supplier_id":"SUP-MADETA","name":"Madeta a.s.","lead_time_days":2,"order_cutoff_local":"14:00","minimum_order_units":12}`
)

func openDay(opens, closes string) sl.DayHours {
	return sl.DayHours{Opens: &opens, Closes: &closes}
}

var wantOrder = &sl.Order{
	OrderID:         "RO-47-000123",
	StoreID:         "47",
	SKU:             "8847291",
	QuantityUnits:   24,
	Reason:          "Projected to sell out before close; gap of 14 units.",
	Status:          sl.OrderStatusSubmitted,
	SubmittedAt:     at(11, 28, 10, 20, 0),
	ExpectedArrival: at(11, 30, 6, 0, 0),
}

// endpointCase calls one operation through the generated client and Result.
type endpointCase struct {
	name   string
	method string
	url    string
	status int
	body   string
	call   func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error)
	want   any
}

// call adapts Result's typed answer to the table's any.
func call[T any](v *T, err error) (any, error) { return v, err }

var endpoints = []endpointCase{
	{
		name: "listStores", method: http.MethodGet, url: "/v1/stores", status: 200, body: exampleStoreList,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			return call(sl.Result(c.ListStoresWithResponse(ctx, key)))
		},
		want: &sl.StoreList{Stores: []sl.StoreSummary{{StoreID: "47", Name: "Praha Smíchov", Timezone: "Europe/Prague"}}},
	},
	{
		name: "getStore", method: http.MethodGet, url: "/v1/stores/47", status: 200, body: exampleStore,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			return call(sl.Result(c.GetStoreWithResponse(ctx, "47", key)))
		},
		want: &sl.Store{
			StoreID: "47", Name: "Praha Smíchov", Timezone: "Europe/Prague",
			OpeningHours: sl.WeeklyHours{
				Monday: openDay("07:00", "22:00"), Tuesday: openDay("07:00", "22:00"),
				Wednesday: openDay("07:00", "22:00"), Thursday: openDay("07:00", "22:00"),
				Friday: openDay("07:00", "22:00"), Saturday: openDay("08:00", "20:00"),
				Sunday: sl.DayHours{Closed: true},
			},
		},
	},
	{
		name: "getInventory", method: http.MethodGet, url: "/v1/stores/47/inventory?sku=8847291", status: 200, body: exampleInventory,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			return call(sl.Result(c.GetInventoryWithResponse(ctx, "47", &sl.GetInventoryParams{SKU: "8847291"}, key)))
		},
		want: &sl.Inventory{StoreID: "47", SKU: "8847291", OnHandUnits: 9, CountedAt: at(11, 28, 6, 30, 0)},
	},
	{
		name: "listPOSTransactions", method: http.MethodGet,
		url:    "/v1/stores/47/pos?cursor=c2luY2U9MTcwMDAwMDAwMCZvZmZzZXQ9MjAw&limit=200&since=2026-11-27T10%3A00%3A00%2B01%3A00&sku=8847291",
		status: 200, body: examplePOSPage,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			params := &sl.ListPOSTransactionsParams{
				SKU: "8847291", Since: at(11, 27, 10, 0, 0), Limit: ptr(200),
				Cursor: ptr("c2luY2U9MTcwMDAwMDAwMCZvZmZzZXQ9MjAw"),
			}
			return call(sl.Result(c.ListPOSTransactionsWithResponse(ctx, "47", params, key)))
		},
		want: &sl.POSPage{
			StoreID: "47", SKU: "8847291", Since: at(11, 27, 10, 0, 0), TotalCount: 1,
			Transactions: []sl.POSTransaction{{TransactionID: "T-47-20261128-000431", Timestamp: at(11, 28, 10, 14, 7), Units: 2}},
		},
	},
	{
		name: "createReplenishmentOrder", method: http.MethodPost, url: "/v1/stores/47/replenishment", status: 201, body: exampleOrder,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			var req sl.OrderRequest
			if err := json.Unmarshal([]byte(exampleOrderRequest), &req); err != nil {
				return nil, err
			}
			return call(sl.Result(c.CreateReplenishmentOrderWithResponse(ctx, "47", req, key)))
		},
		want: wantOrder,
	},
	{
		name: "getReplenishmentOrder", method: http.MethodGet, url: "/v1/stores/47/replenishment/RO-47-000123", status: 200, body: exampleOrder,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			return call(sl.Result(c.GetReplenishmentOrderWithResponse(ctx, "47", "RO-47-000123", key)))
		},
		want: wantOrder,
	},
	{
		name: "getSKU", method: http.MethodGet, url: "/v1/skus/8847291", status: 200, body: exampleSKU,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			return call(sl.Result(c.GetSKUWithResponse(ctx, "8847291", key)))
		},
		want: &sl.SKU{
			SKU: "8847291", Name: "Madeta butter 250g", Category: "dairy", SupplierID: "SUP-MADETA",
			Unit: sl.SKUUnitPiece, CasePack: 12, Chilled: true, ShelfLifeDays: ptr[int64](30),
		},
	},
	{
		name: "getSupplier", method: http.MethodGet, url: "/v1/suppliers/SUP-MADETA", status: 200, body: exampleSupplier,
		call: func(ctx context.Context, c *sl.ClientWithResponses, key sl.RequestEditorFn) (any, error) {
			return call(sl.Result(c.GetSupplierWithResponse(ctx, "SUP-MADETA", key)))
		},
		want: &sl.Supplier{
			SupplierID: "SUP-MADETA", Name: "Madeta a.s.", LeadTimeDays: 2,
			OrderCutoffLocal: ptr("14:00"), MinimumOrderUnits: ptr[int64](12),
		},
	},
}

// TestEndpointsDecodeSpecExamples serves each operation's spec example to
// an exact-match responder and checks the typed value.
func TestEndpointsDecodeSpecExamples(t *testing.T) {
	if len(endpoints) != 8 {
		t.Fatalf("the spec has 8 operations, the table %d", len(endpoints))
	}
	for _, ec := range endpoints {
		t.Run(ec.name, func(t *testing.T) {
			t.Parallel()
			c, mt := newMockClient(t, sl.WithResponseLimit(sl.DefaultResponseLimit))
			matcher := httpmock.HeaderIs(sl.StoreKeyHeader, testKey)
			if ec.method == http.MethodPost {
				matcher = matcher.And(httpmock.HeaderIs("Content-Type", "application/json"),
					httpmock.NewMatcher("order request", func(req *http.Request) bool {
						b, err := io.ReadAll(req.Body)
						var got, want any
						return err == nil && json.Unmarshal(b, &got) == nil &&
							json.Unmarshal([]byte(exampleOrderRequest), &want) == nil && cmp.Equal(got, want)
					}))
			}
			mt.RegisterMatcherResponder(ec.method, "https://storelink.test"+ec.url, matcher, jsonResponder(ec.status, ec.body))

			got, err := ec.call(t.Context(), c, sl.WithStoreKey(testKey))
			if err != nil {
				t.Fatalf("call: %v", err)
			}
			if diff := cmp.Diff(ec.want, got); diff != "" {
				t.Errorf("decoded value (-want +got):\n%s", diff)
			}
			if n := mt.GetTotalCallCount(); n != 1 {
				t.Errorf("%d requests, want 1", n)
			}
		})
	}
}

// TestStoreKeyOnEveryRequest sends every operation to a real server and
// records the key header each request carried.
func TestStoreKeyOnEveryRequest(t *testing.T) {
	var (
		mu   sync.Mutex
		seen = map[string]string{}
	)
	c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen[r.Method+" "+r.URL.Path] = r.Header.Get(sl.StoreKeyHeader)
		mu.Unlock()
		writeJSON(w, http.StatusNotFound, `{"error":{"code":"not_found","message":"nothing here"}}`)
	}))
	for _, ec := range endpoints {
		if _, err := ec.call(t.Context(), c, sl.WithStoreKey(testKey)); err == nil {
			t.Fatalf("%s: got no error from a 404", ec.name)
		}
	}
	var keys []string
	for route, key := range seen {
		keys = append(keys, route)
		if key != testKey {
			t.Errorf("%s carried key %q, want %q", route, key, testKey)
		}
	}
	sort.Strings(keys)
	want := []string{
		"GET /v1/skus/8847291", "GET /v1/stores", "GET /v1/stores/47", "GET /v1/stores/47/inventory",
		"GET /v1/stores/47/pos", "GET /v1/stores/47/replenishment/RO-47-000123",
		"GET /v1/suppliers/SUP-MADETA", "POST /v1/stores/47/replenishment",
	}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("requests seen (-want +got):\n%s", diff)
	}
}

// TestWithStoreKeyRefusesBadKey checks that a key that cannot be right never
// reaches the server and never appears in the error.
func TestWithStoreKeyRefusesBadKey(t *testing.T) {
	for name, key := range map[string]string{"empty": "", "line break": "sk-47\r\nX-Injected: 1", "nul": "sk\x0047"} {
		t.Run(name, func(t *testing.T) {
			c, mt := newMockClient(t)
			mt.RegisterNoResponder(jsonResponder(200, exampleStoreList))
			_, err := sl.Result(c.ListStoresWithResponse(t.Context(), sl.WithStoreKey(key)))
			if err == nil {
				t.Fatal("got no error")
			}
			if key != "" && containsAny(err.Error(), key, "X-Injected") {
				t.Errorf("error %q repeats the key", err)
			}
			if n := mt.GetTotalCallCount(); n != 0 {
				t.Errorf("%d requests sent, want 0", n)
			}
		})
	}
}
