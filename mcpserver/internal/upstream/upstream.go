// Package upstream is the MCP server's only client of StoreLink: transport,
// timeouts, circuit breaker, key-rotation retry, request log, and the mapping
// from StoreLink outcomes to error codes. No other package may see an HTTP
// status or a generated response type.
package upstream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
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

// Keys gives the client a store's key. Refresh re-reads the keyring's source
// after StoreLink refused a key; it reports a key only when the source now
// holds a different one, the one case that allows a second attempt.
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
	// BreakerFailures consecutive failures open the breaker; it stays open
	// BreakerCooldown before one probe.
	BreakerFailures uint32
	BreakerCooldown time.Duration
	// ResponseLimit bounds every response body; 0 means the client default.
	ResponseLimit int64
	// MaxPOSPages bounds a walk over point-of-sale pages; 0 means 100.
	MaxPOSPages int
	// POSPageSize is the page size asked of StoreLink; 0 means MaxPOSPageSize.
	POSPageSize int
	// MaxInFlight is the most requests open to StoreLink at once for this
	// Client; 0 means DefaultMaxInFlight. 429s lower the limit for a while.
	MaxInFlight int
	// CallerSharePercent is the part of the budget one caller may hold
	// while another waits (ADR 0036); 0 means callerlimit.DefaultSharePercent.
	CallerSharePercent int
	// MasterDataTTL is how long store, SKU and supplier data are reused; 0
	// means DefaultMasterDataTTL, negative turns reuse off. StoreLink's
	// Cache-Control can only shorten it.
	MasterDataTTL time.Duration
	// MasterDataEntries bounds the reused master data (LRU); 0 means
	// DefaultMasterDataEntries.
	MasterDataEntries int
	// NoCache reads all master data from StoreLink and keeps none (doctor).
	NoCache bool
	// Now is the clock of the cache and of the "not in the future" rules;
	// nil means time.Now.
	Now func() time.Time
	// TracerProvider and MeterProvider receive request spans, durations and
	// the breaker state; nil is a no-op.
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
	// keyEditors are the store keys' request editors.
	keyEditors keyEditors
}

// Defaults of UPSTREAM_TIMEOUT, BREAKER_FAILURES and BREAKER_COOLDOWN.
const (
	DefaultTimeout         = 5 * time.Second
	DefaultBreakerFailures = 5
	DefaultBreakerCooldown = 30 * time.Second
)

// defaultMaxPOSPages is 50,000 transactions at the default page size.
const defaultMaxPOSPages = 100

// New builds a Client. It fails only on a malformed base URL.
func New(opts Options) (*Client, error) {
	opts = withDefaults(opts)
	c := &Client{
		keys:     opts.Keys,
		log:      opts.Logger,
		timeout:  opts.Timeout,
		cooldown: opts.BreakerCooldown,
		maxPages: opts.MaxPOSPages,
		pageSize: opts.POSPageSize,
		now:      opts.Now,
	}
	if !opts.NoCache && opts.MasterDataTTL > 0 {
		c.master = newMasterCache(opts.MasterDataEntries, opts.MasterDataTTL, opts.Now)
	}
	c.breaker = newBreaker(opts.BreakerFailures, opts.BreakerCooldown, opts.Logger)
	c.budget = newBudget(opts.MaxInFlight, opts.CallerSharePercent, c.budgetChanged(opts.MaxInFlight))
	c.meters = newMeters(opts.MeterProvider, opts.UpstreamName, c.breaker, c.budget)
	api, err := newAPI(opts, c.breaker)
	if err != nil {
		return nil, err
	}
	c.api = api
	return c, nil
}

// withDefaults fills the options left at their zero value.
func withDefaults(opts Options) Options {
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Timeout <= 0 {
		opts.Timeout = DefaultTimeout
	}
	if opts.BreakerFailures == 0 {
		opts.BreakerFailures = DefaultBreakerFailures
	}
	if opts.BreakerCooldown <= 0 {
		opts.BreakerCooldown = DefaultBreakerCooldown
	}
	if opts.MaxPOSPages <= 0 {
		opts.MaxPOSPages = defaultMaxPOSPages
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
	return opts
}

// budgetChanged logs each change of the request budget and counts each cut.
func (c *Client) budgetChanged(max int) func(from, to int, why string) {
	return func(from, to int, why string) {
		c.log.Debug("upstream.budget", "from", from, "to", to, "max", max, "reason", why)
		if to < from {
			c.meters.throttled.Add(context.Background(), 1, c.meters.upstream)
		}
	}
}

// newAPI is the generated client over a read and a write transport, both
// behind the breaker. The breaker's doer sends each request with one
// RoundTrip, so no redirect is ever followed (it would carry the store key
// and the order elsewhere); storelinkclient turns a 3xx into a
// RedirectError.
func newAPI(opts Options, breaker *gobreaker.TwoStepCircuitBreaker[struct{}]) (*storelinkclient.ClientWithResponses, error) {
	read, write := transports(opts.Transport)
	doer := &breakerDoer{
		next:    instrumented(read, opts.BaseURL, opts.TracerProvider),
		write:   instrumented(write, opts.BaseURL, opts.TracerProvider),
		breaker: breaker,
	}
	api, err := storelinkclient.NewClientWithResponses(opts.BaseURL,
		storelinkclient.WithHTTPClient(doer), storelinkclient.WithResponseLimit(opts.ResponseLimit))
	if err != nil {
		return nil, fmt.Errorf("upstream base URL: %w", err)
	}
	return api, nil
}

// transports returns the read transport (t, or a fresh one) and the write
// one. Orders use a fresh connection each: a POST on a pooled connection
// that StoreLink closes for idleness would have an unknown outcome, while a
// fresh one either fails to open or carries the order.
func transports(t http.RoundTripper) (read, write http.RoundTripper) {
	if t == nil {
		t = &http.Transport{
			Proxy:               nil, // StoreLink is reached directly, never through an environment proxy
			MaxIdleConnsPerHost: 16,
			IdleConnTimeout:     90 * time.Second,
			// Room for the warm risk check's POS page (16 KiB) in fewer
			// read(2) calls than net/http's default of 4 KiB allows.
			ReadBufferSize: 32 << 10,
		}
	}
	write = t
	if ht, ok := t.(*http.Transport); ok {
		wt := ht.Clone()
		wt.DisableKeepAlives = true
		write = wt
	}
	return t, write
}

// BreakerState reports the breaker's state: "closed", "half-open" or "open".
func (c *Client) BreakerState() string { return c.breaker.State().String() }

// attemptCtx is one request's state, carried to the transport by its
// context: the transport records the status, the span reads the request's
// facts. It is itself the context.Context of the attempt (ctx with one
// value), so an attempt costs one allocation, not one per value.
type attemptCtx struct {
	context.Context
	status int
	info   requestInfo
}

type attemptKey struct{}

// Value returns a for attemptKey and asks the parent for any other key.
func (a *attemptCtx) Value(key any) any {
	if key == (attemptKey{}) {
		return a
	}
	return a.Context.Value(key)
}

// attemptOf is the attempt ctx belongs to; nil outside one.
func attemptOf(ctx context.Context) *attemptCtx {
	a, _ := ctx.Value(attemptKey{}).(*attemptCtx)
	return a
}

// call runs one StoreLink request for a store: key, timeout, attempt log,
// and one retry on a 401 only if the source now holds a different key.
func call[T any](ctx context.Context, c *Client, method, route, storeID string, do func(ctx context.Context, key keyring.Key) (*T, error)) (*T, error) {
	key, ok := c.keys.Key(storeID)
	if !ok {
		// The tools resolve scope first; nothing may leave for a store without
		// a key.
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
	// Waiting for a slot is outside the request's timeout.
	place, err := c.budget.acquire(ctx, callid.From(ctx))
	if err != nil {
		return nil, err
	}
	a := &attemptCtx{Context: ctx, info: requestInfo{method: method, route: route, storeID: storeID, attempt: attempt}}
	actx, cancel := context.WithTimeout(a, c.timeout)
	defer cancel()
	start := time.Now()
	v, err := do(actx, key)
	status := a.status
	c.budget.release(place, loadSignal(status, err))
	took := time.Since(start)
	c.recordRequest(ctx, method, route, status, took)
	callid.NoteRequest(ctx, took)
	if err == nil && v == nil {
		err = storelinkclient.ErrMalformedResponse
	}
	if errors.Is(err, storelinkclient.ErrMalformedResponse) && status >= 500 {
		// A failing StoreLink often answers with non-JSON; the status matters.
		err = &storelinkclient.APIError{StatusCode: status, Message: "non-JSON error body"}
	}
	err = outsideContract(method, route, err)
	// A request answered at its first attempt is at debug: the call's end
	// line and the request metrics cover it (ADR 0046). A retry that
	// succeeded is worth a line at info, a failure at warn.
	level := slog.LevelDebug
	switch {
	case err != nil:
		level = slog.LevelWarn
	case attempt > 1:
		level = slog.LevelInfo
	}
	if c.log.Enabled(ctx, level) {
		// The line's attributes are built only when it is written.
		attrs := [...]slog.Attr{
			slog.String("call_id", callid.From(ctx)),
			slog.String("method", method),
			slog.String("route", route),
			slog.String("store_id", storeID),
			slog.Int("status", status),
			slog.Float64("duration_ms", float64(took.Microseconds())/1000),
			slog.Int("attempt", attempt),
			slog.String("breaker", c.breaker.State().String()),
			{},
		}
		n := len(attrs) - 1
		if err != nil {
			text := safeErrorText(err)
			if f, ok := describe(route, err); ok {
				// A decoding error may quote the answer; name field and rule instead.
				text = f.Error()
			}
			attrs[n] = slog.String("error", text)
			n++
		}
		c.log.LogAttrs(ctx, level, "upstream.request", attrs[:n]...)
	}
	if err != nil {
		return nil, err
	}
	return v, nil
}

// loadSignal is what an answer says about StoreLink's capacity: a 429, or a
// 503 with Retry-After, asks for less; any other answer shows it served.
func loadSignal(status int, err error) signal {
	switch {
	case status == http.StatusTooManyRequests:
		return throttled
	case status == http.StatusServiceUnavailable && asksToWait(err):
		return throttled
	case status >= 200 && status < 500:
		return served
	default:
		return neutral
	}
}

// asksToWait reports an *APIError with a Retry-After. A function of its
// own, so the error's variable is made only when a 503 asks.
func asksToWait(err error) bool {
	var apiErr *storelinkclient.APIError
	return errors.As(err, &apiErr) && apiErr.RetryAfter > 0
}

// safeErrorText is the error as logged, with StoreLink's words kept short.
// Keys travel only in headers, so none can appear here.
func safeErrorText(err error) string {
	s := err.Error()
	if len(s) > 300 {
		s = s[:300] + "..."
	}
	return s
}
