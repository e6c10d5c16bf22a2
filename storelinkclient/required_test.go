package storelinkclient

import (
	"errors"
	"testing"
)

// TestMissingRequiredField: a field the contract requires is missing at
// the top, inside an object or inside an array item; optional fields may
// be absent.
func TestMissingRequiredField(t *testing.T) {
	day := `{"closed":false,"opens":"07:00","closes":"22:00"}`
	week := `{"monday":` + day + `,"tuesday":` + day + `,"wednesday":` + day + `,"thursday":` + day + `,"friday":` + day + `,"saturday":` + day + `,"sunday":{"closed":true}}`
	for name, tc := range map[string]struct {
		body string
		v    any
		want string
	}{
		"complete":            {`{"store_id":"47","sku":"1","on_hand_units":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{}, ""},
		"renamed":             {`{"store_id":"47","sku":"1","on_hand":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{}, "on_hand_units"},
		"nested":              {`{"store_id":"47","name":"P","timezone":"Europe/Prague","opening_hours":` + week[:len(week)-len(`,"sunday":{"closed":true}}`)] + `,"sunday":{}}}`, &Store{}, "opening_hours.sunday.closed"},
		"optional absent":     {`{"store_id":"47","name":"P","timezone":"Europe/Prague","opening_hours":` + week + `}`, &Store{}, ""},
		"in an array":         {`{"store_id":"47","sku":"1","since":"2026-11-27T06:00:00+01:00","total_count":1,"transactions":[{"transaction_id":"T","units":1}]}`, &POSPage{}, "transactions.0.timestamp"},
		"not an object":       {`[]`, &Inventory{}, ""},
		"not JSON is another": {`{`, &Inventory{}, ""},
	} {
		if got := missingField([]byte(tc.body), tc.v); got != tc.want {
			t.Errorf("%s: missing %q, want %q", name, got, tc.want)
		}
	}
	err := error(&MissingFieldError{Field: "on_hand_units"})
	if !errors.Is(err, ErrMalformedResponse) {
		t.Error("a missing field is not a malformed response")
	}
}
