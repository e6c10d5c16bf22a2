package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
)

// Export bounds, so an unreachable collector never costs the call: the span
// queue size (then newest dropped), the export timeout and the final flush.
const (
	spanQueueSize = 2048
	spanBatchSize = 512
	exportTimeout = 5 * time.Second
	shutdownFlush = 2 * time.Second
)

// telemetrySetup is the process's TracerProvider and MeterProvider, built
// from the OTEL_* settings; each is nil when nothing would receive it.
type telemetrySetup struct {
	tracer trace.TracerProvider
	meter  metric.MeterProvider
	// metrics is the Prometheus handler of `serve --metrics`; nil without it.
	metrics http.Handler
	// shutdown flushes and stops the SDK, bounded by shutdownFlush.
	shutdown []func(context.Context) error
}

// exportWarning logs the first export failure as a warning and counts the
// rest silently.
type exportWarning struct {
	log  *slog.Logger
	once sync.Once
}

func (w *exportWarning) Handle(err error) {
	w.once.Do(func() {
		w.log.Warn("telemetry.export_failed", "error", textBound(err.Error()),
			"note", "spans and metrics wait in a bounded queue and are dropped when it is full; calls are unaffected; this is logged once")
	})
}

func textBound(s string) string {
	if len(s) > 300 {
		return s[:300] + "..."
	}
	return s
}

// startTelemetry builds the providers for a server; opts.Metrics says
// whether `serve --metrics` asked for /metrics.
func (a *App) startTelemetry(context.Context) error {
	prometheusEndpoint := a.opts.Metrics
	t := a.cfg.Telemetry
	res := resource.NewWithAttributes("", attribute.String("service.name", t.ServiceName), attribute.String("service.version", Version))
	if t.Tracing() || t.MetricsPush() {
		otel.SetErrorHandler(&exportWarning{log: a.log})
	}
	if t.Tracing() {
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(t.TracesEndpoint),
			otlptracehttp.WithHeaders(t.Headers), otlptracehttp.WithTimeout(exportTimeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 10 * time.Second}))
		if err != nil {
			return exit2(fmt.Errorf("configuration: OTEL_EXPORTER_OTLP_ENDPOINT: %w", err))
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sampler(t)),
			sdktrace.WithBatcher(exp, sdktrace.WithMaxQueueSize(spanQueueSize), sdktrace.WithMaxExportBatchSize(spanBatchSize),
				sdktrace.WithBatchTimeout(time.Second), sdktrace.WithExportTimeout(exportTimeout)))
		a.tel.tracer = tp
		a.tel.shutdown = append(a.tel.shutdown, tp.Shutdown)
	}
	var readers []sdkmetric.Option
	if t.MetricsPush() {
		exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(t.MetricsEndpoint),
			otlpmetrichttp.WithHeaders(t.Headers), otlpmetrichttp.WithTimeout(exportTimeout),
			otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 10 * time.Second}))
		if err != nil {
			return exit2(fmt.Errorf("configuration: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: %w", err))
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(t.MetricInterval), sdkmetric.WithTimeout(exportTimeout))))
	}
	if prometheusEndpoint {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return fmt.Errorf("metrics: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(exp))
		a.tel.metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil})
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		a.tel.meter = mp
		a.tel.shutdown = append(a.tel.shutdown, mp.Shutdown)
	}
	a.closes = append(a.closes, a.tel.close)
	if t.Tracing() || t.MetricsPush() {
		a.log.Info("telemetry.enabled", "traces", t.TracesEndpoint != "" && t.Tracing(), "metrics_push", t.MetricsPush(), "sampler", t.Sampler, "service_name", t.ServiceName)
	}
	return nil
}

// close flushes what is queued, for at most shutdownFlush in all.
func (t *telemetrySetup) close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownFlush)
	defer cancel()
	var errs []error
	for _, f := range t.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// sampler is the OTEL_TRACES_SAMPLER the configuration read.
func sampler(t config.Telemetry) sdktrace.Sampler {
	switch t.Sampler {
	case "always_on":
		return sdktrace.AlwaysSample()
	case "always_off":
		return sdktrace.NeverSample()
	case "traceidratio":
		return sdktrace.TraceIDRatioBased(t.SamplerArg)
	case "parentbased_always_off":
		return sdktrace.ParentBased(sdktrace.NeverSample())
	case "parentbased_traceidratio":
		return sdktrace.ParentBased(sdktrace.TraceIDRatioBased(t.SamplerArg))
	}
	return sdktrace.ParentBased(sdktrace.AlwaysSample())
}

// registerLedgerGauges observes the ledger on every collection: entries per
// state and the approvals, in one grouped query of the state database.
func (a *App) registerLedgerGauges() {
	counter, ok := a.db.(state.Counter)
	if a.tel.meter == nil || !ok {
		return
	}
	m := telemetry.Meter(a.tel.meter)
	entries, _ := m.Int64ObservableGauge("storelink.ledger.entries", metric.WithUnit("{entry}"),
		metric.WithDescription("Order ledger entries by state (unknown and pending_approval need a person)."))
	pending, _ := m.Int64ObservableGauge("storelink.approvals.pending", metric.WithUnit("{approval}"),
		metric.WithDescription("Orders staged for approval that have not lapsed."))
	lapsed, _ := m.Int64ObservableGauge("storelink.approvals.lapsed", metric.WithUnit("{approval}"),
		metric.WithDescription("Staged orders whose approval lapsed (expired, or past their expiry and not yet marked)."))
	next, _ := m.Float64ObservableGauge("storelink.approvals.next_expiry", metric.WithUnit("s"),
		metric.WithDescription("Seconds until the soonest pending approval lapses; absent when none is pending."))
	if entries == nil || pending == nil || lapsed == nil || next == nil {
		return
	}
	_, _ = m.RegisterCallback(func(ctx context.Context, o metric.Observer) error {
		ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		now := a.now()
		c, err := counter.CountEntries(ctx, now)
		if err != nil {
			// /readyz reports the database.
			return nil
		}
		for _, st := range state.States() {
			o.ObserveInt64(entries, c.ByState[st], metric.WithAttributes(attribute.String("state", string(st))))
		}
		o.ObserveInt64(pending, c.ByState[state.StatePendingApproval]-c.PendingLapsed)
		o.ObserveInt64(lapsed, c.ByState[state.StateExpired]+c.PendingLapsed)
		if !c.NextExpiry.IsZero() {
			o.ObserveFloat64(next, c.NextExpiry.Sub(now).Seconds())
		}
		return nil
	}, entries, pending, lapsed, next)
}
