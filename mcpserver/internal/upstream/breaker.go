package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/sony/gobreaker/v2"
)

// errBreakerOpen is returned by the transport when the breaker refuses a request.
var errBreakerOpen = errors.New("circuit breaker open")

// newBreaker opens after failures consecutive failures and lets one probe
// through after cooldown. A caller that gave up is not a failure.
func newBreaker(failures uint32, cooldown time.Duration, log *slog.Logger) *gobreaker.TwoStepCircuitBreaker[struct{}] {
	return gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "storelink",
		MaxRequests: 1,
		Timeout:     cooldown,
		ReadyToTrip: func(counts gobreaker.Counts) bool {
			return counts.ConsecutiveFailures >= failures
		},
		IsExcluded: func(err error) bool {
			return errors.Is(err, context.Canceled)
		},
		OnStateChange: func(name string, from, to gobreaker.State) {
			log.Warn("breaker.state", "breaker", name, "from", from.String(), "to", to.String())
		},
	})
}

// breakerDoer puts every HTTP exchange behind the breaker: transport
// errors, timeouts and 5xx are failures; 4xx and cancellations are not.
// In half-open, requests beside the probe wait for its result instead of
// failing, so a multi-request tool call after recovery succeeds.
//
// It sends a request with one RoundTrip of its transport, not through an
// http.Client: the client's redirect machinery (a copy of the headers per
// request, kept for a redirect we never follow) is work this path does not
// need. send keeps what the client guarantees here (see send).
type breakerDoer struct {
	next http.RoundTripper
	// write sends POSTs, each on a fresh connection.
	write   http.RoundTripper
	breaker *gobreaker.TwoStepCircuitBreaker[struct{}]

	mu sync.Mutex
	// probe is closed when the half-open probe has its result; nil when no
	// probe is in flight.
	probe chan struct{}
}

func (d *breakerDoer) Do(req *http.Request) (*http.Response, error) {
	done, err := d.admit(req.Context())
	if err != nil {
		return nil, err
	}
	rt := d.next
	if req.Method == http.MethodPost {
		rt = d.write
	}
	resp, err := send(rt, req)
	if a := attemptOf(req.Context()); a != nil && resp != nil {
		a.status = resp.StatusCode
	}
	if sink, ok := req.Context().Value(freshnessSinkKey{}).(*freshnessHeaders); ok && resp != nil {
		sink.record(resp.Header)
	}
	if localTimes && err == nil {
		localize(req, resp)
	}
	switch {
	case err != nil && req.Context().Err() == context.Canceled:
		done(context.Canceled)
	case err != nil:
		done(err)
	case resp.StatusCode >= 500:
		done(fmt.Errorf("status %d", resp.StatusCode))
	default:
		done(nil)
	}
	return resp, err
}

// admit asks the breaker for a slot, waiting for a half-open probe's
// result rather than failing beside it.
func (d *breakerDoer) admit(ctx context.Context) (done func(error), err error) {
	for {
		d.mu.Lock()
		// State first: it moves an expired open breaker to half-open and so
		// decides whether this request is the probe.
		halfOpen := d.breaker.State() == gobreaker.StateHalfOpen
		done, err := d.breaker.Allow()
		if err == nil {
			if !halfOpen {
				d.mu.Unlock()
				return done, nil
			}
			verdict := make(chan struct{})
			d.probe = verdict
			d.mu.Unlock()
			return func(err error) {
				done(err)
				d.mu.Lock()
				d.probe = nil
				d.mu.Unlock()
				close(verdict)
			}, nil
		}
		verdict := d.probe
		d.mu.Unlock()
		if verdict == nil || !errors.Is(err, gobreaker.ErrTooManyRequests) {
			return nil, errBreakerOpen
		}
		select {
		case <-verdict:
		case <-ctx.Done():
			// Still breaker-open, not a timeout: nothing was sent.
			return nil, fmt.Errorf("%w: gave up waiting for the probe: %w", errBreakerOpen, ctx.Err())
		}
	}
}

// send is one exchange over rt, as http.Client.Do without a redirect
// policy, cookie jar or client timeout makes it: the request's context
// bounds it (the attempt's timeout is there), a 3xx comes back as it is
// (never followed), an error is an *url.Error naming the method and the
// URL without its password, and a failed exchange returns no response.
// The transport closes the request's body, on errors too (the
// RoundTripper contract), as the client relies on.
func send(rt http.RoundTripper, req *http.Request) (*http.Response, error) {
	if req.URL == nil {
		closeBody(req)
		return nil, errors.New("http: nil Request.URL")
	}
	if req.Header == nil {
		// The transport may assume a header map, as the client ensures.
		req.Header = make(http.Header)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		if resp != nil && resp.Body != nil {
			// A transport that broke its contract; its body is closed, not leaked.
			_ = resp.Body.Close()
		}
		return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.Redacted(), Err: err}
	}
	if resp == nil {
		return nil, &url.Error{Op: urlErrorOp(req.Method), URL: req.URL.Redacted(),
			Err: fmt.Errorf("http: RoundTripper implementation (%T) returned a nil *Response with a nil error", rt)}
	}
	if resp.Body == nil {
		resp.Body = http.NoBody
	}
	return resp, nil
}

// urlErrorOp is the Op of an *url.Error as http.Client names it: "Get",
// "Post".
func urlErrorOp(method string) string {
	switch method {
	case http.MethodGet, "":
		return "Get"
	case http.MethodPost:
		return "Post"
	}
	return method[:1] + strings.ToLower(method[1:])
}

// closeBody closes a request's body, if it has one.
func closeBody(req *http.Request) {
	if req.Body != nil {
		_ = req.Body.Close()
	}
}
