// Package mockstorelink is a strict, deterministic stand-in for StoreLink,
// Korral's store-systems API, for tests, demos and contract checks.
//
// Its HTTP layer is generated from openapi/storelink.yaml into internal/api.
// It checks every request against the contract and, unless turned off, its
// own responses too (a response that breaks the contract becomes a 500 and
// is listed by [Server.Violations]). The data is a fixture world built from
// a seed and a clock (see README.md); [Options.Stores] and [Options.SKUs]
// add generated stores and SKUs, computed on request. [Fault]s make it slow,
// failing, rate limited or off-contract on demand.
package mockstorelink
