package upstream

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
)

// roundTripFunc is a RoundTripper made of a function.
type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// closeCounter is a body that counts its closes.
type closeCounter struct {
	io.Reader
	closed atomic.Int32
}

func (c *closeCounter) Close() error { c.closed.Add(1); return nil }

// TestSendIsOneExchange: send returns a 3xx as it came, with its Location,
// and the redirect's target is never asked.
func TestSendIsOneExchange(t *testing.T) {
	var reached atomic.Int32
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	defer second.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, second.URL+"/elsewhere", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		req, err := http.NewRequest(method, first.URL+"/v1/stores/47", strings.NewReader("{}"))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := send(http.DefaultTransport, req)
		if err != nil {
			t.Fatalf("%s: %v", method, err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != http.StatusTemporaryRedirect || resp.Header.Get("Location") != second.URL+"/elsewhere" {
			t.Errorf("%s: %d, Location %q; want the 307 as sent", method, resp.StatusCode, resp.Header.Get("Location"))
		}
	}
	if n := reached.Load(); n != 0 {
		t.Fatalf("%d request(s) followed the redirect", n)
	}
}

// TestSendFailsAsTheClientDid: a failed exchange is an *url.Error naming
// the method and the URL without its password, with no response; a
// response the transport returned beside its error is closed.
func TestSendFailsAsTheClientDid(t *testing.T) {
	refused := errors.New("connection refused")
	body := &closeCounter{Reader: strings.NewReader("x")}
	rt := roundTripFunc(func(*http.Request) (*http.Response, error) {
		return &http.Response{StatusCode: 200, Body: body}, refused
	})
	req, err := http.NewRequest(http.MethodGet, "http://user:secret@storelink.test/v1/stores/47", nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := send(rt, req)
	var ue *url.Error
	if resp != nil || !errors.As(err, &ue) || !errors.Is(err, refused) || ue.Op != "Get" || strings.Contains(ue.URL, "secret") {
		t.Fatalf("send: %v, %v; want an *url.Error Get without the password", resp, err)
	}
	if n := body.closed.Load(); n != 1 {
		t.Errorf("the stray response's body was closed %d times, want 1", n)
	}

	nothing := roundTripFunc(func(*http.Request) (*http.Response, error) { return nil, nil })
	post, _ := http.NewRequest(http.MethodPost, "http://storelink.test/v1/stores/47/replenishment", nil)
	if resp, err := send(nothing, post); resp != nil || !errors.As(err, &ue) || ue.Op != "Post" {
		t.Errorf("a transport answering nothing: %v, %v; want an *url.Error Post", resp, err)
	}

	noBody := roundTripFunc(func(*http.Request) (*http.Response, error) { return &http.Response{StatusCode: 204}, nil })
	if resp, err := send(noBody, req); err != nil || resp.Body != http.NoBody {
		t.Errorf("an answer without a body: %v, %v; want http.NoBody", resp, err)
	}
}

// TestSendEndsWithItsContext: a request whose context ends while the
// answer is awaited fails with the context's error, not later.
func TestSendEndsWithItsContext(t *testing.T) {
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := send(http.DefaultTransport, req)
	if resp != nil || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("send: %v, %v; want context.DeadlineExceeded", resp, err)
	}
}

// TestUnreadableLocationIsARedirectNotFollowed: a 3xx whose Location does
// not parse is refused as a redirect, with its status, and nothing in the
// answer or the log repeats the Location or the key.
func TestUnreadableLocationIsARedirectNotFollowed(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "http://[::1%zz/secret-path")
		w.WriteHeader(http.StatusFound)
	}))
	defer srv.Close()
	c, logs := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "secret-key-47"}}, nil)
	_, err := c.Inventory(callid.With(context.Background(), "call-location"), "47", "8847291")
	ae := apperr.From(err)
	if ae == nil || ae.Code != apperr.UpstreamContractError || !strings.Contains(ae.Message, "302 redirect") || !strings.Contains(ae.Message, "not followed") {
		t.Fatalf("%v; want UPSTREAM_CONTRACT_ERROR naming a 302 redirect not followed", err)
	}
	if all := ae.Message + logs.String(); strings.Contains(all, "secret") {
		t.Errorf("the answer or the log repeats the Location or the key:\n%s\n%s", ae.Message, logs.String())
	}
}
