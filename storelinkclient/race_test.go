//go:build race

package storelinkclient_test

// raceEnabled: the tests run under the race detector.
const raceEnabled = true
