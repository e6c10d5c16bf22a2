//go:build race

package tools_test

// raceDetector is set in builds with the race detector, which allocates on
// its own account (and empties sync.Pools at random), so allocation counts
// mean nothing there.
const raceDetector = true
