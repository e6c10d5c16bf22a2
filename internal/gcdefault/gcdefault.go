// Package gcdefault sets the garbage collector's start-up defaults of the
// storelink-mcp binaries (ADR 0045): a higher GC percent than the
// runtime's 100, and a soft memory limit, each only where the operator
// has not set GOGC or GOMEMLIMIT.
package gcdefault

import "runtime/debug"

// Percent is the GC percent set when GOGC is unset. The server's live heap
// is a few MB, so at the runtime's 100 a collection starts every few tool
// calls; at 400 the heap grows to five times the live heap between
// collections, a few MB more, and the collector runs a quarter as often.
const Percent = 400

// MemoryLimit is the soft memory limit, in bytes, set when GOMEMLIMIT is
// unset: past it the collector runs as often as it must, whatever Percent
// allows, so a burst (a 180-store sweep, many sessions at once) cannot
// grow the heap without bound.
const MemoryLimit = 256 << 20

// Applied is what Apply set; a zero field was left to the environment.
type Applied struct {
	Percent     int
	MemoryLimit int64
}

// Apply sets Percent unless getenv("GOGC") is non-empty, and MemoryLimit
// unless getenv("GOMEMLIMIT") is non-empty; the runtime has already read
// those variables at start-up, so an operator's value stays in force.
func Apply(getenv func(string) string) Applied {
	var a Applied
	if getenv("GOGC") == "" {
		debug.SetGCPercent(Percent)
		a.Percent = Percent
	}
	if getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(MemoryLimit)
		a.MemoryLimit = MemoryLimit
	}
	return a
}
