package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
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

// TestForeignJSONRefusalIsAContractErrorOfStoreLink: a refusal in JSON of
// another shape ({"detail": "Not Found"}) names the status and the body's
// properties, never values, and points at the contract check, not at
// UPSTREAM_BASE_URL.
func TestForeignJSONRefusalIsAContractErrorOfStoreLink(t *testing.T) {
	for _, tc := range []struct {
		status int
		body   string
		names  string
	}{
		{404, `{"detail":"Not Found"}`, "(it has detail)"},
		{401, `{"message":"Unauthorized XYZZY","statusCode":401,"timestamp":"now","path":"/v1"}`, "(it has message, path, statusCode and 1 more)"},
		{403, `{"error":{"message":"XYZZY"}}`, "(it has error)"},
	} {
		t.Run(strconv.Itoa(tc.status), func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/json")
				w.WriteHeader(tc.status)
				_, _ = io.WriteString(w, tc.body)
			}))
			defer srv.Close()
			c, logs := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k47"}}, nil)
			_, err := c.Inventory(context.Background(), "47", "8847291")
			ae := apperr.From(err)
			if ae == nil || ae.Code != apperr.UpstreamContractError {
				t.Fatalf("error %v, want UPSTREAM_CONTRACT_ERROR", err)
			}
			for _, want := range []string{"status " + strconv.Itoa(tc.status), "without the contract's error object", tc.names} {
				if !strings.Contains(ae.Message, want) {
					t.Errorf("message %q lacks %q", ae.Message, want)
				}
			}
			if ae.Remediation != RemediationErrorBody || strings.Contains(ae.Message, "probably not StoreLink") {
				t.Errorf("message %q, remediation %q: want StoreLink's error body, not the base URL", ae.Message, ae.Remediation)
			}
			if strings.Contains(ae.Message+ae.Remediation+logs.String(), "XYZZY") || strings.Contains(ae.Message, "Not Found") {
				t.Errorf("a value of the body reached the answer or the log:\n%s\n%s", ae.Message, logs)
			}
		})
	}
}
