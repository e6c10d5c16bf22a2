package upstream

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
)

func TestClassifyTable(t *testing.T) {
	cases := []struct {
		name    string
		status  int
		body    string
		header  map[string]string
		post    bool
		want    apperr.Code
		wantRA  int
		timeout bool
	}{
		{name: "400", status: 400, body: errorBody("invalid_parameter"), want: apperr.InvalidArgument},
		{name: "401", status: 401, body: errorBody("invalid_key"), want: apperr.AuthKeyInvalid},
		{name: "403", status: 403, body: errorBody("store_forbidden"), want: apperr.StoreNotAuthorized},
		{name: "404", status: 404, body: errorBody("not_found"), want: apperr.NotFound},
		{name: "422", status: 422, body: errorBody("below_minimum_order"), post: true, want: apperr.UpstreamRejected},
		{name: "429", status: 429, body: errorBody("rate_limited"), header: map[string]string{"Retry-After": "17"}, want: apperr.RateLimited, wantRA: 17},
		{name: "500 read", status: 500, body: errorBody("internal"), want: apperr.UpstreamUnavailable},
		{name: "503 html read", status: 503, body: "<html>down</html>", header: map[string]string{"Content-Type": "text/html"}, want: apperr.UpstreamUnavailable},
		{name: "500 write", status: 500, body: errorBody("internal"), post: true, want: apperr.WriteOutcomeUnknown},
		{name: "200 with error body", status: 200, body: errorBody("internal"), want: apperr.UpstreamContractError},
		{name: "malformed 200", status: 200, body: `{"store_id":`, want: apperr.UpstreamContractError},
		{name: "undeclared status", status: 418, body: errorBody("teapot"), want: apperr.UpstreamContractError},
		{name: "201 unreadable write", status: 201, body: `{"order_id":`, post: true, want: apperr.WriteOutcomeUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newClient(t, answering(t, tc.status, tc.header, tc.body), keys47(), nil)
			var err error
			if tc.post {
				_, err = c.CreateOrder(context.Background(), "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 10, Reason: "r"})
			} else {
				_, err = c.Inventory(context.Background(), "47", "8847291")
			}
			var ae *apperr.Error
			if !errors.As(err, &ae) {
				t.Fatalf("error %v is not an *apperr.Error", err)
			}
			if ae.Code != tc.want {
				t.Fatalf("code = %s, want %s (%v)", ae.Code, tc.want, err)
			}
			if ae.RetryAfterSeconds != tc.wantRA {
				t.Errorf("retry after = %d, want %d", ae.RetryAfterSeconds, tc.wantRA)
			}
			if ae.Remediation == "" {
				t.Error("no remediation")
			}
		})
	}
}

// TestWriteReach: every failed order is classified once by what reached
// StoreLink, which is what decides whether the ledger may let it go again.
func TestWriteReach(t *testing.T) {
	cases := []struct {
		name   string
		status int
		body   string
		header map[string]string
		want   apperr.Reach
		inMsg  string
	}{
		{name: "400", status: 400, body: errorBody("invalid_parameter"), want: apperr.ReachRejected},
		{name: "401", status: 401, body: errorBody("invalid_key"), want: apperr.ReachNotSent},
		{name: "403", status: 403, body: errorBody("store_forbidden"), want: apperr.ReachRejected},
		{name: "404", status: 404, body: errorBody("not_found"), want: apperr.ReachRejected},
		{name: "422", status: 422, body: `{"error":{"code":"below_minimum_order","message":"the supplier's minimum order is 48 units"}}`,
			want: apperr.ReachRejected, inMsg: "minimum order is 48 units"},
		{name: "429", status: 429, body: errorBody("rate_limited"), header: map[string]string{"Retry-After": "9"}, want: apperr.ReachNotSent},
		{name: "500", status: 500, body: errorBody("internal"), want: apperr.ReachUnknown},
		{name: "200 with error body", status: 200, body: errorBody("internal"), want: apperr.ReachUnknown},
		{name: "undeclared status", status: 418, body: errorBody("teapot"), want: apperr.ReachUnknown},
		{name: "201 unreadable", status: 201, body: `{"order_id":`, want: apperr.ReachUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newClient(t, answering(t, tc.status, tc.header, tc.body), keys47(), nil)
			_, err := c.CreateOrder(context.Background(), "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 10, Reason: "r"})
			ae := apperr.From(err)
			if ae.Reach != tc.want {
				t.Errorf("reach = %d, want %d (%v)", ae.Reach, tc.want, err)
			}
			if !strings.Contains(ae.Message, tc.inMsg) {
				t.Errorf("message %q lacks %q", ae.Message, tc.inMsg)
			}
		})
	}
	// Nothing leaves the process: a refused connection, the open breaker, a
	// store without a key.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	url := srv.URL
	srv.Close()
	c, _ := newClient(t, url, &fakeKeys{current: map[string]string{"47": "k47"}}, func(o *Options) { o.BreakerFailures = 1 })
	for i, want := range []apperr.Code{apperr.UpstreamUnavailable, apperr.UpstreamUnavailable} {
		_, err := c.CreateOrder(context.Background(), "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 10, Reason: "r"})
		if ae := apperr.From(err); ae.Code != want || ae.Reach != apperr.ReachNotSent {
			t.Errorf("attempt %d (breaker %s): %v reach %d, want %s not sent", i, c.BreakerState(), err, ae.Reach, want)
		}
	}
	if c.BreakerState() != "open" {
		t.Fatalf("breaker %s, want open", c.BreakerState())
	}
	_, err := c.CreateOrder(context.Background(), "55", domain.OrderRequest{SKU: "8847291", QuantityUnits: 10, Reason: "r"})
	if ae := apperr.From(err); ae.Code != apperr.StoreNotAuthorized || ae.Reach != apperr.ReachNotSent {
		t.Errorf("store without a key: %v reach %d", err, ae.Reach)
	}
}

// TestErrorsNameTheThing: a 404 names the SKU, order or supplier and the
// store it was asked at, never the route; a key refusal names the store.
func TestErrorsNameTheThing(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name   string
		status int
		call   func(c *Client) error
		want   string
	}{
		{"inventory 404", 404, func(c *Client) error { _, err := c.Inventory(ctx, "47", "9999999"); return err },
			"StoreLink has no SKU 9999999 at store 47"},
		{"order create 404", 404, func(c *Client) error {
			_, err := c.CreateOrder(ctx, "47", domain.OrderRequest{SKU: "9999999", QuantityUnits: 1, Reason: "r"})
			return err
		}, "StoreLink has no SKU 9999999 at store 47"},
		{"catalog 404", 404, func(c *Client) error { _, err := c.SKU(ctx, "47", "9999999"); return err },
			"StoreLink has no SKU 9999999"},
		{"store 404", 404, func(c *Client) error { _, err := c.Store(ctx, "47"); return err },
			"StoreLink has no store 47"},
		{"order 404", 404, func(c *Client) error { _, err := c.Order(ctx, "47", "RO-47-000001"); return err },
			"StoreLink has no order RO-47-000001 at store 47"},
		{"supplier 404", 404, func(c *Client) error { _, err := c.Supplier(ctx, "47", "SUP-9"); return err },
			"StoreLink has no supplier SUP-9"},
		{"key 401", 401, func(c *Client) error { _, err := c.Inventory(ctx, "47", "8847291"); return err },
			"refused this deployment's key for store 47"},
		{"key 403", 403, func(c *Client) error { _, err := c.Inventory(ctx, "47", "8847291"); return err },
			"key does not open store 47"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, _ := newClient(t, answering(t, tc.status, nil, errorBody("not_found")), keys47(), nil)
			ae := apperr.From(tc.call(c))
			if !strings.Contains(ae.Message, tc.want) || strings.Contains(ae.Message, "/v1/") {
				t.Fatalf("message %q, want it to contain %q and no route", ae.Message, tc.want)
			}
		})
	}
}

// TestNotFoundQuotesOnlyPlainIDs: an id that is not a plain id (StoreLink's
// own supplier id, say) is never quoted; the route stands in for it.
func TestNotFoundQuotesOnlyPlainIDs(t *testing.T) {
	ae := notFound("GET /v1/suppliers/{supplier_id}", subject{storeID: "47", kind: "supplier", id: "SUP\n<b>"}, errors.New("404"))
	if strings.Contains(ae.Message, "SUP") || !strings.Contains(ae.Message, "no such record") {
		t.Fatalf("message %q", ae.Message)
	}
}
