package storelinkclient_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	sl "github.com/korral/storelink/storelinkclient"
)

// safetyNet ends the "endless" bodies of these tests, so that a broken limit
// fails a test instead of eating the machine's memory.
const safetyNet = 32 << 20

// endless is a response body that, as far as the client can tell, never ends;
// it counts what was read so a test can show the client stopped.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	if e.read >= safetyNet {
		return 0, io.EOF
	}
	for i := range p {
		p[i] = ' '
	}
	e.read += int64(len(p))
	return len(p), nil
}

func (e *endless) Close() error { return nil }

func endlessResponder(body *endless) func(*http.Request) (*http.Response, error) {
	return func(req *http.Request) (*http.Response, error) {
		return &http.Response{
			StatusCode:    http.StatusOK,
			Header:        http.Header{"Content-Type": {"application/json"}},
			Body:          body,
			ContentLength: -1,
			Request:       req,
		}, nil
	}
}

// TestResponseLimitStopsEndlessBody feeds a body that never ends and checks
// the read fails with ErrResponseTooLarge after at most limit+1 bytes,
// whichever order the options come in.
func TestResponseLimitStopsEndlessBody(t *testing.T) {
	const limit = 64 << 10
	orders := map[string]func(doer sl.HttpRequestDoer) []sl.ClientOption{
		"limit after client": func(doer sl.HttpRequestDoer) []sl.ClientOption {
			return []sl.ClientOption{sl.WithHTTPClient(doer), sl.WithResponseLimit(limit)}
		},
		"limit before client": func(doer sl.HttpRequestDoer) []sl.ClientOption {
			return []sl.ClientOption{sl.WithResponseLimit(limit), sl.WithHTTPClient(doer)}
		},
	}
	for name, opts := range orders {
		t.Run(name, func(t *testing.T) {
			body := &endless{}
			doer := doerFunc(endlessResponder(body))
			c, err := sl.NewClientWithResponses("https://storelink.test", opts(doer)...)
			if err != nil {
				t.Fatal(err)
			}
			// Twice: the second request goes through the same, already
			// wrapped doer.
			for range 2 {
				body.read = 0
				page, err := sl.Result(c.ListPOSTransactionsWithResponse(t.Context(), "47",
					&sl.ListPOSTransactionsParams{SKU: "8847291", Since: at(11, 27, 10, 0, 0)}, sl.WithStoreKey(testKey)))
				if page != nil || !errors.Is(err, sl.ErrResponseTooLarge) {
					t.Fatalf("got (%v, %v), want ErrResponseTooLarge", page, err)
				}
				if body.read > limit+1 {
					t.Errorf("read %d bytes of the body, want at most %d", body.read, limit+1)
				}
				if !strings.Contains(err.Error(), "GET /v1/stores/47/pos") || strings.Contains(err.Error(), testKey) {
					t.Errorf("error %q should name the request and not the key", err)
				}
			}
		})
	}
}

type doerFunc func(*http.Request) (*http.Response, error)

func (f doerFunc) Do(req *http.Request) (*http.Response, error) { return f(req) }

// TestResponseLimitOverRealConnection streams an endless body from a real
// server to a client built with only the limit option, as an importer would.
func TestResponseLimitOverRealConnection(t *testing.T) {
	srv := newStreamingServer(t)
	c, err := sl.NewClientWithResponses(srv.URL, sl.WithResponseLimit(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	stores, err := sl.Result(c.ListStoresWithResponse(t.Context(), sl.WithStoreKey(testKey)))
	if stores != nil || !errors.Is(err, sl.ErrResponseTooLarge) {
		t.Fatalf("got (%v, %v), want ErrResponseTooLarge", stores, err)
	}
}

// TestResponseLimitDeclaredLength checks that a body announced as too large
// is refused without reading any of it.
func TestResponseLimitDeclaredLength(t *testing.T) {
	body := &endless{}
	c, mt := newMockClient(t, sl.WithResponseLimit(1024))
	mt.RegisterNoResponder(func(req *http.Request) (*http.Response, error) {
		resp, _ := endlessResponder(body)(req)
		resp.ContentLength = 1 << 30
		return resp, nil
	})
	_, err := sl.Result(c.GetSKUWithResponse(t.Context(), "8847291", sl.WithStoreKey(testKey)))
	if !errors.Is(err, sl.ErrResponseTooLarge) {
		t.Fatalf("got %v, want ErrResponseTooLarge", err)
	}
	if body.read != 0 {
		t.Errorf("read %d bytes of a body declared too large, want 0", body.read)
	}
}

// TestResponseLimitBoundary checks that a body of exactly the limit passes
// and one byte more fails.
func TestResponseLimitBoundary(t *testing.T) {
	limit := int64(len(exampleSKU)) + 10
	exact := exampleSKU + strings.Repeat(" ", 10)
	for _, tt := range []struct {
		body    string
		wantErr bool
	}{{exact, false}, {exact + " ", true}} {
		c, mt := newMockClient(t, sl.WithResponseLimit(limit))
		mt.RegisterNoResponder(jsonResponder(200, tt.body))
		sku, err := sl.Result(c.GetSKUWithResponse(t.Context(), "8847291", sl.WithStoreKey(testKey)))
		if tt.wantErr {
			if !errors.Is(err, sl.ErrResponseTooLarge) {
				t.Errorf("body of %d bytes, limit %d: got %v, want ErrResponseTooLarge", len(tt.body), limit, err)
			}
			continue
		}
		if err != nil || sku == nil || sku.Name != "Madeta butter 250g" {
			t.Errorf("body of %d bytes, limit %d: got (%+v, %v), want the SKU", len(tt.body), limit, sku, err)
		}
	}
}

func TestResponseLimitMustBePositive(t *testing.T) {
	for _, limit := range []int64{0, -1} {
		if _, err := sl.NewClientWithResponses("https://storelink.test", sl.WithResponseLimit(limit)); err == nil {
			t.Errorf("WithResponseLimit(%d) accepted", limit)
		}
	}
}
