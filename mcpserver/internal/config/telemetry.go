package config

import (
	"net/url"
	"strconv"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/telemetry"
)

// otlpProtocol refuses any OTLP protocol but http/protobuf.
func (l *loader) otlpProtocol(name string) {
	if p := l.getenv(name); p != "" && p != "http/protobuf" {
		l.fail("%s=%s: only http/protobuf is built in; point OTEL_EXPORTER_OTLP_ENDPOINT at the collector's OTLP/HTTP port (4318)", name, shown(p))
	}
}

// samplerArg reads the ratio of the traceidratio samplers; 1 when unset.
func (l *loader) samplerArg(name string) float64 {
	v := l.getenv(name)
	if v == "" {
		return 1
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || f < 0 || f > 1 {
		l.fail("%s=%s: must be a ratio from 0 to 1, like 0.25", name, shown(v))
		return 1
	}
	return f
}

// telemetry sets each signal's endpoint: its own, else the base endpoint
// with the signal's path, unless its exporter is none.
func (l *loader) telemetry(t *telemetry.Settings) {
	traces, metrics := l.otlp.traces.url, l.otlp.metrics.url
	if base := l.otlp.base; base != "" {
		if traces == "" {
			traces = strings.TrimSuffix(base, "/") + "/v1/traces"
		}
		if metrics == "" {
			metrics = strings.TrimSuffix(base, "/") + "/v1/metrics"
		}
	}
	if l.otlp.traces.on {
		t.TracesEndpoint = traces
	}
	if l.otlp.metrics.on {
		t.MetricsEndpoint = metrics
	}
}

// otlpURL reads a collector URL. It may carry credentials, so no message
// quotes it.
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

// otlpHeaders parses key=value,key=value with URL-encoded values (the
// OpenTelemetry form). Values are never quoted back.
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
