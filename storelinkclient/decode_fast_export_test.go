package storelinkclient

import "time"

// ParseTime is parseTime with a new look-up of the local zone, for the
// external tests.
func ParseTime(b []byte) (time.Time, bool) { return parseTime(b, &localZone{}) }

// TimeReader is parseTime with one look-up of the local zone kept across
// calls, as one decode keeps it.
func TimeReader() func([]byte) (time.Time, bool) {
	var z localZone
	return func(b []byte) (time.Time, bool) { return parseTime(b, &z) }
}

// EstimateItems is estimateItems, for the external tests.
var EstimateItems = estimateItems

// PlainEnd is plainEnd, for the external tests.
var PlainEnd = plainEnd
