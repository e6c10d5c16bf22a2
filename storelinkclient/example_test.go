package storelinkclient_test

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/korral/storelink/storelinkclient"
)

// exampleKey is the key of store 47 in the stand-in StoreLink below.
const exampleKey = "example-key-47"

// newExampleStoreLink starts a small stand-in for StoreLink on 127.0.0.1: it
// knows the butter stock and sales of store 47, refuses other stores to the
// key of store 47, and rate-limits store 102.
func newExampleStoreLink() *httptest.Server {
	fail := func(w http.ResponseWriter, status int, code, message string) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(status)
		fmt.Fprintf(w, `{"error":{"code":%q,"message":%q}}`, code, message)
	}
	guard := func(next http.HandlerFunc) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			switch store := r.PathValue("store"); {
			case r.Header.Get(storelinkclient.StoreKeyHeader) != exampleKey:
				fail(w, http.StatusUnauthorized, "invalid_key", "the store key is missing or not valid")
			case store == "102":
				w.Header().Set("Retry-After", "30")
				fail(w, http.StatusTooManyRequests, "rate_limited", "rate limit exceeded")
			case store != "47":
				fail(w, http.StatusForbidden, "store_forbidden", "this key does not open store "+store)
			default:
				w.Header().Set("Content-Type", "application/json")
				next(w, r)
			}
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/stores/{store}/inventory", guard(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, `{"store_id":"47","sku":"8847291","on_hand_units":9,"counted_at":"2026-11-28T06:30:00+01:00"}`)
	}))
	mux.HandleFunc("GET /v1/stores/{store}/pos", guard(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Query().Get("cursor") == "" {
			fmt.Fprint(w, `{"store_id":"47","sku":"8847291","since":"2026-11-27T10:00:00+01:00","total_count":3,
				"transactions":[{"transaction_id":"T-47-20261128-000431","timestamp":"2026-11-28T10:14:07+01:00","units":2},
				{"transaction_id":"T-47-20261128-000388","timestamp":"2026-11-28T09:52:40+01:00","units":1}],
				"next_cursor":"page-2"}`)
			return
		}
		fmt.Fprint(w, `{"store_id":"47","sku":"8847291","since":"2026-11-27T10:00:00+01:00","total_count":3,
			"transactions":[{"transaction_id":"T-47-20261127-002104","timestamp":"2026-11-27T18:03:11+01:00","units":4}]}`)
	}))
	return httptest.NewServer(mux)
}

// Reading one SKU's stock at a store. The key goes on each request, so one
// client serves every store its caller holds a key for.
func Example() {
	storeLink := newExampleStoreLink()
	defer storeLink.Close()
	baseURL, key := storeLink.URL, exampleKey

	ctx := context.Background()
	c, err := storelinkclient.NewClientWithResponses(baseURL, storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
	if err != nil {
		fmt.Println(err)
		return
	}
	resp, err := c.GetInventoryWithResponse(ctx, "47", &storelinkclient.GetInventoryParams{SKU: "8847291"}, storelinkclient.WithStoreKey(key))
	inv, err := storelinkclient.Result(resp, err)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("store %s: %d units of %s, counted %s\n", inv.StoreID, inv.OnHandUnits, inv.SKU, inv.CountedAt.Format(time.RFC3339))
	// Output: store 47: 9 units of 8847291, counted 2026-11-28T06:30:00+01:00
}

// Telling a refusal from a condition worth retrying.
func ExampleAPIError() {
	storeLink := newExampleStoreLink()
	defer storeLink.Close()

	ctx := context.Background()
	c, err := storelinkclient.NewClientWithResponses(storeLink.URL, storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, store := range []storelinkclient.StoreID{"55", "102"} {
		_, err := storelinkclient.Result(c.GetInventoryWithResponse(ctx, store,
			&storelinkclient.GetInventoryParams{SKU: "8847291"}, storelinkclient.WithStoreKey(exampleKey)))
		var apiErr *storelinkclient.APIError
		switch {
		case errors.As(err, &apiErr) && apiErr.Temporary():
			fmt.Printf("store %s: busy (%s), retry in %s\n", store, apiErr.Code, apiErr.RetryAfter)
		case errors.As(err, &apiErr):
			fmt.Printf("store %s: refused with %d %s: %s\n", store, apiErr.StatusCode, apiErr.Code, apiErr.Message)
		case err != nil:
			fmt.Printf("store %s: %v\n", store, err)
		}
	}
	// Output:
	// store 55: refused with 403 store_forbidden: this key does not open store 55
	// store 102: busy (rate_limited), retry in 30s
}

// Summing a SKU's sales over every page, with a bound on the pages read.
func ExampleAllPOSTransactions() {
	storeLink := newExampleStoreLink()
	defer storeLink.Close()

	ctx := context.Background()
	c, err := storelinkclient.NewClientWithResponses(storeLink.URL, storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
	if err != nil {
		fmt.Println(err)
		return
	}
	params := storelinkclient.ListPOSTransactionsParams{
		SKU:   "8847291",
		Since: time.Date(2026, 11, 27, 10, 0, 0, 0, time.FixedZone("CET", 3600)),
	}
	var units int64
	for tx, err := range storelinkclient.AllPOSTransactions(ctx, c, "47", params, 10, storelinkclient.WithStoreKey(exampleKey)) {
		if err != nil {
			// The sum so far is incomplete: report it as such, or not at all.
			fmt.Println("incomplete:", err)
			return
		}
		fmt.Println(tx.TransactionID, tx.Units)
		units += tx.Units
	}
	fmt.Println("units sold:", units)
	// Output:
	// T-47-20261128-000431 2
	// T-47-20261128-000388 1
	// T-47-20261127-002104 4
	// units sold: 7
}

// A StoreLink address that redirects: the client does not follow, so the
// store key stays here, and the error says where the redirect pointed.
func ExampleRedirectError() {
	moved := httptest.NewServer(http.RedirectHandler("https://elsewhere.example/v1/stores/47/inventory", http.StatusFound))
	defer moved.Close()

	c, err := storelinkclient.NewClientWithResponses(moved.URL)
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = storelinkclient.Result(c.GetInventoryWithResponse(context.Background(), "47",
		&storelinkclient.GetInventoryParams{SKU: "8847291"}, storelinkclient.WithStoreKey(exampleKey)))
	var redirect *storelinkclient.RedirectError
	if errors.As(err, &redirect) {
		fmt.Printf("status %d, pointing at %s\n", redirect.StatusCode, redirect.Host)
	}
	// Output: status 302, pointing at elsewhere.example
}

// One client for every store the caller holds a key for: the keyring picks
// each request's key from the store in its path, and the chain key is the
// one sent on chain-wide reads. A store without a key fails here, before
// anything is sent.
func ExampleWithKeyring() {
	storeLink := newExampleStoreLink()
	defer storeLink.Close()

	c, err := storelinkclient.NewClientWithResponses(storeLink.URL,
		storelinkclient.WithKeyring(map[storelinkclient.StoreID]string{"47": exampleKey}),
		storelinkclient.WithChainKey(exampleKey),
		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
	if err != nil {
		fmt.Println(err)
		return
	}
	ctx := context.Background()
	for _, store := range []storelinkclient.StoreID{"47", "55"} {
		inv, err := storelinkclient.Result(c.GetInventoryWithResponse(ctx, store, &storelinkclient.GetInventoryParams{SKU: "8847291"}))
		var missing *storelinkclient.MissingKeyError
		switch {
		case errors.As(err, &missing):
			fmt.Printf("store %s: no key, nothing sent\n", missing.StoreID)
		case err != nil:
			fmt.Printf("store %s: %v\n", store, err)
		default:
			fmt.Printf("store %s: %d units\n", inv.StoreID, inv.OnHandUnits)
		}
	}
	// Output:
	// store 47: 9 units
	// store 55: no key, nothing sent
}

// Keys held elsewhere, such as in a secret store, are looked up per request.
// Without WithChainKey, a chain-wide read is refused rather than sent with a
// key the caller did not pick.
func ExampleWithStoreKeys() {
	storeLink := newExampleStoreLink()
	defer storeLink.Close()

	lookup := func(store storelinkclient.StoreID) (string, bool) {
		if store == "47" {
			return exampleKey, true
		}
		return "", false
	}
	c, err := storelinkclient.NewClientWithResponses(storeLink.URL, storelinkclient.WithStoreKeys(lookup))
	if err != nil {
		fmt.Println(err)
		return
	}
	_, err = c.ListStoresWithResponse(context.Background())
	var missing *storelinkclient.MissingKeyError
	fmt.Println(errors.As(err, &missing) && missing.ChainWide)
	fmt.Println(err)
	// Output:
	// true
	// storelink: no key for a chain-wide read (give one with WithChainKey); request not sent
}

// Naming the calling service in front of the client's own User-Agent.
func ExampleWithUserAgent() {
	seen := make(chan string, 1)
	storeLink := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen <- r.Header.Get("User-Agent")
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"stores":[]}`)
	}))
	defer storeLink.Close()

	c, err := storelinkclient.NewClientWithResponses(storeLink.URL,
		storelinkclient.WithUserAgent("replenish-bot/1.4 "+storelinkclient.DefaultUserAgent()))
	if err != nil {
		fmt.Println(err)
		return
	}
	if _, err := c.ListStoresWithResponse(context.Background(), storelinkclient.WithStoreKey(exampleKey)); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(<-seen)
	// Output: replenish-bot/1.4 storelinkclient/devel (+github.com/korral/storelink/storelinkclient)
}
