// Package storelinkclient is a typed Go client for Korral's StoreLink API.
//
// The types and the Client in storelink.gen.go are generated from the StoreLink
// contract (openapi/storelink.yaml) and must not be edited by hand. The
// hand-written files beside them add what the contract cannot say: the store
// key option ([WithStoreKey]), typed errors ([APIError], [CheckResponse]) that
// also catch StoreLink's habit of answering 200 with an error body, and a
// bounded walk over paginated point-of-sale transactions ([AllPOSTransactions]).
package storelinkclient

//go:generate env GOWORK=off go tool -modfile=../tools/go.mod oapi-codegen -config oapi-codegen.yaml ../openapi/storelink.yaml
