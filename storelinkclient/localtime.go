package storelinkclient

import (
	"bytes"
	"encoding/json"
	"regexp"
	"time"
)

//go:generate env GOWORK=off go run ./internal/gentimestamps ../openapi/storelink.yaml timestamps.gen.go

// TimestampsExtension is the contract's info extension saying how
// StoreLink writes timestamps (ADR 0032); TimestampsStoreLocal means a
// date-time without offset is store-local.
const TimestampsExtension = "x-korral-timestamps"

// TimestampsStoreLocal is the value of TimestampsExtension that reads a
// date-time without an offset in the store's timezone.
const TimestampsStoreLocal = "store-local"

// localLayout is a date-time without an offset, to the nanosecond.
const localLayout = "2006-01-02T15:04:05.999999999"

// localDateTime matches the whole of a date-time without an offset:
// "2026-12-02T14:30:00", with an optional fraction of a second.
var localDateTime = regexp.MustCompile(`^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(\.[0-9]{1,9})?$`)

// IsLocalDateTime reports whether s is a valid date-time without an
// offset.
func IsLocalDateTime(s string) bool {
	if !localDateTime.MatchString(s) {
		return false
	}
	_, err := time.Parse(localLayout, s)
	return err == nil
}

// InZone is the instant at which the wall clock in loc reads wall's date
// and time. A repeated hour is the earlier instant; a skipped hour uses the
// offset before the change (02:30 becomes 03:30+02:00), as RFC 5545 does.
func InZone(wall time.Time, loc *time.Location) time.Time {
	w := time.Date(wall.Year(), wall.Month(), wall.Day(), wall.Hour(), wall.Minute(), wall.Second(), wall.Nanosecond(), time.UTC)
	_, before := w.Add(-24 * time.Hour).In(loc).Zone()
	_, at := w.In(loc).Zone()
	_, after := w.Add(24 * time.Hour).In(loc).Zone()
	var best time.Time
	for _, off := range []int{before, at, after} {
		t := w.Add(-time.Duration(off) * time.Second).In(loc)
		y, mo, d := t.Date()
		if y != w.Year() || mo != w.Month() || d != w.Day() || t.Hour() != w.Hour() || t.Minute() != w.Minute() || t.Second() != w.Second() {
			continue // the offset does not give this wall time
		}
		if best.IsZero() || t.Before(best) {
			best = t
		}
	}
	if best.IsZero() {
		// In the gap: the offset before the change.
		best = w.Add(-time.Duration(before) * time.Second).In(loc)
	}
	return best
}

// LocalizeTimestamps rewrites every local date-time string of the JSON body
// into RFC 3339 in loc (InZone) and reports whether it changed anything.
// Other bodies are returned as they are; keys come back sorted.
func LocalizeTimestamps(body []byte, loc *time.Location) ([]byte, bool) {
	if loc == nil || !bytes.Contains(body, []byte("T")) {
		return body, false
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil || dec.More() {
		return body, false
	}
	changed := false
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case string:
			if IsLocalDateTime(t) {
				wall, _ := time.Parse(localLayout, t)
				changed = true
				return InZone(wall, loc).Format(time.RFC3339Nano)
			}
		}
		return v
	}
	doc = walk(doc)
	if !changed {
		return body, false
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if enc.Encode(doc) != nil {
		return body, false
	}
	return out.Bytes(), true
}
