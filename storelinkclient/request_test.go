package storelinkclient_test

import (
	"context"
	"testing"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
)

// TestRequestsFollowTheServer: the builders reuse a parsed server URL
// only for the same server, and a request's URL does not change the next
// one's.
func TestRequestsFollowTheServer(t *testing.T) {
	limit := 5
	for _, c := range []struct{ server, want string }{
		{"http://a.example/base/", "http://a.example/base/v1/stores/47/pos?sku=1&since=2026-11-27T10%3A00%3A00Z&limit=5"},
		{"http://a.example/base/", "http://a.example/base/v1/stores/47/pos?sku=1&since=2026-11-27T10%3A00%3A00Z&limit=5"},
		{"https://b.example:8443", "https://b.example:8443/v1/stores/47/pos?sku=1&since=2026-11-27T10%3A00%3A00Z&limit=5"},
		{"http://a.example/base/", "http://a.example/base/v1/stores/47/pos?sku=1&since=2026-11-27T10%3A00%3A00Z&limit=5"},
	} {
		since, _ := time.Parse(time.RFC3339, "2026-11-27T10:00:00Z")
		req, err := sl.NewListPOSTransactionsRequest(c.server, "47", &sl.ListPOSTransactionsParams{SKU: "1", Since: since, Limit: &limit})
		if err != nil {
			t.Fatal(err)
		}
		if got := req.URL.String(); got != c.want {
			t.Errorf("%s: %s, want %s", c.server, got, c.want)
		}
		if req.Context() != context.Background() {
			t.Errorf("%s: the exported builder's request has another context", c.server)
		}
		req.URL.Path = "/changed"
	}
}
