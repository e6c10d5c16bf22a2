// Package telemetry is the server's OpenTelemetry: the helpers here give the
// other packages tracers, meters and trace ids; Settings are the OTEL_*
// settings, which package otelsdk builds the SDK from. Nil
// providers mean no-op ones, and telemetry must never fail a call.
package telemetry

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/metric"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	"go.opentelemetry.io/otel/trace"
	tracenoop "go.opentelemetry.io/otel/trace/noop"
)

// ScopeName is the instrumentation scope of every span and instrument.
const ScopeName = "github.com/korral/storelink/mcpserver"

// Tracer returns tp's tracer for the server, or a no-op one for nil.
func Tracer(tp trace.TracerProvider) trace.Tracer {
	if tp == nil {
		tp = tracenoop.NewTracerProvider()
	}
	return tp.Tracer(ScopeName)
}

// Meter returns mp's meter for the server, or a no-op one for nil.
func Meter(mp metric.MeterProvider) metric.Meter {
	if mp == nil {
		mp = metricnoop.NewMeterProvider()
	}
	return mp.Meter(ScopeName)
}

// TraceID is the trace id of the span in ctx, or "" when there is none.
func TraceID(ctx context.Context) string {
	if sc := trace.SpanContextFromContext(ctx); sc.HasTraceID() {
		return sc.TraceID().String()
	}
	return ""
}

// LogHandler adds the trace_id of the call's span to every line logged with
// its context.
type LogHandler struct{ Next slog.Handler }

// Enabled implements slog.Handler.
func (h LogHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.Next.Enabled(ctx, l) }

// Handle implements slog.Handler.
func (h LogHandler) Handle(ctx context.Context, r slog.Record) error {
	if id := TraceID(ctx); id != "" {
		r.AddAttrs(slog.String("trace_id", id))
	}
	return h.Next.Handle(ctx, r)
}

// WithAttrs implements slog.Handler.
func (h LogHandler) WithAttrs(as []slog.Attr) slog.Handler { return LogHandler{h.Next.WithAttrs(as)} }

// WithGroup implements slog.Handler.
func (h LogHandler) WithGroup(name string) slog.Handler { return LogHandler{h.Next.WithGroup(name)} }

// StatusClass is an HTTP status as a bounded label: "2xx" to "5xx", or
// "none" when no answer came.
func StatusClass(status int) string {
	switch {
	case status >= 100 && status < 600:
		return string(rune('0'+status/100)) + "xx"
	default:
		return "none"
	}
}
