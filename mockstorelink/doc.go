// Package mockstorelink is a strict, deterministic stand-in for StoreLink,
// Korral's store-systems API, for tests, demos and contract work.
//
// The HTTP layer is generated from the StoreLink contract
// (openapi/storelink.yaml) into the internal package api, which must not be
// edited by hand. Around it the mock checks every request against the
// contract (a missing or unknown key is 401, a key for another store 403, a
// bad parameter 400, always with the contract's error body) and, unless
// turned off, checks its own responses too: a response that breaks the
// contract becomes a 500 and is recorded in [Server.Violations].
//
// The data comes from a small fixture world (see README.md) built from a
// seed and a clock: with a fixed clock every response is reproducible byte
// for byte; with the real clock the sales history moves with time.
// [Options.Stores] and [Options.SKUs] grow it to the chain's scale (180
// stores, 18,000 SKUs and more): the fixtures stay as they are and the
// generated stores and SKUs after them are derived from the seed when a
// request asks, so nothing of them is stored. Faults
// ([Fault]) make the mock slow, failing, rate limited or drifting from the
// contract on demand, from Go or from the admin endpoint.
package mockstorelink
