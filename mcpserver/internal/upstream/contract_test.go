package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// TestNotStoreLinkIsAContractErrorNeverNotFound: a base URL that points at
// some other web server must not read as a wrong SKU or a rotated key.
func TestNotStoreLinkIsAContractErrorNeverNotFound(t *testing.T) {
	cases := []struct {
		name, contentType, body string
		status                  int
		want                    apperr.Code
	}{
		{"html 404", "text/html", "<html><h1>Not Found</h1></html>", 404, apperr.UpstreamContractError},
		{"empty 404", "", "", 404, apperr.UpstreamContractError},
		{"json 404 without the error shape", "application/json", `{"detail":"Not Found"}`, 404, apperr.UpstreamContractError},
		{"html 401 from a gateway", "text/html", "<html>login</html>", 401, apperr.UpstreamContractError},
		{"html 200 (a web page)", "text/html", "<html>welcome</html>", 200, apperr.UpstreamContractError},
		// Controls: StoreLink's own answers keep their meaning.
		{"StoreLink's 404", "application/json", errorBody("not_found"), 404, apperr.NotFound},
		{"StoreLink's 401", "application/json", errorBody("invalid_key"), 401, apperr.AuthKeyInvalid},
		{"html 502 from a proxy", "text/html", "<html>bad gateway</html>", 502, apperr.UpstreamUnavailable},
		{"html 429", "text/html", "<html>slow down</html>", 429, apperr.RateLimited},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.contentType != "" {
					w.Header().Set("Content-Type", tc.contentType)
				}
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k47"}}, nil)
			_, err := c.Inventory(context.Background(), "47", "8847291")
			var ae *apperr.Error
			if !errors.As(err, &ae) || ae.Code != tc.want {
				t.Fatalf("error %v, want %s", err, tc.want)
			}
			if tc.want == apperr.UpstreamContractError {
				if ae.Remediation != RemediationBaseURL || !strings.Contains(ae.Message, "UPSTREAM_BASE_URL") {
					t.Errorf("message %q, remediation %q: want both to point at the base URL", ae.Message, ae.Remediation)
				}
			}
		})
	}
}
