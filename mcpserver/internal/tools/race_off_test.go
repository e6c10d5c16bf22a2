//go:build !race

package tools_test

// raceDetector is set in builds with the race detector (race_on_test.go).
const raceDetector = false
