//go:build !race

package upstream

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
