package storelinkclient_test

import (
	"encoding/json"
	"testing"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
)

func TestIsLocalDateTime(t *testing.T) {
	for s, want := range map[string]bool{
		"2026-12-02T14:30:00":            true,
		"2026-12-02T14:30:00.125":        true,
		"2026-12-02T14:30:00+01:00":      false,
		"2026-12-02T14:30:00Z":           false,
		"2026-12-02 14:30:00":            false,
		"2026-13-02T14:30:00":            false, // no month 13
		"2026-12-02":                     false,
		"T-47-2026-12-02T14:30:00":       false,
		"2026-12-02T14:30:00.1234567890": false,
	} {
		if got := sl.IsLocalDateTime(s); got != want {
			t.Errorf("IsLocalDateTime(%q) = %v, want %v", s, got, want)
		}
	}
}

func TestInZoneAcrossDaylightSaving(t *testing.T) {
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	wall := func(s string) time.Time {
		w, err := time.Parse("2006-01-02T15:04:05", s)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	for _, c := range []struct{ wall, want string }{
		{"2026-12-02T14:30:00", "2026-12-02T14:30:00+01:00"},
		{"2026-07-01T09:00:00", "2026-07-01T09:00:00+02:00"},
		// Autumn: 02:30 happens twice on 25 October 2026; the first, in
		// summer time, is taken.
		{"2026-10-25T02:30:00", "2026-10-25T02:30:00+02:00"},
		{"2026-10-25T03:00:00", "2026-10-25T03:00:00+01:00"},
		{"2026-10-25T01:59:59", "2026-10-25T01:59:59+02:00"},
		// Spring: 02:30 never happens on 29 March 2026; it is read with
		// the offset before the change, one hour on.
		{"2026-03-29T02:30:00", "2026-03-29T03:30:00+02:00"},
		{"2026-03-29T01:59:59", "2026-03-29T01:59:59+01:00"},
		{"2026-03-29T03:00:00", "2026-03-29T03:00:00+02:00"},
	} {
		got := sl.InZone(wall(c.wall), prague).Format(time.RFC3339)
		if got != c.want {
			t.Errorf("InZone(%s, Europe/Prague) = %s, want %s", c.wall, got, c.want)
		}
	}
	// Deterministic: the same answer every time, whatever time.Date does.
	for range 100 {
		if got := sl.InZone(wall("2026-10-25T02:30:00"), prague); !got.Equal(time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)) {
			t.Fatalf("repeated hour: %v", got)
		}
	}
}

func TestLocalizeTimestamps(t *testing.T) {
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	body := []byte(`{"store_id":"47","since":"2026-12-01T10:00:00","count":12345678901234567,` +
		`"transactions":[{"transaction_id":"T-1","timestamp":"2026-12-02T14:30:00.5","units":2},` +
		`{"transaction_id":"2026-12-02","timestamp":"2026-12-02T13:00:00+01:00","units":1}],"note":"<a&b>"}` + "\n")
	out, changed := sl.LocalizeTimestamps(body, prague)
	if !changed {
		t.Fatalf("nothing changed in %s", body)
	}
	var got map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if got["since"] != "2026-12-01T10:00:00+01:00" {
		t.Errorf("since: %v", got["since"])
	}
	lines := got["transactions"].([]any)
	if ts := lines[0].(map[string]any)["timestamp"]; ts != "2026-12-02T14:30:00.5+01:00" {
		t.Errorf("first line: %v", ts)
	}
	if ts := lines[1].(map[string]any)["timestamp"]; ts != "2026-12-02T13:00:00+01:00" {
		t.Errorf("a time with an offset is left as it is: %v", ts)
	}
	if id := lines[1].(map[string]any)["transaction_id"]; id != "2026-12-02" {
		t.Errorf("a date is not a date-time: %v", id)
	}
	if !json.Valid(out) || !containsAll(string(out), `12345678901234567`, `"<a&b>"`) {
		t.Errorf("numbers and text keep their form: %s", out)
	}
	// Nothing to change, or no JSON: the same bytes.
	for _, in := range []string{`{"counted_at":"2026-12-02T14:30:00+01:00"}`, `not json T`, `{"a":1}{"b":2}`} {
		if out, changed := sl.LocalizeTimestamps([]byte(in), prague); changed || string(out) != in {
			t.Errorf("%s: changed to %s", in, out)
		}
	}
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		found := false
		for i := 0; i+len(sub) <= len(s); i++ {
			if s[i:i+len(sub)] == sub {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}
