// Package contract checks that a running StoreLink honours its contract,
// the OpenAPI document embedded by package openapi.
//
// [Check] sends a bounded, rate-limited set of requests and validates every
// answer against the contract and the semantic rules; it sends the one
// write only when the caller allows writes and names the store. [Proxy]
// checks live traffic by the same rules. [Suggest] turns the findings into
// a proposed change of the contract. Reports never contain store keys.
package contract
