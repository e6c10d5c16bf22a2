// Package otelsdk builds the process's OpenTelemetry SDK (OTLP export and
// the Prometheus reader) from the OTEL_* settings. It is kept apart from
// package telemetry so the packages that only record spans and metrics do
// not link the exporters and their HTTP clients.
package otelsdk

import (
	"context"
	"errors"
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
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
)

// Export bounds, so an unreachable collector never costs the call: the span
// queue size (then newest dropped), the export timeout and the final flush.
const (
	spanQueueSize = 2048
	spanBatchSize = 512
	exportTimeout = 5 * time.Second
	shutdownFlush = 2 * time.Second
)

// SDK is the process's TracerProvider and MeterProvider, built from the
// OTEL_* settings; each is nil when nothing would receive it.
type SDK struct {
	Tracer trace.TracerProvider
	Meter  metric.MeterProvider
	// Metrics is the Prometheus handler of `serve --metrics`; nil without it.
	Metrics http.Handler
	// shutdown flushes and stops the SDK, bounded by shutdownFlush.
	shutdown []func(context.Context) error
}

// ConfigError is a setting the SDK cannot use.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

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

// Start builds the providers of a server from t; prometheusEndpoint says
// whether `serve --metrics` asked for /metrics. A setting the exporters
// refuse is a *ConfigError. Close flushes what Start built.
func Start(t telemetry.Settings, version string, prometheusEndpoint bool, log *slog.Logger) (SDK, error) {
	var sdk SDK
	res := resource.NewWithAttributes("", attribute.String("service.name", t.ServiceName), attribute.String("service.version", version))
	if t.Tracing() || t.MetricsPush() {
		otel.SetErrorHandler(&exportWarning{log: log})
	}
	if t.Tracing() {
		exp, err := otlptracehttp.New(context.Background(), otlptracehttp.WithEndpointURL(t.TracesEndpoint),
			otlptracehttp.WithHeaders(t.Headers), otlptracehttp.WithTimeout(exportTimeout),
			otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 10 * time.Second}))
		if err != nil {
			return sdk, &ConfigError{fmt.Errorf("configuration: OTEL_EXPORTER_OTLP_ENDPOINT: %w", err)}
		}
		tp := sdktrace.NewTracerProvider(sdktrace.WithResource(res), sdktrace.WithSampler(sampler(t)),
			sdktrace.WithBatcher(exp, sdktrace.WithMaxQueueSize(spanQueueSize), sdktrace.WithMaxExportBatchSize(spanBatchSize),
				sdktrace.WithBatchTimeout(time.Second), sdktrace.WithExportTimeout(exportTimeout)))
		sdk.Tracer = tp
		sdk.shutdown = append(sdk.shutdown, tp.Shutdown)
	}
	var readers []sdkmetric.Option
	if t.MetricsPush() {
		exp, err := otlpmetrichttp.New(context.Background(), otlpmetrichttp.WithEndpointURL(t.MetricsEndpoint),
			otlpmetrichttp.WithHeaders(t.Headers), otlpmetrichttp.WithTimeout(exportTimeout),
			otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: true, InitialInterval: 500 * time.Millisecond, MaxInterval: 2 * time.Second, MaxElapsedTime: 10 * time.Second}))
		if err != nil {
			return sdk, &ConfigError{fmt.Errorf("configuration: OTEL_EXPORTER_OTLP_METRICS_ENDPOINT: %w", err)}
		}
		readers = append(readers, sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(t.MetricInterval), sdkmetric.WithTimeout(exportTimeout))))
	}
	if prometheusEndpoint {
		reg := prometheus.NewRegistry()
		reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
		exp, err := otelprom.New(otelprom.WithRegisterer(reg))
		if err != nil {
			return sdk, fmt.Errorf("metrics: %w", err)
		}
		readers = append(readers, sdkmetric.WithReader(exp))
		sdk.Metrics = promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorLog: nil})
	}
	if len(readers) > 0 {
		mp := sdkmetric.NewMeterProvider(append(readers, sdkmetric.WithResource(res))...)
		sdk.Meter = mp
		sdk.shutdown = append(sdk.shutdown, mp.Shutdown)
	}
	if t.Tracing() || t.MetricsPush() {
		log.Info("telemetry.enabled", "traces", t.TracesEndpoint != "" && t.Tracing(), "metrics_push", t.MetricsPush(), "sampler", t.Sampler, "service_name", t.ServiceName)
	}
	return sdk, nil
}

// Close flushes what is queued, for at most shutdownFlush in all.
func (s SDK) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownFlush)
	defer cancel()
	var errs []error
	for _, f := range s.shutdown {
		errs = append(errs, f(ctx))
	}
	return errors.Join(errs...)
}

// sampler is the OTEL_TRACES_SAMPLER the configuration read.
func sampler(t telemetry.Settings) sdktrace.Sampler {
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
