// Package mockstorelink is a strict, deterministic stand-in for StoreLink,
// Korral's store-systems API, for tests, demos and contract checks.
//
// It validates every request, and its own responses (violations become 500s,
// listed by [Server.Violations]). The data is a fixture world from a seed
// and a clock, optionally grown ([Options.Stores]); [Fault]s make it
// misbehave on demand.
package mockstorelink
