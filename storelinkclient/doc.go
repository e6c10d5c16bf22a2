// Package storelinkclient is a typed Go client for Korral's StoreLink API:
// stores and opening hours, on-hand stock, point-of-sale transactions, SKU
// and supplier master data, and replenishment orders. It imports no other
// module of this repository.
//
//	c, err := storelinkclient.NewClientWithResponses(baseURL,
//		storelinkclient.WithKeyring(map[storelinkclient.StoreID]string{"47": key47, "55": key55}),
//		storelinkclient.WithChainKey(key47),
//		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
//	...
//	inv, err := storelinkclient.Result(c.GetInventoryWithResponse(ctx, "47",
//		&storelinkclient.GetInventoryParams{SKU: "8847291"}))
//
// A store key opens only its own store plus the chain-wide reads
// (listStores, getSKU, getSupplier). [WithKeyring] and [WithStoreKeys] pick
// each request's key from the store in its path and [WithChainKey] names
// the key of chain-wide reads; a request without a key fails with a
// [*MissingKeyError] before it is sent. No error of this package repeats a
// key.
//
// Every client refuses redirects ([*RedirectError]), sends a User-Agent
// naming this module ([DefaultUserAgent]) and, with [WithResponseLimit],
// bounds every response body.
//
// [Result] turns a *WithResponse result into its typed body or an error: an
// [*APIError] (also for StoreLink's 200 with an error body), a
// [*MissingFieldError], or one wrapping [ErrMalformedResponse].
// [ResultWithProblems] and [ResultWithFields] also return the answer's
// other [FieldProblems] and its [Absent] fields, which decode to zero
// values a reader must not take for sent values.
//
// [AllPOSTransactions] walks POS pages with a page budget and a guard
// against a looping cursor. [LocalizeTimestamps] rewrites store-local
// times into RFC 3339 (ADR 0032). The sub-package rules checks what the
// schema cannot. storelink.gen.go and timestamps.gen.go are generated from
// openapi/storelink.yaml (client.tmpl and imports.tmpl are oapi-codegen
// templates) and never edited by hand.
package storelinkclient

//go:generate env GOWORK=off go tool -modfile=../tools/go.mod oapi-codegen -config oapi-codegen.yaml ../openapi/storelink.yaml
