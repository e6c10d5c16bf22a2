package storelinkclient

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
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
		want []string
	}{
		"complete":            {`{"store_id":"47","sku":"1","on_hand_units":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{}, nil},
		"renamed":             {`{"store_id":"47","sku":"1","on_hand":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{}, []string{"on_hand_units"}},
		"nested":              {`{"store_id":"47","name":"P","timezone":"Europe/Prague","opening_hours":` + week[:len(week)-len(`,"sunday":{"closed":true}}`)] + `,"sunday":{}}}`, &Store{}, []string{"opening_hours.sunday.closed"}},
		"optional absent":     {`{"store_id":"47","name":"P","timezone":"Europe/Prague","opening_hours":` + week + `}`, &Store{}, nil},
		"in an array":         {`{"store_id":"47","sku":"1","since":"2026-11-27T06:00:00+01:00","total_count":1,"transactions":[{"transaction_id":"T","units":1}]}`, &POSPage{}, []string{"transactions.0.timestamp"}},
		"not an object":       {`[]`, &Inventory{}, nil},
		"not JSON is another": {`{`, &Inventory{}, nil},
		// Every missing field, in the type's order, not only the first.
		"four renamed": {`{"storeId":"47","SKU":"1","onHand":5,"countedAt":"2026-11-27T06:00:00+01:00"}`, &Inventory{},
			[]string{"counted_at", "on_hand_units", "sku", "store_id"}},
		// An array names a field at the first item that lacks it, once.
		"every line": {`{"store_id":"47","sku":"1","since":"2026-11-27T06:00:00+01:00","total_count":3,"transactions":[` +
			`{"transaction_id":"T1","units":1},{"transaction_id":"T2","units":1},{"transaction_id":"T3"}]}`, &POSPage{},
			[]string{"transactions.0.timestamp", "transactions.2.units"}},
	} {
		if diff := cmp.Diff(tc.want, missing(FieldProblems([]byte(tc.body), tc.v))); diff != "" {
			t.Errorf("%s: missing (-want +got):\n%s", name, diff)
		}
	}
	err := error(&MissingFieldError{Field: "on_hand_units"})
	if !errors.Is(err, ErrMalformedResponse) {
		t.Error("a missing field is not a malformed response")
	}
}

// TestMissingFieldErrorNamesEveryField, bounded: three names and a count.
func TestMissingFieldErrorNamesEveryField(t *testing.T) {
	for _, tc := range []struct {
		err  MissingFieldError
		want string
	}{
		{MissingFieldError{Field: "sku"}, "storelink: required field sku is missing"},
		{MissingFieldError{Field: "sku", Fields: []string{"sku"}}, "storelink: required field sku is missing"},
		{MissingFieldError{Field: "a", Fields: []string{"a", "b", "c"}}, "storelink: required fields a, b, c are missing"},
		{MissingFieldError{Field: "a", Fields: []string{"a", "b", "c", "d", "e"}}, "storelink: required fields a, b, c and 2 more are missing"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

// TestFieldProblems: unknown properties, and rename candidates where an
// unknown property has an absent declared neighbour of a compatible type.
func TestFieldProblems(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		v    any
		want []FieldProblem
	}{
		"conformant": {`{"supplier_id":"S","name":"N","lead_time_days":2,"minimum_order_units":12}`, &Supplier{}, nil},
		// The issue: an optional minimum under another name.
		"renamed optional": {`{"supplier_id":"S","name":"N","lead_time_days":2,"min_order_qty":12}`, &Supplier{},
			[]FieldProblem{{Field: "min_order_qty", Kind: FieldRenamed, Renamed: "minimum_order_units"}}},
		// A string cannot be the minimum, but may be the cut-off.
		"type decides": {`{"supplier_id":"S","name":"N","lead_time_days":2,"cutoff":"14:00"}`, &Supplier{},
			[]FieldProblem{{Field: "cutoff", Kind: FieldRenamed, Renamed: "order_cutoff_local"}}},
		// Beside every declared property: merely unknown (an addition).
		"additive": {`{"supplier_id":"S","name":"N","lead_time_days":2,"minimum_order_units":12,"order_cutoff_local":"14:00","rating":5}`, &Supplier{},
			[]FieldProblem{{Field: "rating", Kind: FieldUnknown}}},
		// An object is no integer: unknown, not a candidate.
		"incompatible": {`{"supplier_id":"S","name":"N","lead_time_days":2,"order_cutoff_local":"14:00","terms":{"min":12}}`, &Supplier{},
			[]FieldProblem{{Field: "terms", Kind: FieldUnknown}}},
		"fraction is no integer": {`{"supplier_id":"S","name":"N","lead_time_days":2,"order_cutoff_local":"14:00","min_order_qty":1.5}`, &Supplier{},
			[]FieldProblem{{Field: "min_order_qty", Kind: FieldUnknown}}},
		"null may be anything": {`{"supplier_id":"S","name":"N","lead_time_days":2,"order_cutoff_local":"14:00","min_order_qty":null}`, &Supplier{},
			[]FieldProblem{{Field: "min_order_qty", Kind: FieldRenamed, Renamed: "minimum_order_units"}}},
		// A required field renamed: missing, and the candidate beside it.
		"renamed required": {`{"store_id":"47","sku":"1","on_hand":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{},
			[]FieldProblem{{Field: "on_hand_units", Kind: FieldMissing}, {Field: "on_hand", Kind: FieldRenamed, Renamed: "on_hand_units"}}},
		// Inside array items, once per problem, at the first item with it.
		"in lines": {`{"store_id":"47","sku":"1","since":"2026-11-27T06:00:00+01:00","total_count":2,"transactions":[` +
			`{"transaction_id":"T1","units":1,"timestamp":"2026-11-27T07:00:00+01:00","till":3},` +
			`{"transaction_id":"T2","units":1,"timestamp":"2026-11-27T07:00:00+01:00","till":4}]}`, &POSPage{},
			[]FieldProblem{{Field: "transactions.0.till", Kind: FieldUnknown}}},
		"nested candidate": {`{"sku":"1","name":"B","category":"dairy","supplier_id":"S","unit":"piece","case_pack":12,"chilled":true,"shelf_life":30}`, &SKU{},
			[]FieldProblem{{Field: "shelf_life", Kind: FieldRenamed, Renamed: "shelf_life_days"}}},
		"two candidates": {`{"supplier_id":"S","name":"N","lead_time_days":2,"x":"14:00","y":"15:00"}`, &Supplier{},
			[]FieldProblem{{Field: "x", Kind: FieldRenamed, Renamed: "order_cutoff_local"}, {Field: "y", Kind: FieldRenamed, Renamed: "order_cutoff_local"}}},
		// Several of one type: the one sharing a word with the name.
		"words decide": {`{"order_id":"R1","store_id":"47","sku":"1","quantity":12,"reason":"r","status":"submitted",` +
			`"created_at":"2026-11-27T06:00:00+01:00","expected_delivery":"2026-11-29T06:00:00+01:00"}`, &Order{},
			[]FieldProblem{{Field: "expected_arrival", Kind: FieldMissing}, {Field: "quantity_units", Kind: FieldMissing}, {Field: "submitted_at", Kind: FieldMissing},
				{Field: "created_at", Kind: FieldRenamed, Renamed: "submitted_at"}, {Field: "expected_delivery", Kind: FieldRenamed, Renamed: "expected_arrival"},
				{Field: "quantity", Kind: FieldRenamed, Renamed: "quantity_units"}}},
		"not JSON": {`<html>`, &Supplier{}, nil},
		// Another spelling of an absent name is its one candidate.
		"spelling": {`{"storeId":"47","SKU":"1","on_hand_units":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{},
			[]FieldProblem{{Field: "sku", Kind: FieldMissing}, {Field: "store_id", Kind: FieldMissing},
				{Field: "SKU", Kind: FieldRenamed, Renamed: "sku"}, {Field: "storeId", Kind: FieldRenamed, Renamed: "store_id"}}},
	} {
		if diff := cmp.Diff(tc.want, FieldProblems([]byte(tc.body), tc.v)); diff != "" {
			t.Errorf("%s: problems (-want +got):\n%s", name, diff)
		}
	}
	got := UnknownFields([]byte(`{"supplier_id":"S","name":"N","lead_time_days":2,"x":"14:00","y":"15:00","z":{}}`), &Supplier{})
	if !slices.Equal(got, []string{"x", "y", "z"}) {
		t.Errorf("UnknownFields = %v, want x, y, z", got)
	}
	for _, p := range []FieldProblem{
		{Field: "a", Kind: FieldMissing}, {Field: "b", Kind: FieldUnknown}, {Field: "c", Kind: FieldRenamed, Renamed: "d"},
	} {
		if !strings.HasPrefix(p.String(), p.Field+": ") || (p.Kind == FieldRenamed && !strings.Contains(p.String(), "d renamed?")) {
			t.Errorf("String() = %q", p.String())
		}
	}
}
