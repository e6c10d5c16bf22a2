package mockstorelink_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/korral/storelink/mockstorelink"
)

// BenchmarkServe measures one request through routing, auth, request and
// response validation and the handler, without the network.
func BenchmarkServe(b *testing.B) {
	for _, bc := range []struct {
		name     string
		path     string
		validate bool
	}{
		{"inventory", inventoryPath, true},
		{"pos-200", "/v1/stores/47/pos?sku=8800505&since=2026-10-30T14:30:00%2B01:00", true},
		{"pos-200-unvalidated", "/v1/stores/47/pos?sku=8800505&since=2026-10-30T14:30:00%2B01:00", false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, err := mockstorelink.New(mockstorelink.Options{Now: mockstorelink.DefaultNow, NoResponseValidation: !bc.validate})
			if err != nil {
				b.Fatal(err)
			}
			k := s.Keys()["47"]
			for b.Loop() {
				req := httptest.NewRequest(http.MethodGet, bc.path, nil)
				req.Header.Set(mockstorelink.StoreKeyHeader, k)
				rec := httptest.NewRecorder()
				s.ServeHTTP(rec, req)
				if rec.Code != 200 {
					b.Fatalf("status %d: %s", rec.Code, rec.Body)
				}
			}
		})
	}
}
