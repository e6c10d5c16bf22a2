// Package api is the mock StoreLink's HTTP layer, generated from
// openapi/storelink.yaml into storelink.gen.go (do not edit). Package
// mockstorelink implements [StrictServerInterface].
package api

//go:generate env GOWORK=off go tool -modfile=../../../tools/go.mod oapi-codegen -config oapi-codegen.yaml ../../../openapi/storelink.yaml
