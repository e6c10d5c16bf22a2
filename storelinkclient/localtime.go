package storelinkclient

import (
	"bytes"
	"encoding/json"
	"regexp"
	"time"
)

//go:generate env GOWORK=off go run ./internal/gentimestamps ../openapi/storelink.yaml timestamps.gen.go

// TimestampsExtension is the contract's declaration, under info, of how
// StoreLink writes its timestamps (ADR 0032). Its one value,
// TimestampsStoreLocal, says that a date-time without an offset is the
// store's local time. Without it every date-time carries an offset, as
// RFC 3339 requires.
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
// offset, and nothing else: the shape a StoreLink that stores naive
// timestamps sends.
func IsLocalDateTime(s string) bool {
	if !localDateTime.MatchString(s) {
		return false
	}
	_, err := time.Parse(localLayout, s)
	return err == nil
}

// InZone is the instant at which the wall clock in loc reads the date
// and time of wall (whose own location is ignored). A wall time that
// names two instants (the hour repeated when clocks go back) is the
// earlier one; a wall time that names none (the hour skipped when clocks
// go forward) is read with the offset in effect before the change, so
// 02:30 on the spring day in Europe/Prague is 03:30+02:00. This is the
// choice of RFC 5545 and of Python's fold=0, and it does not depend on
// how time.Date resolves the two cases, which Go leaves unspecified.
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

// LocalizeTimestamps rewrites every string of the JSON body that is a
// date-time without an offset (IsLocalDateTime) into RFC 3339 with the
// offset loc has at that time (InZone), and reports whether it changed
// anything. A body that is not JSON, or has no such string, is returned
// as it is. Numbers keep their text; the body's keys come back in sorted
// order.
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
