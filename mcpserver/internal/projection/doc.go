// Package projection answers the buyer's question "will this SKU run out,
// and can a delivery beat it?" from on-hand, point-of-sale history, the
// store's opening hours and the supplier's lead time.
//
// It is pure and deterministic: no I/O, no clock (Input.Now is the present),
// and the same input always yields the same Result, so the agent relays one
// reproducible answer instead of redoing arithmetic in context. The sell rate
// is per trading hour in the store's timezone and is reported as a band; the
// stockout is a window with a confidence from explicit rules, data-quality
// flags and a one-sentence caveat. On thin data it refuses to guess. The
// statistic, the rules and every threshold are recorded in
// docs/decisions/0004-stockout-projection.md.
package projection
