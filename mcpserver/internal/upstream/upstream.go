// Package upstream is the MCP server's only door to StoreLink. It owns the
// generated client, the HTTP transport, the per-request timeout, the circuit
// breaker, the single guarded retry after a key rotation, the request log, and
// the one table that turns every StoreLink outcome into the server's closed
// error taxonomy. Nothing outside this package sees an HTTP status or a
// generated response type.
package upstream

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/storelinkclient"
	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
	"golang.org/x/sync/singleflight"
)

// Keys gives the adapter the key of a store. Refresh re-reads the keyring's
// source after StoreLink refused stale; it reports a key only when the source
// now holds a different one for that store, which is the one condition under
// which a second attempt is allowed.
type Keys interface {
	Key(storeID string) (keyring.Key, bool)
	Refresh(storeID string, stale keyring.Key) (keyring.Key, bool)
}

// Options configures a Client.
type Options struct {
	BaseURL string
	// Transport carries the requests; nil means a fresh http.Transport.
	Transport http.RoundTripper
	// Timeout bounds each request, body included.
	Timeout time.Duration
	Keys    Keys
	Logger  *slog.Logger
	// BreakerFailures is the number of consecutive failures that opens the
	// breaker; BreakerCooldown is how long it stays open before one probe.
	BreakerFailures uint32
	BreakerCooldown time.Duration
	// ResponseLimit bounds every response body; 0 means the client default.
	ResponseLimit int64
	// MaxPOSPages bounds a walk over point-of-sale pages; 0 means 100
	// (50,000 transactions at the default page size).
	MaxPOSPages int
	// POSPageSize is the page size asked of StoreLink; 0 means
	// MaxPOSPageSize, the contract's largest.
	POSPageSize int
	// MaxInFlight is the most requests open to StoreLink at once, across
	// every call of this Client; 0 means DefaultMaxInFlight. StoreLink's
	// 429s (and 503s with Retry-After) lower the limit below it for a while.
	MaxInFlight int
	// MasterDataTTL is how long store, SKU and supplier master data are
	// reused before StoreLink is asked again; 0 means DefaultMasterDataTTL,
	// a negative value turns the reuse off. StoreLink's Cache-Control can
	// only shorten it. Stock, sales and orders are never reused.
	MasterDataTTL time.Duration
	// MasterDataEntries bounds the reused master data, least recently used
	// first out; 0 means DefaultMasterDataEntries.
	MasterDataEntries int
	// NoCache reads every piece of master data from StoreLink and keeps
	// none, for checks that must see StoreLink's answer of now (doctor).
	NoCache bool
	// Now is the server's clock: the cache's (tests move it instead of
	// sleeping), and the one the semantic rules judge "not in the future"
	// by (a count, a sale), so that a StoreLink pinned to the same fixed
	// time is not refused. nil means time.Now.
	Now func() time.Time
	// TracerProvider makes each request a client span (telemetry.go);
	// MeterProvider receives the request durations and the breaker state.
	// nil is a no-op.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
	// UpstreamName labels the breaker gauge (the deployment's upstream id).
	UpstreamName string
}

// Client calls StoreLink on behalf of the tools.
type Client struct {
	api      *storelinkclient.ClientWithResponses
	breaker  *gobreaker.TwoStepCircuitBreaker[struct{}]
	keys     Keys
	log      *slog.Logger
	timeout  time.Duration
	cooldown time.Duration
	maxPages int
	pageSize int
	// master is nil when master data is not reused.
	master *masterCache
	flight singleflight.Group
	// budget paces every request to StoreLink (budget.go).
	budget *budget
	now    func() time.Time
	meters meters
}

// errBreakerOpen is returned by the transport when the breaker refuses a request.
var errBreakerOpen = errors.New("circuit breaker open")

// New builds a Client. It fails only on a malformed base URL.
func New(opts Options) (*Client, error) {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 5 * time.Second
	}
	if opts.BreakerFailures == 0 {
		opts.BreakerFailures = 5
	}
	if opts.BreakerCooldown <= 0 {
		opts.BreakerCooldown = 30 * time.Second
	}
	if opts.MaxPOSPages <= 0 {
		opts.MaxPOSPages = 100
	}
	if opts.POSPageSize <= 0 {
		opts.POSPageSize = MaxPOSPageSize
	}
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.MasterDataTTL == 0 {
		opts.MasterDataTTL = DefaultMasterDataTTL
	}
	if opts.MasterDataEntries <= 0 {
		opts.MasterDataEntries = DefaultMasterDataEntries
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.ResponseLimit <= 0 {
		opts.ResponseLimit = storelinkclient.DefaultResponseLimit
	}
	transport := opts.Transport
	if transport == nil {
		transport = &http.Transport{
			Proxy:               nil, // StoreLink is reached directly; never through an environment proxy
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	// An order is sent on a connection of its own. On a pooled keep-alive
	// connection, a POST written just as StoreLink closes that connection
	// for idleness fails after leaving the process, so its outcome would be
	// unknown although StoreLink never read it. A fresh connection either
	// fails to open (nothing sent, safe to retry) or carries the order.
	// Orders are rare, so the extra handshake costs nothing that matters.
	writeTransport := transport
	if t, ok := transport.(*http.Transport); ok {
		wt := t.Clone()
		wt.DisableKeepAlives = true
		writeTransport = wt
	}
	c := &Client{
		keys:     opts.Keys,
		log:      opts.Logger,
		timeout:  opts.Timeout,
		cooldown: opts.BreakerCooldown,
		maxPages: opts.MaxPOSPages,
		pageSize: opts.POSPageSize,
		now:      opts.Now,
	}
	if c.now == nil {
		c.now = time.Now
	}
	if !opts.NoCache && opts.MasterDataTTL > 0 {
		c.master = newMasterCache(opts.MasterDataEntries, opts.MasterDataTTL, opts.Now)
	}
	failures := opts.BreakerFailures
	c.breaker = gobreaker.NewTwoStepCircuitBreaker[struct{}](gobreaker.Settings{
		Name:        "storelink",
		MaxRequests: 1,
		Timeout:     opts.BreakerCooldown,
		ReadyToTrip: func(counts gobreaker.Counts) bool {
			return counts.ConsecutiveFailures >= failures
		},
		IsExcluded: func(err error) bool {
			// A caller that gave up says nothing about StoreLink's health.
			return errors.Is(err, context.Canceled)
		},
		OnStateChange: func(name string, from, to gobreaker.State) {
			opts.Logger.Warn("breaker.state", "breaker", name, "from", from.String(), "to", to.String())
		},
	})
	// Neither client follows a redirect: it would carry the store key, and an
	// order's body, to whatever host the Location names. The 3xx itself
	// comes back, and storelinkclient turns it into a RedirectError.
	logger := opts.Logger
	c.budget = newBudget(opts.MaxInFlight, func(from, to int, why string) {
		logger.Debug("upstream.budget", "from", from, "to", to, "max", opts.MaxInFlight, "reason", why)
		if to < from {
			c.meters.throttled.Add(context.Background(), 1, c.meters.upstream)
		}
	})
	c.meters = newMeters(opts.MeterProvider, opts.UpstreamName, c.breaker, c.budget)
	read := &http.Client{Transport: instrumented(transport, opts.BaseURL, opts.TracerProvider), CheckRedirect: noRedirect}
	write := &http.Client{Transport: instrumented(writeTransport, opts.BaseURL, opts.TracerProvider), CheckRedirect: noRedirect}
	api, err := storelinkclient.NewClientWithResponses(opts.BaseURL,
		storelinkclient.WithHTTPClient(&breakerDoer{next: read, write: write, breaker: c.breaker}),
		storelinkclient.WithResponseLimit(opts.ResponseLimit),
	)
	if err != nil {
		return nil, fmt.Errorf("upstream base URL: %w", err)
	}
	c.api = api
	return c, nil
}

// noRedirect stops an http.Client at the first redirect, returning the 3xx.
func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

// BreakerState reports the breaker's state: "closed", "half-open" or "open".
func (c *Client) BreakerState() string { return c.breaker.State().String() }

// breakerDoer puts every HTTP exchange behind the breaker: transport errors,
// timeouts and 5xx count as failures; 4xx answers and caller cancellations
// do not, since they say nothing about whether StoreLink is healthy.
//
// After the cool-down the half-open breaker admits one request, the probe.
// A tool such as korral_check_stock_risk sends several requests at once, and
// refusing all but the probe would fail the user's first call after
// StoreLink recovered. So the others wait for the probe's verdict instead:
// a good probe closes the breaker and they go ahead; a bad one reopens it
// and they fail fast, without reaching StoreLink.
type breakerDoer struct {
	next *http.Client
	// write sends requests that change StoreLink's state (POST), each on a
	// fresh connection.
	write   *http.Client
	breaker *gobreaker.TwoStepCircuitBreaker[struct{}]

	mu sync.Mutex
	// probe is closed when the half-open probe in flight has its verdict;
	// nil when no probe is in flight.
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
	if sink, ok := req.Context().Value(statusSinkKey{}).(*int); ok && resp != nil {
		*sink = resp.StatusCode
	}
	if sink, ok := req.Context().Value(freshnessSinkKey{}).(*freshnessHeaders); ok && resp != nil {
		sink.record(resp.Header)
	}
	if localTimes && err == nil {
		localize(req, resp)
	}
	if sink, ok := req.Context().Value(bodySinkKey{}).(*bytes.Buffer); ok && resp != nil && req.Method == http.MethodGet &&
		resp.StatusCode >= 200 && resp.StatusCode < 300 {
		// A copy of what the client reads, no more (its response limit
		// still stops the read), for checked to salvage an answer whose
		// only unreadable fields are qualifiers (qualifiers.go).
		resp.Body = teeBody{Reader: io.TeeReader(resp.Body, sink), Closer: resp.Body}
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

// admit asks the breaker for a place, waiting for the verdict of a
// half-open probe in flight rather than failing beside it.
func (d *breakerDoer) admit(ctx context.Context) (done func(error), err error) {
	for {
		d.mu.Lock()
		// State first: it is what moves an expired open breaker to
		// half-open, and so tells whether this request becomes the probe.
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
			// Still breaker-open, not a timeout: nothing was sent, which
			// matters for a write.
			return nil, fmt.Errorf("%w: gave up waiting for the probe: %w", errBreakerOpen, ctx.Err())
		}
	}
}

type statusSinkKey struct{}

// call runs one logical StoreLink request for a store: it picks the store's
// key, applies the timeout, logs every attempt, and on a 401 retries once, only
// when the keyring source now holds a different key for the store.
func call[T any](ctx context.Context, c *Client, method, route, storeID string, do func(ctx context.Context, key keyring.Key) (*T, error)) (*T, error) {
	key, ok := c.keys.Key(storeID)
	if !ok {
		// The tools resolve scope before calling; reaching here is a bug, and
		// nothing may leave the process for a store without a key.
		e := apperr.New(apperr.StoreNotAuthorized,
			fmt.Sprintf("this deployment holds no key for store %s", storeID),
			"Call korral_list_authorized_stores and use one of the stores it lists.")
		e.Reach = apperr.ReachNotSent
		return nil, e
	}
	if storeLocal(route) {
		zctx, err := c.withStoreZone(ctx, method, route, storeID)
		if err != nil {
			return nil, err
		}
		ctx = zctx
	}
	for attempt := 1; ; attempt++ {
		v, err := attemptOnce(ctx, c, method, route, storeID, attempt, key, do)
		if err == nil {
			return v, nil
		}
		var apiErr *storelinkclient.APIError
		if attempt == 1 && errors.As(err, &apiErr) && apiErr.StatusCode == http.StatusUnauthorized && !apiErr.ErrorInSuccess {
			if fresh, ok := c.keys.Refresh(storeID, key); ok {
				c.log.InfoContext(ctx, "upstream.key_refreshed", "call_id", callid.From(ctx), "store_id", storeID, "key", fresh)
				key = fresh
				continue
			}
		}
		return nil, c.fail(ctx, method, route, storeID, err)
	}
}

func attemptOnce[T any](ctx context.Context, c *Client, method, route, storeID string, attempt int, key keyring.Key, do func(ctx context.Context, key keyring.Key) (*T, error)) (*T, error) {
	// The wait for a place is outside the request's timeout: a request
	// queued behind a busy replica has not yet met StoreLink.
	place, err := c.budget.acquire(ctx, callid.From(ctx))
	if err != nil {
		return nil, err
	}
	status := 0
	var body bytes.Buffer
	actx, cancel := context.WithTimeout(context.WithValue(context.WithValue(ctx, statusSinkKey{}, &status), bodySinkKey{}, &body), c.timeout)
	defer cancel()
	actx = context.WithValue(actx, requestInfoKey{}, requestInfo{method: method, route: route, storeID: storeID, attempt: attempt})
	start := time.Now()
	v, err := do(actx, key)
	c.budget.release(place, loadSignal(status, err))
	c.recordRequest(ctx, method, route, status, time.Since(start))
	if err == nil && v == nil {
		err = storelinkclient.ErrMalformedResponse
	}
	if errors.Is(err, storelinkclient.ErrMalformedResponse) && status >= 500 {
		// A failing StoreLink often answers with a page that is not JSON; the
		// status is what matters.
		err = &storelinkclient.APIError{StatusCode: status, Message: "non-JSON error body"}
	}
	err = outsideContract(method, route, err)
	attrs := []any{
		"call_id", callid.From(ctx),
		"method", method,
		"route", route,
		"store_id", storeID,
		"status", status,
		"duration_ms", float64(time.Since(start).Microseconds()) / 1000,
		"attempt", attempt,
		"breaker", c.breaker.State().String(),
	}
	if err != nil {
		text := safeErrorText(err)
		if f, ok := describe(route, err); ok {
			// A decoding error may quote a value of the answer; the fault
			// names the field and rule instead.
			text = f.Error()
		}
		attrs = append(attrs, "error", text)
		c.log.WarnContext(ctx, "upstream.request", attrs...)
		return nil, err
	}
	c.log.InfoContext(ctx, "upstream.request", attrs...)
	return v, nil
}

// loadSignal is what an answer says about StoreLink's capacity: a 429, or
// a 503 that names a Retry-After, asks for less; any other answer StoreLink
// gave, error or not, shows it served the request. No answer says nothing.
func loadSignal(status int, err error) signal {
	var apiErr *storelinkclient.APIError
	switch {
	case status == http.StatusTooManyRequests:
		return throttled
	case status == http.StatusServiceUnavailable && errors.As(err, &apiErr) && apiErr.RetryAfter > 0:
		return throttled
	case status >= 200 && status < 500:
		return served
	default:
		return neutral
	}
}

// safeErrorText is the error as logged: StoreLink's own words are kept short,
// and nothing here can hold a key, since keys travel only in headers.
func safeErrorText(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}

// classify is the one table from a StoreLink outcome to the closed taxonomy.
// For a write it also says how far the order got (apperr.Reach), judged by
// what reached StoreLink, so that the ledger never calls an order that may
// exist "not sent", nor one StoreLink never took "unknown".
func classify(method, route string, err error, cooldown time.Duration) *apperr.Error {
	var ae *apperr.Error
	if errors.As(err, &ae) {
		return ae
	}
	ae = classifyError(method, route, err, cooldown)
	if method == http.MethodPost {
		ae.Reach = writeReach(err, ae.Code)
	}
	return ae
}

// writeReach is how far a failed order got. Anything not known to have
// stopped short of StoreLink, or to have been refused by it, is unknown.
func writeReach(err error, code apperr.Code) apperr.Reach {
	var apiErr *storelinkclient.APIError
	var redirect *storelinkclient.RedirectError
	switch {
	case errors.Is(err, errBreakerOpen), errors.Is(err, errBudget), isDialError(err):
		return apperr.ReachNotSent
	case errors.As(err, &redirect) && !redirect.Followed:
		// The address answered 3xx instead of taking the order, and the
		// redirect was not followed: no StoreLink received it.
		return apperr.ReachNotSent
	case !errors.As(err, &apiErr) || apiErr.ErrorInSuccess:
		return apperr.ReachUnknown
	case apiErr.StatusCode == http.StatusUnauthorized, apiErr.StatusCode == http.StatusTooManyRequests:
		// Turned away at the door: StoreLink took nothing.
		return apperr.ReachNotSent
	case code == apperr.InvalidArgument, code == apperr.StoreNotAuthorized, code == apperr.NotFound, code == apperr.UpstreamRejected:
		return apperr.ReachRejected
	default:
		return apperr.ReachUnknown
	}
}

func classifyError(method, route string, err error, cooldown time.Duration) *apperr.Error {
	write := method == http.MethodPost
	where := method + " " + route
	var apiErr *storelinkclient.APIError
	var redirect *storelinkclient.RedirectError
	switch {
	case errors.As(err, &redirect):
		return redirected(write, where, redirect)
	case errors.Is(err, errBudget):
		// The call ended while its request waited for a place: nothing
		// was sent, write or not.
		return apperr.Wrap(apperr.UpstreamUnavailable, err,
			"the call ended while its request to StoreLink waited behind others; nothing was sent",
			"Call the tool again if the answer is still needed; if this repeats, StoreLink is slow or rate-limiting this deployment.")
	case errors.Is(err, errBreakerOpen):
		e := apperr.Wrap(apperr.UpstreamUnavailable, err,
			"StoreLink has been failing, so calls to it are paused for a short cool-down",
			fmt.Sprintf("Wait about %d seconds, then try again; nothing was sent to StoreLink.", int(cooldown.Seconds())))
		e.RetryAfterSeconds = int(cooldown.Seconds())
		return e
	case errors.As(err, &apiErr):
		return classifyAPIError(write, where, apiErr)
	case errors.Is(err, storelinkclient.ErrResponseTooLarge), errors.Is(err, storelinkclient.ErrMalformedResponse):
		// storelinkclient.Result already reports every body that does not
		// decode as ErrMalformedResponse. The fault, which names the field
		// and the rule but quotes nothing of the answer, is the cause, so
		// that no log line repeats a value StoreLink sent.
		f, _ := describe(route, err)
		if write {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, f,
				fmt.Sprintf("StoreLink answered the order with a response that could not be read (%s), so whether the order was raised is unknown", f),
				"Do not resubmit. Check with korral_get_order_status (the ledger entry's idempotency key or order id) before deciding.")
		}
		return apperr.Wrap(apperr.UpstreamContractError, f, brokeContract(where, f),
			"This is a StoreLink fault, not yours: retrying will likely fail the same way; tell the user which field StoreLink got wrong, and report it to Korral IT with the call id.")
	case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
		if write {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, err,
				"StoreLink did not answer the order in time, so whether it was raised is unknown",
				"Do not resubmit. Check korral_get_order_status with the idempotency key first; resubmitting could raise a second order.")
		}
		return apperr.Wrap(apperr.UpstreamTimeout, err,
			fmt.Sprintf("StoreLink did not answer %s in time", where),
			"Try again in a minute; if it keeps timing out, StoreLink is degraded: tell the buyer the answer is unavailable.")
	case errors.Is(err, context.Canceled) && write:
		// The order may have left before the caller gave up.
		return apperr.Wrap(apperr.WriteOutcomeUnknown, err,
			"the call was cancelled while the order was being sent, so whether it was raised is unknown",
			"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
	case errors.Is(err, context.Canceled):
		return apperr.Wrap(apperr.UpstreamUnavailable, err, "the call was cancelled before StoreLink answered", "Call the tool again if the answer is still needed.")
	default:
		if write && !isDialError(err) {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, err,
				"the connection to StoreLink failed while the order was being sent, so whether it was raised is unknown",
				"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
		}
		return apperr.Wrap(apperr.UpstreamUnavailable, err,
			"StoreLink could not be reached",
			"Try again in a minute; if it persists, StoreLink is down: tell the buyer the answer is unavailable.")
	}
}

// redirected is the answer to a 3xx from the address. StoreLink never
// redirects, so the address is wrong or something in front of StoreLink is
// misconfigured; the target is not trusted with a key.
func redirected(write bool, where string, r *storelinkclient.RedirectError) *apperr.Error {
	what := "a redirect"
	if r.StatusCode != 0 {
		what = fmt.Sprintf("a %d redirect", r.StatusCode)
	}
	if host := r.Host; host != "" {
		// storelinkclient keeps only what looks like a host; the agent's
		// message needs no more than its start.
		if len(host) > 100 {
			host = host[:100] + "..."
		}
		what += " to " + host
	}
	msg := fmt.Sprintf("the server at UPSTREAM_BASE_URL answered %s with %s, which StoreLink never sends; it was not followed, so nothing was sent to that host", where, what)
	if r.Followed {
		msg = fmt.Sprintf("the server at UPSTREAM_BASE_URL answered %s with %s, which StoreLink never sends, and the HTTP client followed it", where, what)
	}
	fix := "Do not retry: tell the user the data is unavailable, and ask an operator to set UPSTREAM_BASE_URL to StoreLink's own address (without /v1) and check it with `storelink-mcp doctor`."
	if write && !r.Followed {
		msg += "; the order was not raised"
		fix = "Do not retry until an operator has set UPSTREAM_BASE_URL to StoreLink's own address (check it with `storelink-mcp doctor`); then the same request can be confirmed again."
	}
	f, _ := describe("", r)
	if write && r.Followed {
		// Only a doer of our own could have followed it, and none does;
		// should one, the order went somewhere and may exist.
		return apperr.Wrap(apperr.WriteOutcomeUnknown, f, msg+", so whether the order was raised is unknown",
			"Do not resubmit. Check korral_get_order_status with the idempotency key first, and ask an operator to fix UPSTREAM_BASE_URL.")
	}
	return apperr.Wrap(apperr.UpstreamContractError, f, msg, fix)
}

func classifyAPIError(write bool, where string, e *storelinkclient.APIError) *apperr.Error {
	if e.ErrorInSuccess {
		if write {
			return apperr.Wrap(apperr.WriteOutcomeUnknown, e,
				"StoreLink answered the order with success status but an error body, so whether it was raised is unknown",
				"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
		}
		// The fault is the cause, so that StoreLink's message is not logged
		// as if it were ours.
		f, _ := describe("", e)
		return apperr.Wrap(apperr.UpstreamContractError, f,
			fmt.Sprintf("StoreLink answered %s with a success status but an error body (code %q); it is treated as an error, never as data", where, e.Code),
			"This is a known StoreLink fault: report it to Korral IT with the call id; do not rely on this endpoint's answer.")
	}
	switch s := e.StatusCode; {
	case s == http.StatusBadRequest:
		return apperr.Wrap(apperr.InvalidArgument, e,
			fmt.Sprintf("StoreLink refused the parameters of %s (%s)", where, e.Code),
			"Check the SKU, ids and dates you passed; correct them and call again.")
	case s == http.StatusUnauthorized:
		return apperr.Wrap(apperr.AuthKeyInvalid, e,
			"StoreLink refused this deployment's key for the store (missing, unknown or rotated)",
			"Nothing the agent can fix: the operator must install the store's current key (keys rotate weekly). Tell the buyer.")
	case s == http.StatusForbidden:
		return apperr.Wrap(apperr.StoreNotAuthorized, e,
			"StoreLink says this deployment's key does not open that store",
			"Use a store listed by korral_list_authorized_stores; if it is listed, the operator must fix the keyring.")
	case s == http.StatusNotFound:
		return apperr.Wrap(apperr.NotFound, e,
			fmt.Sprintf("StoreLink has no such record (%s)", where),
			"Check the id or SKU code; do not guess another one.")
	case s == http.StatusUnprocessableEntity:
		return apperr.Wrap(apperr.UpstreamRejected, e,
			fmt.Sprintf("StoreLink refused the request by a business rule (%s): %s", e.Code, storeLinkWords(e.Message)),
			"Read the rule in the message (for example a supplier minimum order), adjust the request, and preview it again.")
	case s == http.StatusTooManyRequests:
		ae := apperr.Wrap(apperr.RateLimited, e, "StoreLink is rate-limiting this deployment", "")
		ae.RetryAfterSeconds = int(e.RetryAfter.Seconds())
		if ae.RetryAfterSeconds <= 0 {
			ae.RetryAfterSeconds = 30
		}
		ae.Remediation = "Wait " + strconv.Itoa(ae.RetryAfterSeconds) + " seconds before calling again."
		return ae
	case s >= 500 && write:
		// StoreLink may have failed after storing the order; only a status
		// check can tell, so the outcome is reported as unknown.
		return apperr.Wrap(apperr.WriteOutcomeUnknown, e,
			fmt.Sprintf("StoreLink failed with status %d while taking the order, so whether it was raised is unknown", s),
			"Do not resubmit. Check korral_get_order_status with the idempotency key first.")
	case s >= 500:
		ae := apperr.Wrap(apperr.UpstreamUnavailable, e,
			fmt.Sprintf("StoreLink failed with status %d", s),
			"Try again in a minute; if it persists, StoreLink is down: tell the buyer the answer is unavailable.")
		if e.RetryAfter > 0 {
			ae.RetryAfterSeconds = int(e.RetryAfter.Seconds())
		}
		return ae
	case write:
		return apperr.Wrap(apperr.WriteOutcomeUnknown, e,
			fmt.Sprintf("StoreLink answered the order with status %d, which the contract does not allow, so whether it was raised is unknown", s),
			"Do not resubmit. Check korral_get_order_status with the idempotency key first, and report the status to Korral IT with the call id.")
	default:
		return apperr.Wrap(apperr.UpstreamContractError, e,
			fmt.Sprintf("StoreLink answered %s with status %d, which the contract does not allow", where, s),
			"Report it to Korral IT with the call id.")
	}
}

// storeLinkWords is StoreLink's own explanation of a refusal (for example
// the supplier's minimum order), quoted and bounded so it reads as a
// quotation and cannot carry control characters.
func storeLinkWords(msg string) string {
	const limit = 200
	if r := []rune(msg); len(r) > limit {
		msg = string(r[:limit]) + "..."
	}
	return strconv.Quote(msg)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}
