// Package projection answers "will this SKU run out, and can a delivery
// arrive first?" from on-hand, point-of-sale history, opening hours and the
// supplier's lead time.
//
// It is pure: no I/O and no clock (Input.Now is the present), and the same
// Input always gives the same Result. On thin data it refuses to guess. The
// statistic, the rules and the thresholds are in ADR 0004
// (docs/decisions/0004-stockout-projection.md).
package projection
