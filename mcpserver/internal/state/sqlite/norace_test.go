//go:build !race

package sqlite

// raceEnabled: the tests run under the race detector.
const raceEnabled = false
