package telemetry

import "time"

// Settings are the OpenTelemetry settings, read by package config from the
// standard OTEL_* variables of its settings table and given to Start.
type Settings struct {
	// Disabled is OTEL_SDK_DISABLED=true: nothing is exported over OTLP.
	// The Prometheus endpoint (--metrics) still works.
	Disabled bool
	// ServiceName is the service.name resource attribute.
	ServiceName string
	// TracesEndpoint and MetricsEndpoint are the full OTLP/HTTP URLs; ""
	// exports none of that signal.
	TracesEndpoint  string
	MetricsEndpoint string
	// Headers are sent with every export. They may hold credentials: never
	// log them.
	Headers map[string]string
	// Sampler is the OTEL_TRACES_SAMPLER name, SamplerArg its ratio.
	Sampler    string
	SamplerArg float64
	// MetricInterval is how often metrics are pushed over OTLP.
	MetricInterval time.Duration
}

// Tracing reports whether spans are exported.
func (t Settings) Tracing() bool { return !t.Disabled && t.TracesEndpoint != "" }

// MetricsPush reports whether metrics are pushed over OTLP.
func (t Settings) MetricsPush() bool { return !t.Disabled && t.MetricsEndpoint != "" }

// Samplers are the OTEL_TRACES_SAMPLER values understood.
var Samplers = []string{"parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio", "always_on", "always_off", "traceidratio"}
