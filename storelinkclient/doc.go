// Package storelinkclient is a typed Go client for Korral's StoreLink API.
// It imports no other module of this repository.
//
//	c, err := storelinkclient.NewClientWithResponses(baseURL,
//		storelinkclient.WithKeyring(map[storelinkclient.StoreID]string{"47": key47, "55": key55}),
//		storelinkclient.WithChainKey(key47),
//		storelinkclient.WithResponseLimit(storelinkclient.DefaultResponseLimit))
//	...
//	inv, err := storelinkclient.Result(c.GetInventoryWithResponse(ctx, "47",
//		&storelinkclient.GetInventoryParams{SKU: "8847291"}))
//
// A store key opens its own store plus the chain-wide reads. [WithKeyring]
// and [WithStoreKeys] pick each request's key from the store in its path,
// [WithChainKey] the key of chain-wide reads; a request without a key fails
// with [*MissingKeyError] before it is sent. No error repeats a key.
// Clients refuse redirects and, with [WithResponseLimit], bound response
// bodies. [Result] turns a *WithResponse result into its typed body or an
// error. storelink.gen.go and timestamps.gen.go are generated from
// openapi/storelink.yaml; do not edit them.
package storelinkclient

//go:generate env GOWORK=off go tool -modfile=../tools/go.mod oapi-codegen -config oapi-codegen.yaml ../openapi/storelink.yaml
