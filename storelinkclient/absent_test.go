package storelinkclient

import (
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestBodyFieldsFindsTheAbsent: every absent declared property is listed
// in every array item, not inside an absent object; null is a value.
func TestBodyFieldsFindsTheAbsent(t *testing.T) {
	for name, tc := range map[string]struct {
		body string
		v    any
		want []string
	}{
		"whole": {`{"supplier_id":"S","name":"N","lead_time_days":2,"minimum_order_units":12,"order_cutoff_local":"14:00"}`, &Supplier{}, []string{}},
		"optional and required": {`{"supplier_id":"S","name":"N"}`, &Supplier{},
			[]string{"/lead_time_days", "/minimum_order_units", "/order_cutoff_local"}},
		"renamed":      {`{"store_id":"47","sku":"1","on_hand":5,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{}, []string{"/on_hand_units"}},
		"null is sent": {`{"store_id":"47","sku":"1","on_hand_units":null,"counted_at":"2026-11-27T06:00:00+01:00"}`, &Inventory{}, []string{}},
		"every line": {`{"store_id":"47","sku":"1","since":"2026-11-27T06:00:00+01:00","total_count":3,"next_cursor":"c","transactions":[` +
			`{"transaction_id":"T1","timestamp":"2026-11-27T07:00:00+01:00"},` +
			`{"transaction_id":"T2","units":1,"timestamp":"2026-11-27T07:00:00+01:00"},` +
			`{"transaction_id":"T3"}]}`, &POSPage{},
			[]string{"/transactions/0/units", "/transactions/2/timestamp", "/transactions/2/units"}},
		"a whole object": {`{"store_id":"47","name":"N","timezone":"Europe/Prague"}`, &Store{}, []string{"/opening_hours"}},
		"inside an object": {`{"store_id":"47","name":"N","timezone":"Europe/Prague","opening_hours":{` +
			`"monday":{"closed":false,"opens":"07:00"},"tuesday":{"opens":"07:00","closes":"20:00"},` +
			`"wednesday":{"closed":true},"thursday":{"closed":true},"friday":{"closed":true},"saturday":{"closed":true}}}`, &Store{},
			[]string{"/opening_hours/friday/closes", "/opening_hours/friday/opens", "/opening_hours/monday/closes",
				"/opening_hours/saturday/closes", "/opening_hours/saturday/opens", "/opening_hours/sunday",
				"/opening_hours/thursday/closes", "/opening_hours/thursday/opens", "/opening_hours/tuesday/closed",
				"/opening_hours/wednesday/closes", "/opening_hours/wednesday/opens"}},
		"not JSON": {`{"store_id":`, &Inventory{}, []string{}},
	} {
		t.Run(name, func(t *testing.T) {
			got := BodyFields([]byte(tc.body), tc.v).Absent
			if diff := cmp.Diff(tc.want, got.Pointers()); diff != "" {
				t.Errorf("absent (-want +got):\n%s", diff)
			}
			if got.Len() != len(tc.want) {
				t.Errorf("Len %d, want %d", got.Len(), len(tc.want))
			}
		})
	}
}

func TestAbsentHas(t *testing.T) {
	a := NewAbsent("/opening_hours", "/transactions/2/units", "/a~1b")
	for ptr, want := range map[string]bool{
		"/opening_hours":                   true,
		"/opening_hours/monday":            true,
		"/opening_hours/monday/opens":      true,
		"/opening_hours_extra":             false,
		"/transactions/2/units":            true,
		"/transactions/2":                  false,
		"/transactions/2/timestamp":        false,
		"/transactions/20/units":           false,
		"/transactions":                    false,
		"/a~1b":                            true,
		"/a":                               false,
		"":                                 false,
		"opening_hours":                    false,
		"/transactions/2/units/not-a-leaf": true,
	} {
		if got := a.Has(ptr); got != want {
			t.Errorf("Has(%q) = %v, want %v", ptr, got, want)
		}
	}
	for ptr, want := range map[string]bool{
		"/transactions":          true,
		"/transactions/2":        true,
		"/transactions/1":        false,
		"/opening_hours/monday":  true,
		"/store_id":              false,
		"/transactions/2/units":  true,
		"/transactions/2/unitsx": false,
	} {
		if got := a.Within(ptr); got != want {
			t.Errorf("Within(%q) = %v, want %v", ptr, got, want)
		}
	}
	var none Absent
	if none.Has("/x") || none.Within("") || none.Len() != 0 || len(none.Pointers()) != 0 {
		t.Error("the zero Absent is not empty")
	}
}

// TestResultWithFields: the absent fields come with the value, and with
// the missing-field error.
func TestResultWithFields(t *testing.T) {
	resp := func(body string) *GetSupplierResponse {
		r := &GetSupplierResponse{Body: []byte(body), HTTPResponse: &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"application/json"}}}}
		r.JSON200 = &Supplier{}
		return r
	}
	v, f, err := ResultWithFields(resp(`{"supplier_id":"S","name":"N","lead_time_days":2}`), nil)
	if err != nil || v == nil || !slices.Equal(f.Absent.Pointers(), []string{"/minimum_order_units", "/order_cutoff_local"}) || f.Problems != nil {
		t.Errorf("ResultWithFields = %v, %+v, %v", v, f, err)
	}
	_, f, err = ResultWithFields(resp(`{"supplier_id":"S","name":"N","minimum_order_units":12,"order_cutoff_local":"14:00"}`), nil)
	if err == nil || !slices.Equal(f.Absent.Pointers(), []string{"/lead_time_days"}) || len(f.Problems) != 1 {
		t.Errorf("a missing lead time: %+v, %v", f, err)
	}
}
