// Package contract checks that a running StoreLink honours its contract, the
// OpenAPI document embedded by package openapi.
//
// [Check] sends a bounded, rate-limited set of real requests ("probes") to a
// StoreLink deployment: positive reads with a store's own key, and the
// negative cases the contract defines (no key, another store's key, unknown
// ids, malformed parameters). Every response is validated with kin-openapi
// against the operation's declared responses: status, headers and body. The
// one write endpoint is probed only when the caller allows writes and names
// the store to write to.
//
// [Proxy] checks live traffic instead: it forwards each request to StoreLink
// and the answer back unchanged, and judges both by the same rules as
// Check, writing its findings as JSON lines.
//
// The result of Check is a [Report] that renders as a table for people and as JSON or
// JUnit XML for pipelines. Reports never contain store keys.
package contract
