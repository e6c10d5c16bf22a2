package mockstorelink_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/korral/storelink/mockstorelink"
)

// TestQuantityIs400Or422ByTheContractsSplit: a schema-invalid quantity is
// 400, below the supplier minimum 422, at the minimum raised.
func TestQuantityIs400Or422ByTheContractsSplit(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	k47 := m.Server.Keys()[mockstorelink.StoreSmichov]
	cases := []struct {
		sku    string
		qty    int64
		status int
		code   string
	}{
		{mockstorelink.SKUMinimumOrder, 0, http.StatusBadRequest, "invalid_body"},
		{mockstorelink.SKUMinimumOrder, -5, http.StatusBadRequest, "invalid_body"},
		{mockstorelink.SKUMinimumOrder, 100001, http.StatusBadRequest, "invalid_body"},
		{mockstorelink.SKUMinimumOrder, 1, http.StatusUnprocessableEntity, "below_minimum_order"},
		{mockstorelink.SKUMinimumOrder, mockstorelink.MinimumOrderUnits - 1, http.StatusUnprocessableEntity, "below_minimum_order"},
		{mockstorelink.SKUMinimumOrder, mockstorelink.MinimumOrderUnits, http.StatusCreated, ""},
		{mockstorelink.SKUButter, 0, http.StatusBadRequest, "invalid_body"},
		{mockstorelink.SKUButter, 1, http.StatusCreated, ""},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s/%d", tc.sku, tc.qty), func(t *testing.T) {
			before := len(m.Server.Orders())
			body := fmt.Sprintf(`{"sku":%q,"quantity_units":%d,"reason":"split"}`, tc.sku, tc.qty)
			status, _, b := rawDo(t, http.MethodPost, m.URL+"/v1/stores/47/replenishment", k47, strings.NewReader(body))
			if status != tc.status {
				t.Fatalf("status %d, want %d; body %s", status, tc.status, b)
			}
			raised := len(m.Server.Orders()) - before
			if tc.code != "" {
				if got := errorCode(t, b); got != tc.code {
					t.Errorf("code %q, want %q", got, tc.code)
				}
				if raised != 0 {
					t.Errorf("a refused order raised %d order(s)", raised)
				}
			} else if raised != 1 {
				t.Errorf("%d orders raised, want 1", raised)
			}
		})
	}
}
