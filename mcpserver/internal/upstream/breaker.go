package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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
type breakerDoer struct {
	next *http.Client
	// write sends POSTs, each on a fresh connection.
	write   *http.Client
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
	client := d.next
	if req.Method == http.MethodPost {
		client = d.write
	}
	resp, err := client.Do(req)
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
