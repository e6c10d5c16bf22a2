package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/korral/storelink/mcpserver/internal/telemetry"
)

// defaultTelemetry is what Load reads with no OTEL_* variable set: no
// export at all.
var defaultTelemetry = telemetry.Settings{ServiceName: "storelink-mcp", Sampler: "parentbased_always_on", SamplerArg: 1, MetricInterval: time.Minute}

func TestTelemetryFromStandardVariables(t *testing.T) {
	got, err := Load(env(map[string]string{
		"HOME":                        "/h",
		"OTEL_EXPORTER_OTLP_ENDPOINT": "http://127.0.0.1:4318/",
		"OTEL_SERVICE_NAME":           "storelink-eu",
		"OTEL_TRACES_SAMPLER":         "parentbased_traceidratio",
		"OTEL_TRACES_SAMPLER_ARG":     "0.25",
		"OTEL_EXPORTER_OTLP_HEADERS":  "x-api-key=s%3Dcret, tenant=korral",
		"OTEL_METRICS_EXPORTER":       "none",
		"OTEL_METRIC_EXPORT_INTERVAL": "5000",
		"MCP_METRICS_TOKEN_FILE":      "/etc/storelink/metrics-token",
	}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	want := telemetry.Settings{ServiceName: "storelink-eu", TracesEndpoint: "http://127.0.0.1:4318/v1/traces",
		Headers: map[string]string{"x-api-key": "s=cret", "tenant": "korral"}, Sampler: "parentbased_traceidratio", SamplerArg: 0.25, MetricInterval: 5 * time.Second}
	if diff := cmp.Diff(want, got.Telemetry); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if !got.Telemetry.Tracing() || got.Telemetry.MetricsPush() {
		t.Errorf("tracing %v, metrics push %v", got.Telemetry.Tracing(), got.Telemetry.MetricsPush())
	}
	if got.MetricsTokenFile != "/etc/storelink/metrics-token" {
		t.Errorf("metrics token file %q", got.MetricsTokenFile)
	}
	if strings.Contains(got.String(), "cret") {
		t.Errorf("the summary shows an export header: %s", got)
	}
}

func TestTelemetrySignalEndpointsAndDisable(t *testing.T) {
	got, err := Load(env(map[string]string{
		"HOME":                                "/h",
		"OTEL_EXPORTER_OTLP_ENDPOINT":         "http://collector:4318",
		"OTEL_EXPORTER_OTLP_METRICS_ENDPOINT": "http://metrics:4318/v1/metrics",
		"OTEL_SDK_DISABLED":                   "true",
	}), noFiles)
	if err != nil {
		t.Fatal(err)
	}
	tl := got.Telemetry
	if tl.TracesEndpoint != "http://collector:4318/v1/traces" || tl.MetricsEndpoint != "http://metrics:4318/v1/metrics" {
		t.Errorf("endpoints %q %q", tl.TracesEndpoint, tl.MetricsEndpoint)
	}
	if tl.Tracing() || tl.MetricsPush() {
		t.Error("OTEL_SDK_DISABLED=true still exports")
	}
}

func TestTelemetryRefusals(t *testing.T) {
	for name, tc := range map[string]struct {
		env         map[string]string
		want, never string
	}{
		"grpc":     {map[string]string{"OTEL_EXPORTER_OTLP_PROTOCOL": "grpc"}, "only http/protobuf", ""},
		"sampler":  {map[string]string{"OTEL_TRACES_SAMPLER": "sometimes"}, "OTEL_TRACES_SAMPLER", ""},
		"ratio":    {map[string]string{"OTEL_TRACES_SAMPLER_ARG": "2"}, "ratio from 0 to 1", ""},
		"url":      {map[string]string{"OTEL_EXPORTER_OTLP_ENDPOINT": "collector:4318?token=hunter22"}, "absolute http or https URL", "hunter22"},
		"headers":  {map[string]string{"OTEL_EXPORTER_OTLP_HEADERS": "hunter22"}, "not key=value", "hunter22"},
		"exporter": {map[string]string{"OTEL_TRACES_EXPORTER": "jaeger"}, "OTEL_TRACES_EXPORTER", ""},
		"interval": {map[string]string{"OTEL_METRIC_EXPORT_INTERVAL": "10"}, "OTEL_METRIC_EXPORT_INTERVAL", ""},
	} {
		t.Run(name, func(t *testing.T) {
			tc.env["HOME"] = "/h"
			_, err := Load(env(tc.env), noFiles)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want %q", err, tc.want)
			}
			if tc.never != "" && strings.Contains(err.Error(), tc.never) {
				t.Errorf("the error quotes a secret: %v", err)
			}
		})
	}
}
