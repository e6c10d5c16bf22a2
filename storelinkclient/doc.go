// Package storelinkclient is a typed Go client for Korral's StoreLink API:
// stores and opening hours, on-hand stock, point-of-sale transactions, SKU
// and supplier master data, and replenishment orders.
//
// The types and the Client in storelink.gen.go are generated from the StoreLink
// contract (openapi/storelink.yaml) and must not be edited by hand. The
// hand-written files beside them add what the contract cannot say:
//
//   - [WithStoreKey] authenticates one request; a key opens one store, so it
//     is chosen per call rather than per client.
//   - [Result] turns a *WithResponse result into its typed body or an error;
//     [CheckResponse] and [APIError] give failures a status, a StoreLink code
//     and a Retry-After, and also catch StoreLink's habit of answering 200
//     with an error body.
//   - [WithResponseLimit] bounds every response body ([DefaultResponseLimit]
//     suits StoreLink).
//   - No client built by [NewClient] or [NewClientWithResponses] follows a
//     redirect, with the default doer or an *http.Client of the caller's: a
//     3xx answer fails the call with a [RedirectError], so a store key never
//     travels to another address. (NewClient comes from our copy of the
//     generator's client template, client.tmpl.)
//   - [AllPOSTransactions] walks paginated point-of-sale transactions with a
//     page budget and a guard against a cursor that loops.
//
// A typical call:
//
//	c, err := storelinkclient.NewClientWithResponses(baseURL,
//		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
//	...
//	resp, err := c.GetInventoryWithResponse(ctx, "47",
//		&storelinkclient.GetInventoryParams{SKU: "8847291"}, storelinkclient.WithStoreKey(key))
//	inv, err := storelinkclient.Result(resp, err)
package storelinkclient

//go:generate env GOWORK=off go tool -modfile=../tools/go.mod oapi-codegen -config oapi-codegen.yaml ../openapi/storelink.yaml
