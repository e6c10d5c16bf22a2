//go:build !race

package tools

// fastArgsRace is set in builds with the race detector, whose allocations
// (and emptied sync.Pools) make allocation counts meaningless.
const fastArgsRace = false
