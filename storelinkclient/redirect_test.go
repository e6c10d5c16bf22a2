package storelinkclient_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"

	sl "github.com/korral/storelink/storelinkclient"
)

// redirecting is a server that answers every request with status and a
// Location on another server, which counts what reaches it.
type redirecting struct {
	first, second *httptest.Server
	reached       atomic.Int32
}

func newRedirecting(t *testing.T, status int) *redirecting {
	t.Helper()
	r := &redirecting{}
	r.second = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.reached.Add(1)
		writeJSON(w, http.StatusOK, exampleStore)
	}))
	t.Cleanup(r.second.Close)
	r.first = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		// The query stands for anything a Location may carry that must not
		// be repeated.
		http.Redirect(w, req, r.second.URL+req.URL.Path+"?token=secret-in-location", status)
	}))
	t.Cleanup(r.first.Close)
	return r
}

func (r *redirecting) secondHost() string { return strings.TrimPrefix(r.second.URL, "http://") }

// followingDoer follows redirects on its own, as a careless custom doer
// would.
type followingDoer struct{}

func (followingDoer) Do(req *http.Request) (*http.Response, error) {
	return (&http.Client{}).Do(req)
}

// The tests of this file run one at a time: their clients use
// http.DefaultTransport, whose idle connections every httptest.Server's
// Close drops, which would break a parallel test's request midway.

// TestRedirectIsNeverFollowed: whatever doer the client was built with, a
// 302 or 307 from StoreLink's address fails the call with a RedirectError
// naming the status and the target's host, and nothing reaches that host.
func TestRedirectIsNeverFollowed(t *testing.T) {
	permissive := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return nil }}
	clients := map[string]func() []sl.ClientOption{
		"default":               func() []sl.ClientOption { return nil },
		"default with a limit":  func() []sl.ClientOption { return []sl.ClientOption{sl.WithResponseLimit(1 << 20)} },
		"own http.Client":       func() []sl.ClientOption { return []sl.ClientOption{sl.WithHTTPClient(&http.Client{})} },
		"permissive own client": func() []sl.ClientOption { return []sl.ClientOption{sl.WithHTTPClient(permissive)} },
		"limit then own client": func() []sl.ClientOption {
			return []sl.ClientOption{sl.WithResponseLimit(1 << 20), sl.WithHTTPClient(&http.Client{})}
		},
		"own client then limit": func() []sl.ClientOption {
			return []sl.ClientOption{sl.WithHTTPClient(&http.Client{}), sl.WithResponseLimit(1 << 20)}
		},
	}
	for _, status := range []int{http.StatusFound, http.StatusTemporaryRedirect} {
		for name, opts := range clients {
			t.Run(name+"/"+http.StatusText(status), func(t *testing.T) {
				r := newRedirecting(t, status)
				c, err := sl.NewClientWithResponses(r.first.URL, opts()...)
				if err != nil {
					t.Fatal(err)
				}
				ctx := context.Background()
				_, readErr := sl.Result(c.GetStoreWithResponse(ctx, "47", sl.WithStoreKey(testKey)))
				body := sl.OrderRequest{SKU: "8847291", QuantityUnits: 24, Reason: "gap of 14 units"}
				_, writeErr := sl.Result(c.CreateReplenishmentOrderWithResponse(ctx, "47", body, sl.WithStoreKey(testKey)))
				// The plain methods go through the same doer.
				_, rawErr := c.GetInventory(ctx, "47", &sl.GetInventoryParams{SKU: "8847291"}, sl.WithStoreKey(testKey))
				for what, err := range map[string]error{"read": readErr, "order": writeErr, "raw read": rawErr} {
					var re *sl.RedirectError
					if !errors.As(err, &re) {
						t.Fatalf("%s: error %v (%T), want a *RedirectError", what, err, err)
					}
					if re.StatusCode != status || re.Host != r.secondHost() || re.Followed {
						t.Errorf("%s: %+v, want status %d to host %s, not followed", what, re, status, r.secondHost())
					}
					if msg := err.Error(); containsAny(msg, testKey, "secret-in-location", "/v1/") {
						t.Errorf("%s: the error repeats the key or the Location's path or query: %q", what, msg)
					}
				}
				if n := r.reached.Load(); n != 0 {
					t.Fatalf("%d request(s) reached the host the redirect pointed at", n)
				}
			})
		}
	}
	if permissive.CheckRedirect == nil {
		t.Error("the caller's own client was changed")
	}
}

// TestFollowingDoerIsCaught: a doer that is not an *http.Client cannot be
// stopped, but a redirect it followed is reported, never taken as data.
func TestFollowingDoerIsCaught(t *testing.T) {
	r := newRedirecting(t, http.StatusFound)
	c, err := sl.NewClientWithResponses(r.first.URL, sl.WithHTTPClient(followingDoer{}))
	if err != nil {
		t.Fatal(err)
	}
	st, err := sl.Result(c.GetStoreWithResponse(context.Background(), "47", sl.WithStoreKey(testKey)))
	var re *sl.RedirectError
	if !errors.As(err, &re) || !re.Followed || re.Host != r.secondHost() || re.StatusCode != http.StatusFound || st != nil {
		t.Fatalf("got %v, %v (%+v); want a followed RedirectError", st, err, re)
	}
}

// TestRedirectHost: the host is resolved against the request, and anything
// that does not look like a host is dropped rather than repeated.
func TestRedirectHost(t *testing.T) {
	// A Location that does not parse stops net/http before the status can
	// be read, so only the fact of a redirect is reported.
	cases := map[string]struct {
		host   string
		status int
	}{
		"/v1/stores/47":                          {"", 301}, // the request's own host, filled in below
		"https://user:pw@other.example:8443/x?q": {"other.example:8443", 301},
		"http://[::1]:9000/":                     {"[::1]:9000", 301},
		"":                                       {"", 301},
		"http://" + strings.Repeat("a", 300):     {"", 301},
		"http://under_score.example/":            {"under_score.example", 301},
		"http://bad host/":                       {"", 0},
		"http://evil.example%0d%0aX-Injected:1/": {"", 0},
	}
	for location, c := range cases {
		t.Run(location, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
				if location != "" {
					w.Header()["Location"] = []string{location}
				}
				w.WriteHeader(http.StatusMovedPermanently)
			}))
			t.Cleanup(srv.Close)
			want := c.host
			if location == "/v1/stores/47" {
				u, _ := url.Parse(srv.URL)
				want = u.Host
			}
			client, err := sl.NewClientWithResponses(srv.URL)
			if err != nil {
				t.Fatal(err)
			}
			_, err = sl.Result(client.GetStoreWithResponse(context.Background(), "47", sl.WithStoreKey(testKey)))
			var re *sl.RedirectError
			if !errors.As(err, &re) || re.Host != want || re.StatusCode != c.status {
				t.Fatalf("Location %q: %v (%+v), want status %d to host %q", location, err, re, c.status, want)
			}
			if location != "" && strings.Contains(err.Error(), location) {
				t.Errorf("the error quotes the Location: %q", err)
			}
		})
	}
}
