package storelinkclient_test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	sl "github.com/korral/storelink/storelinkclient"
)

// TestResultNamesEveryMissingField: the error Result returns lists them
// all, bounded in its text.
func TestResultNamesEveryMissingField(t *testing.T) {
	c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, 200, `{"storeId":"47","SKU":"1","onHand":5,"countedAt":"2026-11-27T06:00:00+01:00"}`)
	}))
	_, err := sl.Result(c.GetInventoryWithResponse(t.Context(), "47", &sl.GetInventoryParams{SKU: "1"}, sl.WithStoreKey(testKey)))
	var missing *sl.MissingFieldError
	if !errors.As(err, &missing) {
		t.Fatalf("error %v, want a MissingFieldError", err)
	}
	if missing.Field != "counted_at" || len(missing.Fields) != 4 || !strings.Contains(err.Error(), "and 1 more") {
		t.Errorf("got %+v (%v), want counted_at first of four", missing, err)
	}
}

// TestFailureWithForeignJSON: a failure whose body is JSON of another
// shape is told apart from one that is not JSON, and names its
// properties, never their values.
func TestFailureWithForeignJSON(t *testing.T) {
	for _, tc := range []struct {
		name, contentType, body string
		other                   bool
		props                   []string
	}{
		{"framework 404", "application/json", `{"detail":"Not Found","trace":"abc"}`, true, []string{"detail", "trace"}},
		{"an error without code", "application/json", `{"error":{"message":"boom"}}`, true, []string{"error"}},
		{"html", "text/html", `<html>Not Found</html>`, false, nil},
		{"empty", "", ``, false, nil},
		{"StoreLink's own", "application/json", `{"error":{"code":"not_found","message":"no such SKU"}}`, false, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(404)
				_, _ = w.Write([]byte(tc.body))
			}))
			_, err := sl.Result(c.GetInventoryWithResponse(t.Context(), "47", &sl.GetInventoryParams{SKU: "1"}, sl.WithStoreKey(testKey)))
			var apiErr *sl.APIError
			if !errors.As(err, &apiErr) {
				t.Fatalf("error %v, want an APIError", err)
			}
			if apiErr.OtherJSON != tc.other || !slices.Equal(apiErr.BodyProperties, tc.props) {
				t.Errorf("OtherJSON %v, BodyProperties %v; want %v, %v", apiErr.OtherJSON, apiErr.BodyProperties, tc.other, tc.props)
			}
			if strings.Contains(fmt.Sprint(apiErr.BodyProperties), "Not Found") {
				t.Error("a value of the body was kept")
			}
		})
	}
	// A body of many properties keeps ten names, each short.
	long := `{` + strings.Repeat(`"`+strings.Repeat("p", 100)+`":1,`, 1) + `"a":1,"b":1,"c":1,"d":1,"e":1,"f":1,"g":1,"h":1,"i":1,"j":1,"k":1}`
	c, _ := newServer(t, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { writeJSON(w, 404, long) }))
	_, err := sl.Result(c.GetInventoryWithResponse(t.Context(), "47", &sl.GetInventoryParams{SKU: "1"}, sl.WithStoreKey(testKey)))
	var apiErr *sl.APIError
	if !errors.As(err, &apiErr) || len(apiErr.BodyProperties) != 10 {
		t.Fatalf("error %v: want ten names", err)
	}
	for _, p := range apiErr.BodyProperties {
		if len(p) > 64 {
			t.Errorf("name of %d bytes kept", len(p))
		}
	}
}

// ExampleFieldProblems: a StoreLink that renamed minimum_order_units
// would read as a supplier without a minimum; the renamed property is a
// candidate, reported as such.
func ExampleFieldProblems() {
	body := []byte(`{"supplier_id":"SUP-MADETA","name":"Madeta a.s.","lead_time_days":2,"min_order_qty":12}`)
	for _, p := range sl.FieldProblems(body, &sl.Supplier{}) {
		fmt.Println(p)
	}
	// Output:
	// min_order_qty: not in the contract, minimum_order_units renamed?
}
