package config

import (
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Telemetry is the OpenTelemetry part of the configuration, read from the
// standard OTEL_* variables (the names every collector's documentation
// uses), so that no home-made name stands where a standard one exists.
// Only the variables listed in Documentation are understood; the SDK is
// handed their values explicitly, so what runs is what this package read.
type Telemetry struct {
	// Disabled is OTEL_SDK_DISABLED=true: nothing is exported over OTLP,
	// whatever else is set. The Prometheus endpoint (--metrics) still works.
	Disabled bool
	// ServiceName is the service.name resource attribute.
	ServiceName string
	// TracesEndpoint and MetricsEndpoint are the full OTLP/HTTP URLs spans
	// and metrics are posted to; "" exports none of that signal.
	TracesEndpoint  string
	MetricsEndpoint string
	// Headers are sent with every export (a collector's API key, say).
	// They may hold credentials: never log them.
	Headers map[string]string
	// Sampler is the OTEL_TRACES_SAMPLER name, SamplerArg its ratio.
	Sampler    string
	SamplerArg float64
	// MetricInterval is how often metrics are pushed over OTLP.
	MetricInterval time.Duration
}

// Tracing reports whether spans are exported.
func (t Telemetry) Tracing() bool { return !t.Disabled && t.TracesEndpoint != "" }

// MetricsPush reports whether metrics are pushed over OTLP.
func (t Telemetry) MetricsPush() bool { return !t.Disabled && t.MetricsEndpoint != "" }

// Samplers are the OTEL_TRACES_SAMPLER values understood.
var Samplers = []string{"parentbased_always_on", "parentbased_always_off", "parentbased_traceidratio", "always_on", "always_off", "traceidratio"}

// telemetryDocs documents the OTEL_* variables Load reads.
func telemetryDocs() []Var {
	return []Var{
		{Name: "OTEL_SDK_DISABLED", Default: "false", Description: "true exports nothing over OTLP, whatever else is set; `/metrics` (`serve --metrics`) still answers."},
		{Name: "OTEL_SERVICE_NAME", Default: "storelink-mcp", Description: "The `service.name` of every span and metric exported."},
		{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Default: "", Description: "Base URL of an OTLP/HTTP collector (such as http://127.0.0.1:4318); spans go to /v1/traces and metrics to /v1/metrics under it. Empty: no tracing and no metrics push (docs/observability.md)."},
		{Name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", Default: "", Description: "Full OTLP/HTTP URL for spans, overriding OTEL_EXPORTER_OTLP_ENDPOINT for traces."},
		{Name: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", Default: "", Description: "Full OTLP/HTTP URL for metrics, overriding OTEL_EXPORTER_OTLP_ENDPOINT for metrics."},
		{Name: "OTEL_EXPORTER_OTLP_HEADERS", Default: "", Secret: true, Description: "Headers sent with every export, as comma-separated key=value pairs (URL-encoded values), such as a collector's API key."},
		{Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Default: "http/protobuf", Description: "Only http/protobuf is built in; any other value is refused."},
		{Name: "OTEL_TRACES_EXPORTER", Default: "otlp", Description: "otlp, or none to export no spans while metrics are pushed."},
		{Name: "OTEL_METRICS_EXPORTER", Default: "otlp", Description: "otlp, or none to push no metrics over OTLP while spans are exported (`/metrics` is not affected)."},
		{Name: "OTEL_TRACES_SAMPLER", Default: "parentbased_always_on", Description: "Which calls are traced: parentbased_always_on, parentbased_always_off, parentbased_traceidratio, always_on, always_off or traceidratio."},
		{Name: "OTEL_TRACES_SAMPLER_ARG", Default: "1", Description: "The ratio (0 to 1) of the traceidratio samplers."},
		{Name: "OTEL_METRIC_EXPORT_INTERVAL", Default: "60000", Description: "Milliseconds between two OTLP metric pushes (1000 to 3600000)."},
		{Name: "MCP_METRICS_TOKEN_FILE", Default: "", Description: "File holding the bearer token `/metrics` requires (`serve --metrics`); required when that address is not loopback. Never one of the agents' tokens."},
	}
}

// telemetry reads the OTEL_* variables.
func (l *loader) telemetry() Telemetry {
	t := Telemetry{
		Disabled:    l.boolean("OTEL_SDK_DISABLED"),
		ServiceName: l.getenv("OTEL_SERVICE_NAME"),
		Sampler:     l.enum("OTEL_TRACES_SAMPLER", Samplers[0], Samplers...),
	}
	if t.ServiceName == "" {
		t.ServiceName = "storelink-mcp"
	}
	if p := l.getenv("OTEL_EXPORTER_OTLP_PROTOCOL"); p != "" && p != "http/protobuf" {
		l.fail("OTEL_EXPORTER_OTLP_PROTOCOL=%s: only http/protobuf is built in; point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (4318)", shown(p))
	}
	t.SamplerArg = 1
	if v := l.getenv("OTEL_TRACES_SAMPLER_ARG"); v != "" {
		f, err := strconv.ParseFloat(v, 64)
		if err != nil || f < 0 || f > 1 {
			l.fail("OTEL_TRACES_SAMPLER_ARG=%s: must be a ratio from 0 to 1, like 0.25", shown(v))
		} else {
			t.SamplerArg = f
		}
	}
	t.MetricInterval = time.Duration(l.intIn("OTEL_METRIC_EXPORT_INTERVAL", 60000, 1000, 3600000)) * time.Millisecond
	base := l.otlpURL("OTEL_EXPORTER_OTLP_ENDPOINT")
	traces, metrics := l.otlpURL("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"), l.otlpURL("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT")
	if base != "" {
		if traces == "" {
			traces = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
		if metrics == "" {
			metrics = strings.TrimSuffix(base, "/") + "/v1/metrics"
		}
	}
	if l.enum("OTEL_TRACES_EXPORTER", "otlp", "otlp", "none") == "otlp" {
		t.TracesEndpoint = traces
	}
	if l.enum("OTEL_METRICS_EXPORTER", "otlp", "otlp", "none") == "otlp" {
		t.MetricsEndpoint = metrics
	}
	t.Headers = l.otlpHeaders("OTEL_EXPORTER_OTLP_HEADERS")
	return t
}

// otlpURL reads a collector URL. It may carry credentials in its user info
// or query, so no message quotes it.
func (l *loader) otlpURL(name string) string {
	v := l.getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		l.fail("%s: must be an absolute http or https URL like http://127.0.0.1:4318", name)
		return ""
	}
	return v
}

// otlpHeaders parses key=value,key=value with URL-encoded values, the form
// the OpenTelemetry specification gives. Values are never quoted back.
func (l *loader) otlpHeaders(name string) map[string]string {
	v := l.getenv(name)
	if v == "" {
		return nil
	}
	out := map[string]string{}
	for i, pair := range strings.Split(v, ",") {
		k, val, ok := strings.Cut(pair, "=")
		k = strings.TrimSpace(k)
		dec, err := url.PathUnescape(strings.TrimSpace(val))
		if !ok || k == "" || err != nil {
			l.fail("%s: entry %d is not key=value with a URL-encoded value", name, i+1)
			return nil
		}
		out[k] = dec
	}
	return out
}

// MetricsTokenFile is the path of the token /metrics requires, read here
// so that the scan keeps every variable in this package.
func (l *loader) metricsTokenFile() string { return l.getenv("MCP_METRICS_TOKEN_FILE") }
