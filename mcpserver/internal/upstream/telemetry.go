package upstream

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"github.com/sony/gobreaker/v2"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"
)

// Breaker states as the storelink.breaker.state gauge reports them.
const (
	breakerClosed   = 0
	breakerHalfOpen = 1
	breakerOpen     = 2
)

// requestInfo is what a StoreLink request's span may show: the operation
// (method and route template, never the filled path), store and attempt.
type requestInfo struct {
	method, route, storeID string
	attempt                int
}

// instrumented wraps rt in otelhttp, so each StoreLink request is a child
// span of the tool call's. A nil tp leaves rt alone.
func instrumented(rt http.RoundTripper, base string, tp trace.TracerProvider) http.RoundTripper {
	if tp == nil {
		return rt
	}
	return otelhttp.NewTransport(spanFacts{next: rt, base: strings.TrimSuffix(base, "/")},
		otelhttp.WithTracerProvider(tp),
		// Duration is this package's own histogram, by operation, not
		// otelhttp's by URL.
		otelhttp.WithMeterProvider(metricnoop.NewMeterProvider()),
		otelhttp.WithPropagators(propagation.TraceContext{}),
		otelhttp.WithSpanNameFormatter(func(_ string, r *http.Request) string {
			if a := attemptOf(r.Context()); a != nil {
				return a.info.method + " " + a.info.route
			}
			return r.Method
		}),
	)
}

// spanFacts names the operation, store and attempt on otelhttp's span and
// replaces its URL with the route template. No header is recorded, so the
// store key never reaches a span.
type spanFacts struct {
	next http.RoundTripper
	base string
}

func (t spanFacts) RoundTrip(r *http.Request) (*http.Response, error) {
	sp := trace.SpanFromContext(r.Context())
	if a := attemptOf(r.Context()); a != nil && sp.IsRecording() {
		info := a.info
		sp.SetAttributes(
			attribute.String("url.full", t.base+info.route),
			attribute.String("url.template", info.route),
			attribute.String("storelink.operation", info.method+" "+info.route),
			attribute.String("storelink.store_id", info.storeID),
			attribute.Int("storelink.attempt", info.attempt),
		)
	}
	return t.next.RoundTrip(r)
}

// meters are the package's instruments; no-ops without a MeterProvider.
type meters struct {
	requests metric.Float64Histogram
	// unknownFields counts answers taken with undeclared properties
	// (ADR 0017).
	unknownFields metric.Int64Counter
	// throttled counts the budget's decreases (budget.go).
	throttled metric.Int64Counter
	// upstream labels the budget's counter.
	upstream metric.AddOption
	// labels label the request histogram.
	labels *requestLabels
}

// newMeters makes the request histogram and the breaker gauge; a failed
// instrument is a no-op.
func newMeters(mp metric.MeterProvider, upstreamName string, breaker *gobreaker.TwoStepCircuitBreaker[struct{}], b *budget) meters {
	m := telemetry.Meter(mp)
	out := meters{upstream: metric.WithAttributes(), labels: &requestLabels{}}
	out.requests, _ = m.Float64Histogram("storelink.client.request.duration", metric.WithUnit("s"),
		metric.WithDescription("Duration of each StoreLink request, by operation and status class."),
		metric.WithExplicitBucketBoundaries(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30))
	out.unknownFields, _ = m.Int64Counter("storelink.upstream.unknown_fields", metric.WithUnit("{answer}"),
		metric.WithDescription("StoreLink answers taken although they carried properties the contract does not declare, by operation."))
	if out.unknownFields == nil {
		out.unknownFields, _ = metricnoop.NewMeterProvider().Meter("").Int64Counter("")
	}
	out.throttled, _ = m.Int64Counter("storelink.upstream.budget.decreases", metric.WithUnit("{decrease}"),
		metric.WithDescription("Times StoreLink's 429s (or 503s with Retry-After) halved the concurrency budget."))
	if out.throttled == nil {
		out.throttled, _ = metricnoop.NewMeterProvider().Meter("").Int64Counter("")
	}
	if mp == nil {
		return out
	}
	if upstreamName == "" {
		upstreamName = "storelink"
	}
	upAttr := metric.WithAttributes(attribute.String("storelink.upstream", upstreamName))
	out.upstream = upAttr
	_, _ = m.Int64ObservableGauge("storelink.breaker.state", metric.WithUnit("{state}"),
		metric.WithDescription("The StoreLink circuit breaker: 0 closed, 1 half-open, 2 open."),
		metric.WithInt64Callback(func(_ context.Context, o metric.Int64Observer) error {
			v := int64(breakerClosed)
			switch breaker.State() {
			case gobreaker.StateOpen:
				v = breakerOpen
			case gobreaker.StateHalfOpen:
				v = breakerHalfOpen
			}
			o.Observe(v, upAttr)
			return nil
		}))
	limit, _ := m.Int64ObservableGauge("storelink.upstream.budget.limit", metric.WithUnit("{request}"),
		metric.WithDescription("The concurrency budget: requests StoreLink may have open at once now (at most UPSTREAM_MAX_IN_FLIGHT)."))
	open, _ := m.Int64ObservableGauge("storelink.upstream.budget.in_flight", metric.WithUnit("{request}"),
		metric.WithDescription("Requests open to StoreLink now."))
	queued, _ := m.Int64ObservableGauge("storelink.upstream.budget.queued", metric.WithUnit("{request}"),
		metric.WithDescription("Requests waiting for a place in the concurrency budget."))
	if limit != nil && open != nil && queued != nil {
		_, _ = m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
			l, n, q := b.state()
			o.ObserveInt64(limit, int64(l), upAttr)
			o.ObserveInt64(open, int64(n), upAttr)
			o.ObserveInt64(queued, int64(q), upAttr)
			return nil
		}, limit, open, queued)
	}
	return out
}

// recordRequest records one attempt's duration with its bounded labels.
func (c *Client) recordRequest(ctx context.Context, method, route string, status int, d time.Duration) {
	if !c.meters.requests.Enabled(ctx) {
		return
	}
	if ctx.Err() != nil {
		// A caller that gave up still has its request counted.
		ctx = context.WithoutCancel(ctx)
	}
	c.meters.requests.Record(ctx, d.Seconds(), c.meters.labels.of(method, route, status))
}

// requestLabels are the request histogram's attribute sets, made once per
// operation and status class: there are a few dozen at most.
type requestLabels struct {
	mu  sync.RWMutex
	set map[labelKey]metric.RecordOption
}

type labelKey struct {
	method, route string
	// class is the status's hundreds, 0 for none.
	class int
}

// of is the attribute set of a request's operation and status.
func (l *requestLabels) of(method, route string, status int) metric.RecordOption {
	k := labelKey{method: method, route: route}
	if status >= 100 && status < 600 {
		k.class = status / 100
	}
	l.mu.RLock()
	opt, ok := l.set[k]
	l.mu.RUnlock()
	if ok {
		return opt
	}
	opt = metric.WithAttributes(
		attribute.String("storelink.operation", method+" "+route),
		attribute.String("http.response.status_class", telemetry.StatusClass(status)),
	)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.set == nil {
		l.set = map[labelKey]metric.RecordOption{}
	}
	l.set[k] = opt
	return opt
}
