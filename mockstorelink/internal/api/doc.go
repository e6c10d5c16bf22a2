// Package api is the HTTP layer of the mock StoreLink, generated from the
// StoreLink contract (openapi/storelink.yaml) into storelink.gen.go, which
// must not be edited by hand: the contract's models, the strict server
// interface and its plumbing. The hand-written server in package
// mockstorelink implements [StrictServerInterface].
package api

//go:generate env GOWORK=off go tool -modfile=../../../tools/go.mod oapi-codegen -config oapi-codegen.yaml ../../../openapi/storelink.yaml
