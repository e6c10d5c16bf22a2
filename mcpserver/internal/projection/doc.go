// Package projection answers "will this SKU run out, and can a delivery
// arrive first?" from on-hand, sales history, opening hours and lead time.
// It is pure: no I/O and no clock, and the same Input gives the same Result.
// On thin data it declines to estimate. Rules and thresholds: ADR 0004.
package projection
