package storelinkclient

// ParseTime is parseTime, for the external tests.
var ParseTime = parseTime

// EstimateItems is estimateItems, for the external tests.
var EstimateItems = estimateItems

// PlainEnd is plainEnd, for the external tests.
var PlainEnd = plainEnd
