package storelinkclient_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/jarcoal/httpmock"

	sl "github.com/korral/storelink/storelinkclient"
)

// testKey looks like a secret so that tests can check it never leaks.
const testKey = "sk-47-9f3e2d1c"

// newMockClient returns a client whose requests go to a transport of its own,
// never to the network and never through httpmock's global activation, so
// tests can run in parallel.
func newMockClient(t *testing.T, opts ...sl.ClientOption) (*sl.ClientWithResponses, *httpmock.MockTransport) {
	t.Helper()
	mt := httpmock.NewMockTransport()
	opts = append([]sl.ClientOption{sl.WithHTTPClient(&http.Client{Transport: mt})}, opts...)
	c, err := sl.NewClientWithResponses("https://storelink.test", opts...)
	if err != nil {
		t.Fatalf("NewClientWithResponses: %v", err)
	}
	return c, mt
}

// newServer starts a real HTTP server on 127.0.0.1 and a client for it.
func newServer(t *testing.T, h http.Handler, opts ...sl.ClientOption) (*sl.ClientWithResponses, *httptest.Server) {
	t.Helper()
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	opts = append([]sl.ClientOption{sl.WithHTTPClient(srv.Client())}, opts...)
	c, err := sl.NewClientWithResponses(srv.URL, opts...)
	if err != nil {
		t.Fatalf("NewClientWithResponses: %v", err)
	}
	return c, srv
}

// jsonResponder answers with status and body as application/json, plus any
// extra header pairs.
func jsonResponder(status int, body string, header ...string) httpmock.Responder {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(header); i += 2 {
		h.Set(header[i], header[i+1])
	}
	return httpmock.NewStringResponder(status, body).HeaderSet(h)
}

// writeJSON is the httptest counterpart of jsonResponder.
func writeJSON(w http.ResponseWriter, status int, body string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write([]byte(body))
}

var cet = time.FixedZone("CET", 3600)

func at(month time.Month, day, hour, minute, sec int) time.Time {
	return time.Date(2026, month, day, hour, minute, sec, 0, cet)
}

func ptr[T any](v T) *T { return &v }

func containsAny(s string, subs ...string) bool {
	for _, sub := range subs {
		if sub != "" && strings.Contains(s, sub) {
			return true
		}
	}
	return false
}

// newStreamingServer answers every request with a body that does not end
// until the client goes away (or, should the client's limit be broken, after
// safetyNet bytes).
func newStreamingServer(t *testing.T) *httptest.Server {
	t.Helper()
	chunk := []byte(strings.Repeat(" ", 32<<10))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusOK)
		for sent := 0; sent < safetyNet && r.Context().Err() == nil; sent += len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}
