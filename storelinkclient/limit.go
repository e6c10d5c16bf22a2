package storelinkclient

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
)

// DefaultResponseLimit is a body limit with ample headroom over the largest
// documented response (a full POS page of 1000 transactions is about 100 KiB).
const DefaultResponseLimit = 4 << 20

// ErrResponseTooLarge is wrapped by the error returned when a response body
// exceeds the limit set with [WithResponseLimit].
var ErrResponseTooLarge = errors.New("storelink: response body too large")

// WithResponseLimit bounds every response body to max bytes: a larger body
// fails with an error wrapping ErrResponseTooLarge, reading at most max+1
// bytes. It may come before or after [WithHTTPClient].
func WithResponseLimit(max int64) ClientOption {
	return func(c *Client) error {
		if max <= 0 {
			return fmt.Errorf("storelink: response limit must be positive, got %d", max)
		}
		if c.Client == nil {
			// NewClient's default; NewClient guards it against redirects
			// after every option has run.
			c.Client = &http.Client{}
		}
		c.Client = limitDoer(c.Client, max)
		// Options run in order, so a WithHTTPClient after this one replaces the
		// wrapper. Request editors run after every option, so one re-wraps the
		// doer the client really ended up with; the Once makes that write
		// happen before any request goroutine reads c.Client.
		var once sync.Once
		c.RequestEditors = append(c.RequestEditors, func(context.Context, *http.Request) error {
			once.Do(func() { c.Client = limitDoer(c.Client, max) })
			return nil
		})
		return nil
	}
}

// limitDoer wraps next unless it already enforces a limit.
func limitDoer(next HttpRequestDoer, max int64) HttpRequestDoer {
	if _, ok := next.(*limitingDoer); ok {
		return next
	}
	return &limitingDoer{next: next, max: max}
}

// limitingDoer is the HttpRequestDoer installed by WithResponseLimit.
type limitingDoer struct {
	next HttpRequestDoer
	max  int64
}

func (d *limitingDoer) Do(req *http.Request) (*http.Response, error) {
	resp, err := d.next.Do(req)
	if err != nil || resp == nil || resp.Body == nil {
		return resp, err
	}
	if resp.ContentLength > d.max {
		_ = resp.Body.Close()
		return nil, tooLarge(req, d.max)
	}
	resp.Body = &limitedBody{body: resp.Body, left: d.max, req: req, max: d.max}
	return resp, nil
}

// tooLarge names the request by method and path only: the query holds no
// secret, but it is noise in an error meant for logs.
func tooLarge(req *http.Request, max int64) error {
	return fmt.Errorf("%w: %s %s sent more than %d bytes", ErrResponseTooLarge, req.Method, req.URL.Path, max)
}

// limitedBody reads at most max+1 bytes of body: the extra byte tells a body
// of exactly max bytes from a longer one.
type limitedBody struct {
	body io.ReadCloser
	left int64
	req  *http.Request
	max  int64
	err  error
}

func (b *limitedBody) Read(p []byte) (int, error) {
	if b.err != nil {
		return 0, b.err
	}
	if len(p) == 0 {
		return 0, nil
	}
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.body.Read(p)
	if int64(n) <= b.left {
		b.left -= int64(n)
		return n, err
	}
	n = int(b.left)
	b.left = 0
	b.err = tooLarge(b.req, b.max)
	return n, b.err
}

func (b *limitedBody) Close() error { return b.body.Close() }
