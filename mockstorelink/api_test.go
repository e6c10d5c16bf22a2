package mockstorelink_test

import (
	"bytes"
	"fmt"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/storelinkclient"
)

// endpointWorld is the mock and client every endpoint step uses.
type endpointWorld struct {
	m   *mockstorelink.Running
	c   *storelinkclient.ClientWithResponses
	k47 string
}

func TestEveryEndpoint(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	w := endpointWorld{m: m, c: newClient(t, m.URL), k47: m.Server.DefaultKeyring()[mockstorelink.StoreSmichov]}
	runSteps(t, w, []step[endpointWorld]{
		{"listStores", endpointListStores},
		{"getStore", endpointGetStore},
		{"getStore closed on Sundays", endpointGetStoreClosedOnSundays},
		{"getInventory", endpointGetInventory},
		{"listPOSTransactions", endpointListPOSTransactions},
		{"create and get order", endpointCreateAndGetOrder},
		{"getSKU", endpointGetSKU},
		{"getSupplier", endpointGetSupplier},
	})
}

func endpointListStores(t *testing.T, w endpointWorld) {
	resp, err := w.c.ListStoresWithResponse(t.Context(), key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("ListStores: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	var ids []string
	for _, s := range resp.JSON200.Stores {
		ids = append(ids, s.StoreID+" "+s.Name+" "+s.Timezone)
	}
	want := []string{
		"12 Olomouc Centrum Europe/Prague",
		"47 Praha Smíchov Europe/Prague",
		"55 Ostrava Poruba Europe/Prague",
		"102 Brno Královo Pole Europe/Prague",
		"131 Plzeň Slovany Europe/Prague",
		"210 Wien Hauptbahnhof Europe/Vienna",
	}
	if diff := cmp.Diff(want, ids); diff != "" {
		t.Errorf("stores (-want +got):\n%s", diff)
	}
}

func endpointGetStore(t *testing.T, w endpointWorld) {
	resp, err := w.c.GetStoreWithResponse(t.Context(), mockstorelink.StoreSmichov, key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("GetStore: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	s := resp.JSON200
	if s.Name != "Praha Smíchov" || s.Timezone != "Europe/Prague" {
		t.Errorf("store = %q %q", s.Name, s.Timezone)
	}
	fri := s.OpeningHours.Friday
	if fri.Closed || fri.Opens == nil || *fri.Opens != "07:00" || *fri.Closes != "22:00" {
		t.Errorf("Friday hours = %+v", fri)
	}
	if s.OpeningHours.Sunday.Closed {
		t.Error("Praha Smíchov must open on Sundays (the butter scenario needs sales every day)")
	}
}

func endpointGetStoreClosedOnSundays(t *testing.T, w endpointWorld) {
	kp := w.m.Server.Keys()[mockstorelink.StoreClosedSundays]
	resp, err := w.c.GetStoreWithResponse(t.Context(), mockstorelink.StoreClosedSundays, key(kp))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("GetStore: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	sun := resp.JSON200.OpeningHours.Sunday
	if diff := cmp.Diff(storelinkclient.DayHours{Closed: true}, sun); diff != "" {
		t.Errorf("Sunday (-want +got):\n%s", diff)
	}
}

func endpointGetInventory(t *testing.T, w endpointWorld) {
	resp, err := w.c.GetInventoryWithResponse(t.Context(), mockstorelink.StoreSmichov,
		&storelinkclient.GetInventoryParams{SKU: mockstorelink.SKUButter}, key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("GetInventory: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	inv := resp.JSON200
	if inv.OnHandUnits != mockstorelink.ButterOnHandSmichov || inv.SKU != mockstorelink.SKUButter || inv.StoreID != "47" {
		t.Errorf("inventory = %+v", inv)
	}
	if inv.CountedAt.After(mockstorelink.DefaultNow()) {
		t.Errorf("counted_at %v is in the future", inv.CountedAt)
	}
	if _, off := inv.CountedAt.Zone(); off != 3600 {
		t.Errorf("counted_at %v is not in the store's offset (+01:00 in November)", inv.CountedAt)
	}
}

func endpointListPOSTransactions(t *testing.T, w endpointWorld) {
	since := mockstorelink.DefaultNow().Add(-24 * time.Hour)
	resp, err := w.c.ListPOSTransactionsWithResponse(t.Context(), mockstorelink.StoreSmichov,
		&storelinkclient.ListPOSTransactionsParams{SKU: mockstorelink.SKUButter, Since: since}, key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("ListPOSTransactions: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	p := resp.JSON200
	if !p.Since.Equal(since) || p.NextCursor != nil || int(p.TotalCount) != len(p.Transactions) {
		t.Errorf("page header = since %v cursor %v total %d (%d rows)", p.Since, p.NextCursor, p.TotalCount, len(p.Transactions))
	}
	if got := sumUnits(p.Transactions); got != mockstorelink.ButterSoldLast24hSmichov {
		t.Errorf("units sold in 24 h = %d, want %d", got, mockstorelink.ButterSoldLast24hSmichov)
	}
	for i := 1; i < len(p.Transactions); i++ {
		if p.Transactions[i].Timestamp.After(p.Transactions[i-1].Timestamp) {
			t.Fatalf("transactions not newest first at %d", i)
		}
	}
}

func endpointCreateAndGetOrder(t *testing.T, w endpointWorld) {
	resp, err := w.c.CreateReplenishmentOrderWithResponse(t.Context(), mockstorelink.StoreSmichov, storelinkclient.OrderRequest{
		SKU: mockstorelink.SKUButter, QuantityUnits: 24, Reason: "gap of 17 units",
	}, key(w.k47))
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("CreateReplenishmentOrder: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	o := resp.JSON201
	if !regexp.MustCompile(`^RO-47-\d{6}$`).MatchString(o.OrderID) {
		t.Errorf("order id %q does not look like RO-47-nnnnnn", o.OrderID)
	}
	if o.Status != storelinkclient.OrderStatusSubmitted || !o.SubmittedAt.Equal(mockstorelink.DefaultNow()) {
		t.Errorf("new order = %+v", o)
	}
	// Friday 14:30 is past Madeta's 14:00 cut-off, so the order counts from
	// Saturday; two days' lead time lands it on Monday, at opening.
	if want := time.Date(2026, 11, 30, 7, 0, 0, 0, o.SubmittedAt.Location()); !o.ExpectedArrival.Equal(want) {
		t.Errorf("expected_arrival = %v, want %v (cut-off passed, 2 days' lead time, at opening)", o.ExpectedArrival, want)
	}
	got, err := w.c.GetReplenishmentOrderWithResponse(t.Context(), mockstorelink.StoreSmichov, o.OrderID, key(w.k47))
	if err != nil || got.JSON200 == nil {
		t.Fatalf("GetReplenishmentOrder: %v %d %s", err, got.StatusCode(), got.Body)
	}
	if diff := cmp.Diff(*o, *got.JSON200); diff != "" {
		t.Errorf("order read back (-created +read):\n%s", diff)
	}
}

func endpointGetSKU(t *testing.T, w endpointWorld) {
	resp, err := w.c.GetSKUWithResponse(t.Context(), mockstorelink.SKUButter, key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("GetSKU: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	shelf := int64(30)
	want := storelinkclient.SKU{
		SKU: mockstorelink.SKUButter, Name: "Madeta butter 250g", Category: "dairy",
		SupplierID: mockstorelink.SupplierMadeta, Unit: storelinkclient.SKUUnitPiece,
		CasePack: 12, Chilled: true, ShelfLifeDays: &shelf,
	}
	if diff := cmp.Diff(want, *resp.JSON200); diff != "" {
		t.Errorf("SKU (-want +got):\n%s", diff)
	}
}

func endpointGetSupplier(t *testing.T, w endpointWorld) {
	resp, err := w.c.GetSupplierWithResponse(t.Context(), mockstorelink.SupplierMadeta, key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("GetSupplier: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	s := resp.JSON200
	if s.Name != "Madeta a.s." || s.LeadTimeDays != 2 || s.MinimumOrderUnits != nil {
		t.Errorf("supplier = %+v", s)
	}
}

func TestAuthAndErrors(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	keys := m.Server.Keys()
	k47, k55 := keys[mockstorelink.StoreSmichov], keys[mockstorelink.StoreOstrava]
	u := m.URL

	cases := []struct {
		name, method, path, key, body string
		status                        int
		code                          string
	}{
		{"no key", "GET", "/v1/stores/47", "", "", 401, "invalid_key"},
		{"no key chain-wide", "GET", "/v1/stores", "", "", 401, "invalid_key"},
		{"unknown key", "GET", "/v1/stores/47/inventory?sku=8847291", "slk_47_0000000000000000", "", 401, "invalid_key"},
		{"unknown key on chain-wide read", "GET", "/v1/skus/8847291", "nope", "", 401, "invalid_key"},
		{"other store: getStore", "GET", "/v1/stores/55", k47, "", 403, "store_forbidden"},
		{"other store: inventory", "GET", "/v1/stores/55/inventory?sku=8847291", k47, "", 403, "store_forbidden"},
		{"other store: pos", "GET", "/v1/stores/102/pos?sku=8847291&since=2026-11-26T14:30:00%2B01:00", k47, "", 403, "store_forbidden"},
		{"other store: create order", "POST", "/v1/stores/102/replenishment", k47, `{"sku":"8847291","quantity_units":12,"reason":"x"}`, 403, "store_forbidden"},
		{"other store: get order", "GET", "/v1/stores/102/replenishment/RO-102-000087", k47, "", 403, "store_forbidden"},
		{"store that does not exist", "GET", "/v1/stores/999", k47, "", 403, "store_forbidden"},
		{"chain-wide stores with key of a store outside the keyring", "GET", "/v1/stores", k55, "", 200, ""},
		{"chain-wide sku", "GET", "/v1/skus/8847291", k55, "", 200, ""},
		{"chain-wide supplier", "GET", "/v1/suppliers/SUP-MADETA", k55, "", 200, ""},
		{"own store with key outside the default keyring", "GET", "/v1/stores/55", k55, "", 200, ""},
		{"bad sku pattern", "GET", "/v1/stores/47/inventory?sku=abc", k47, "", 400, "invalid_parameter"},
		{"missing sku", "GET", "/v1/stores/47/inventory", k47, "", 400, "invalid_parameter"},
		{"bad store id", "GET", "/v1/stores/x7", k47, "", 400, "invalid_parameter"},
		{"missing since", "GET", "/v1/stores/47/pos?sku=8847291", k47, "", 400, "invalid_parameter"},
		{"since without offset", "GET", "/v1/stores/47/pos?sku=8847291&since=yesterday", k47, "", 400, "invalid_parameter"},
		{"limit too large", "GET", "/v1/stores/47/pos?sku=8847291&since=2026-11-26T14:30:00Z&limit=1001", k47, "", 400, "invalid_parameter"},
		{"limit zero", "GET", "/v1/stores/47/pos?sku=8847291&since=2026-11-26T14:30:00Z&limit=0", k47, "", 400, "invalid_parameter"},
		{"bad cursor", "GET", "/v1/stores/47/pos?sku=8847291&since=2026-11-26T14:30:00Z&cursor=garbage", k47, "", 400, "invalid_cursor"},
		{"order body: zero quantity", "POST", "/v1/stores/47/replenishment", k47, `{"sku":"8847291","quantity_units":0,"reason":"x"}`, 400, "invalid_body"},
		{"order body: unknown field", "POST", "/v1/stores/47/replenishment", k47, `{"sku":"8847291","quantity_units":5,"reason":"x","urgent":true}`, 400, "invalid_body"},
		{"order body: not JSON", "POST", "/v1/stores/47/replenishment", k47, `{"sku":`, 400, "invalid_body"},
		{"order body: missing reason", "POST", "/v1/stores/47/replenishment", k47, `{"sku":"8847291","quantity_units":5}`, 400, "invalid_body"},
		{"order for unknown sku", "POST", "/v1/stores/47/replenishment", k47, `{"sku":"1234567","quantity_units":5,"reason":"x"}`, 404, "not_found"},
		{"below minimum order", "POST", "/v1/stores/47/replenishment", k47, `{"sku":"8801111","quantity_units":47,"reason":"x"}`, 422, "below_minimum_order"},
		{"unknown sku", "GET", "/v1/skus/1234567", k47, "", 404, "not_found"},
		{"unknown sku at store", "GET", "/v1/stores/47/inventory?sku=1234567", k47, "", 404, "not_found"},
		{"unknown sku in pos", "GET", "/v1/stores/47/pos?sku=1234567&since=2026-11-26T14:30:00Z", k47, "", 404, "not_found"},
		{"unknown supplier", "GET", "/v1/suppliers/SUP-NOBODY", k47, "", 404, "not_found"},
		{"unknown order", "GET", "/v1/stores/47/replenishment/RO-47-999999", k47, "", 404, "not_found"},
		{"another store's order through own store", "GET", "/v1/stores/47/replenishment/RO-102-000087", k47, "", 404, "not_found"},
		{"unknown endpoint", "GET", "/v1/orders", k47, "", 404, "not_found"},
		{"wrong method", "DELETE", "/v1/stores/47", k47, "", 405, "method_not_allowed"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body *strings.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			var status int
			var hdr http.Header
			var b []byte
			if body != nil {
				status, hdr, b = rawDo(t, tc.method, u+tc.path, tc.key, body)
			} else {
				status, hdr, b = rawDo(t, tc.method, u+tc.path, tc.key, nil)
			}
			if status != tc.status {
				t.Fatalf("status = %d, want %d; body %s", status, tc.status, b)
			}
			if ct := hdr.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q", ct)
			}
			if tc.code != "" {
				if got := errorCode(t, b); got != tc.code {
					t.Errorf("error code = %q, want %q", got, tc.code)
				}
			}
			if bytes.Contains(b, []byte("slk_")) {
				t.Errorf("a response leaks a key: %s", b)
			}
		})
	}
}

func TestMinimumOrderAccepted(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	c := newClient(t, m.URL)
	k47 := m.Server.Keys()[mockstorelink.StoreSmichov]
	resp, err := c.CreateReplenishmentOrderWithResponse(t.Context(), mockstorelink.StoreSmichov, storelinkclient.OrderRequest{
		SKU: mockstorelink.SKUMinimumOrder, QuantityUnits: mockstorelink.MinimumOrderUnits, Reason: "exactly the minimum",
	}, key(k47))
	if err != nil || resp.JSON201 == nil {
		t.Fatalf("order at the minimum: %v %d %s", err, resp.StatusCode(), resp.Body)
	}
	sup, err := c.GetSupplierWithResponse(t.Context(), mockstorelink.SupplierAqua, key(k47))
	if err != nil || sup.JSON200 == nil || sup.JSON200.MinimumOrderUnits == nil || *sup.JSON200.MinimumOrderUnits != mockstorelink.MinimumOrderUnits {
		t.Fatalf("supplier with minimum order: %v %s", err, sup.Body)
	}
}

func TestKeyRotation(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	c := newClient(t, m.URL)
	ctx := t.Context()
	old := m.Server.DefaultKeyring()[mockstorelink.StoreSmichov]
	if !regexp.MustCompile(`^slk_47_[0-9a-f]{16}$`).MatchString(old) {
		t.Fatalf("key %q is not slk_47_<16 hex>", old)
	}
	get := func(k string) int {
		resp, err := c.GetStoreWithResponse(ctx, mockstorelink.StoreSmichov, key(k))
		if err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode()
	}
	if s := get(old); s != 200 {
		t.Fatalf("before rotation: %d", s)
	}
	fresh := m.Server.RotateKey(mockstorelink.StoreSmichov)
	if fresh == old {
		t.Fatal("rotation returned the same key")
	}
	if s := get(old); s != 401 {
		t.Errorf("old key after rotation: %d, want 401", s)
	}
	if s := get(fresh); s != 200 {
		t.Errorf("new key: %d, want 200", s)
	}
	if got := m.Server.DefaultKeyring()[mockstorelink.StoreSmichov]; got != fresh {
		t.Errorf("DefaultKeyring after rotation = %q, want %q", got, fresh)
	}
	// Other stores' keys are untouched.
	if s := get(m.Server.Keys()[mockstorelink.StoreBrno]); s != 403 {
		t.Errorf("102's key on 47 after 47 rotated: %d, want 403", s)
	}

	m.Server.SetKey(mockstorelink.StoreSmichov, "chosen-key")
	if s := get(fresh); s != 401 {
		t.Errorf("rotated key after SetKey: %d, want 401", s)
	}
	if s := get("chosen-key"); s != 200 {
		t.Errorf("key set by SetKey: %d, want 200", s)
	}
}

func TestOrderLifecycle(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(mockstorelink.DefaultNow())
	m := start(t, mockstorelink.Options{Now: clock.Now})
	c := newClient(t, m.URL)
	ctx := t.Context()
	keys := m.Server.Keys()
	k47, k102 := keys[mockstorelink.StoreSmichov], keys[mockstorelink.StoreBrno]

	created, err := c.CreateReplenishmentOrderWithResponse(ctx, mockstorelink.StoreSmichov, storelinkclient.OrderRequest{
		SKU: mockstorelink.SKUButter, QuantityUnits: 24, Reason: "butter gap",
	}, key(k47))
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create: %v %s", err, created.Body)
	}
	id := created.JSON201.OrderID
	status := func() storelinkclient.OrderStatus {
		t.Helper()
		resp, err := c.GetReplenishmentOrderWithResponse(ctx, mockstorelink.StoreSmichov, id, key(k47))
		if err != nil || resp.JSON200 == nil {
			t.Fatalf("get: %v %s", err, resp.Body)
		}
		return resp.JSON200.Status
	}
	steps := []struct {
		advance time.Duration
		want    storelinkclient.OrderStatus
	}{
		{0, storelinkclient.OrderStatusSubmitted},
		{9 * time.Minute, storelinkclient.OrderStatusSubmitted},
		{2 * time.Minute, storelinkclient.OrderStatusAcknowledged},
		{32 * time.Hour, storelinkclient.OrderStatusAcknowledged},
		{5 * time.Minute, storelinkclient.OrderStatusShipped}, // halfway to the arrival, 64.5 h away
		{32*time.Hour + 13*time.Minute, storelinkclient.OrderStatusShipped},
		{time.Minute, storelinkclient.OrderStatusDelivered}, // Monday 07:00
	}
	for i, s := range steps {
		clock.Advance(s.advance)
		if got := status(); got != s.want {
			t.Errorf("step %d (%v after submission): status %q, want %q", i, clock.Now().Sub(mockstorelink.DefaultNow()), got, s.want)
		}
	}

	// Orders are scoped to their store, even for a valid key of another store.
	resp, err := c.GetReplenishmentOrderWithResponse(ctx, mockstorelink.StoreBrno, id, key(k102))
	if err != nil || resp.StatusCode() != 404 {
		t.Errorf("47's order through store 102: %v %d, want 404", err, resp.StatusCode())
	}
	var found bool
	for _, o := range m.Server.Orders() {
		if o.OrderID == id {
			found = true
			if o.Status != mockstorelink.OrderStatusDelivered {
				t.Errorf("Orders() status = %q", o.Status)
			}
		}
	}
	if !found {
		t.Errorf("Orders() lacks %s", id)
	}
}

func TestFixtureOrders(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	c := newClient(t, m.URL)
	keys := m.Server.Keys()
	open, err := c.GetReplenishmentOrderWithResponse(t.Context(), mockstorelink.StoreSmichov, mockstorelink.OrderOpen, key(keys["47"]))
	if err != nil || open.JSON200 == nil {
		t.Fatalf("open order: %v %s", err, open.Body)
	}
	if o := open.JSON200; o.SKU != mockstorelink.SKUSteady || (o.Status != storelinkclient.OrderStatusAcknowledged && o.Status != storelinkclient.OrderStatusShipped) {
		t.Errorf("open order = %+v, want an acknowledged or shipped order for SKUSteady", o)
	}
	rej, err := c.GetReplenishmentOrderWithResponse(t.Context(), mockstorelink.StoreBrno, mockstorelink.OrderRejected, key(keys["102"]))
	if err != nil || rej.JSON200 == nil || rej.JSON200.Status != storelinkclient.OrderStatusRejected {
		t.Fatalf("rejected order: %v %s", err, rej.Body)
	}
}

func TestPagination(t *testing.T) {
	t.Parallel()
	clock := newFakeClock(mockstorelink.DefaultNow())
	m := start(t, mockstorelink.Options{Now: clock.Now})
	c := newClient(t, m.URL)
	k47 := m.Server.Keys()["47"]
	since := clock.Now().AddDate(0, 0, -28)

	whole := allTransactions(t, c, k47, "47", mockstorelink.SKUPhantomStockout, since, 1000)
	if len(whole) <= 200 {
		t.Fatalf("want a SKU with more than one default page; got %d transactions", len(whole))
	}
	paged := allTransactions(t, c, k47, "47", mockstorelink.SKUPhantomStockout, since, 37)
	if diff := cmp.Diff(whole, paged); diff != "" {
		t.Errorf("paged walk differs from one page (-one +paged):\n%s", diff)
	}
	seen := map[string]bool{}
	for i, x := range whole {
		if seen[x.TransactionID] {
			t.Fatalf("duplicate transaction %s", x.TransactionID)
		}
		seen[x.TransactionID] = true
		if x.Timestamp.Before(since) {
			t.Fatalf("transaction %s at %v is before since", x.TransactionID, x.Timestamp)
		}
		if i > 0 && x.Timestamp.After(whole[i-1].Timestamp) {
			t.Fatalf("not newest first at %d", i)
		}
	}

	// Default page size is 200.
	resp, err := c.ListPOSTransactionsWithResponse(t.Context(), "47", &storelinkclient.ListPOSTransactionsParams{
		SKU: mockstorelink.SKUPhantomStockout, Since: since}, key(k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatal(err)
	}
	if n := len(resp.JSON200.Transactions); n != 200 || resp.JSON200.NextCursor == nil {
		t.Fatalf("default page: %d rows, cursor %v", n, resp.JSON200.NextCursor)
	}
	cursor := *resp.JSON200.NextCursor

	// A cursor belongs to its query.
	other, err := c.ListPOSTransactionsWithResponse(t.Context(), "47", &storelinkclient.ListPOSTransactionsParams{
		SKU: mockstorelink.SKUButter, Since: since, Cursor: &cursor}, key(k47))
	if err != nil || other.StatusCode() != 400 || errorCode(t, other.Body) != "invalid_cursor" {
		t.Errorf("cursor on another sku: %v %d %s", err, other.StatusCode(), other.Body)
	}
	// And expires after 15 minutes.
	clock.Advance(16 * time.Minute)
	expired, err := c.ListPOSTransactionsWithResponse(t.Context(), "47", &storelinkclient.ListPOSTransactionsParams{
		SKU: mockstorelink.SKUPhantomStockout, Since: since, Cursor: &cursor}, key(k47))
	if err != nil || expired.StatusCode() != 400 || errorCode(t, expired.Body) != "cursor_expired" {
		t.Errorf("expired cursor: %v %d %s", err, expired.StatusCode(), expired.Body)
	}

	// History is kept for 28 days, however early since is.
	long := allTransactions(t, c, k47, "47", mockstorelink.SKUSteady, clock.Now().AddDate(0, -3, 0), 1000)
	oldest := long[len(long)-1].Timestamp
	if clock.Now().Sub(oldest) > 28*24*time.Hour {
		t.Errorf("oldest transaction %v is older than 28 days", oldest)
	}
}

// TestDeterminism: with a fixed clock, two fresh servers answer the same
// requests with the same bytes; another seed gives another world.
func TestDeterminism(t *testing.T) {
	t.Parallel()
	transcript := func(seed int64) (string, map[string]string) {
		m := start(t, mockstorelink.Options{Seed: seed})
		keys := m.Server.Keys()
		k47 := keys["47"]
		var out strings.Builder
		get := func(path string) {
			status, _, body := rawGet(t, m.URL+path, k47)
			fmt.Fprintf(&out, "GET %s %d\n%s\n", path, status, body)
		}
		get("/v1/stores")
		get("/v1/stores/47")
		for _, sku := range []string{mockstorelink.SKUButter, mockstorelink.SKUVolatile, mockstorelink.SKUBulkOrder} {
			get("/v1/stores/47/inventory?sku=" + sku)
			get("/v1/stores/47/pos?limit=50&sku=" + sku + "&since=2026-11-13T14:30:00%2B01:00")
		}
		get("/v1/skus/" + mockstorelink.SKUInjection)
		get("/v1/suppliers/" + mockstorelink.SupplierAqua)
		status, _, body := rawDo(t, "POST", m.URL+"/v1/stores/47/replenishment", k47,
			strings.NewReader(`{"sku":"8847291","quantity_units":24,"reason":"determinism"}`))
		fmt.Fprintf(&out, "POST %d\n%s\n", status, body)
		get("/v1/stores/47/replenishment/" + mockstorelink.OrderOpen)
		return out.String(), keys
	}
	a, keysA := transcript(0)
	b, keysB := transcript(0)
	if a != b {
		t.Errorf("two fresh servers with the same seed and clock differ:\n%s", cmp.Diff(a, b))
	}
	if diff := cmp.Diff(keysA, keysB); diff != "" {
		t.Errorf("keys differ between fresh servers:\n%s", diff)
	}
	c, keysC := transcript(99)
	if c == a {
		t.Error("another seed produced the same transcript")
	}
	if keysC["47"] == keysA["47"] {
		t.Error("another seed produced the same keys")
	}
}

func TestRequestRecords(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	k47 := m.Server.Keys()["47"]
	rawGet(t, m.URL+"/v1/stores/47/inventory?sku="+mockstorelink.SKUButter, k47)
	rawGet(t, m.URL+"/v1/skus/"+mockstorelink.SKUButter, "")
	rawGet(t, m.URL+"/v1/nothing", k47)

	got := m.Server.Requests()
	for i := range got {
		if got[i].At.IsZero() {
			t.Errorf("record %d has no time", i)
		}
		got[i].At = time.Time{}
	}
	want := []mockstorelink.RequestRecord{
		{Method: "GET", Path: "/v1/stores/47/inventory", OperationID: mockstorelink.OpGetInventory, StoreID: "47", Status: 200},
		{Method: "GET", Path: "/v1/skus/8847291", OperationID: mockstorelink.OpGetSKU, Status: 401},
		{Method: "GET", Path: "/v1/nothing", Status: 404},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	if n := m.Server.RequestCount(func(r mockstorelink.RequestRecord) bool { return r.StoreID == "47" }); n != 1 {
		t.Errorf("RequestCount(store 47) = %d", n)
	}
	m.Server.ResetRequests()
	if n := m.Server.RequestCount(nil); n != 0 {
		t.Errorf("after reset: %d records", n)
	}
}

func TestRequestLogIsBounded(t *testing.T) {
	for _, tc := range []struct{ max, sent, want int }{{5, 40, 5}, {-1, 10, 0}} {
		m, err := mockstorelink.Start(mockstorelink.Options{MaxRequestLog: tc.max})
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < tc.sent; i++ {
			resp, err := http.Get(m.URL + "/v1/stores")
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
		}
		if got := m.Server.RequestCount(nil); got < tc.want || got > tc.want+tc.want/4 {
			t.Errorf("max %d after %d requests: %d recorded, want %d (to %d)", tc.max, tc.sent, got, tc.want, tc.want+tc.want/4)
		}
		m.Close()
	}
}
