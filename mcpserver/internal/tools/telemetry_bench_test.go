package tools

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/prometheus/client_golang/prometheus"
	"go.opentelemetry.io/otel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// failingExporter is a collector that is never there: every export fails
// at once, so spans are made, queued and dropped.
type failingExporter struct{}

func (failingExporter) ExportSpans(context.Context, []sdktrace.ReadOnlySpan) error {
	return errors.New("collector unreachable")
}
func (failingExporter) Shutdown(context.Context) error { return nil }

// BenchmarkTelemetryInMemory is an in-memory call with telemetry off, with
// metrics on, and with metrics and tracing on (to a failing exporter): the
// cost of instruments and spans alone.
func BenchmarkTelemetryInMemory(b *testing.B) {
	kr, err := keyring.Parse([]byte(`{"47":"k1","102":"k2"}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, call := range []struct {
		name string
		tool string
		args map[string]any
	}{
		{"trivial", "korral_list_authorized_stores", map[string]any{}},
		{"risk", "korral_check_stock_risk", butterArgs},
	} {
		for _, v := range []struct {
			name             string
			metrics, tracing bool
		}{{"off", false, false}, {"metrics", true, false}, {"metrics+tracing", true, true}} {
			b.Run(call.name+"/"+v.name, func(b *testing.B) {
				opts := Options{Upstream: newFake(), Keyring: func() *keyring.Keyring { return kr }, Now: func() time.Time { return testNow },
					NetworkTransport: "tcp"}
				if v.metrics {
					exp, err := otelprom.New(otelprom.WithRegisterer(prometheus.NewRegistry()))
					if err != nil {
						b.Fatal(err)
					}
					mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
					b.Cleanup(func() { _ = mp.Shutdown(context.Background()) })
					opts.MeterProvider = mp
				}
				if v.tracing {
					// The SDK reports each failed export; the server logs the
					// first once, the benchmark none.
					otel.SetErrorHandler(otel.ErrorHandlerFunc(func(error) {}))
					tp := sdktrace.NewTracerProvider(sdktrace.WithBatcher(failingExporter{}, sdktrace.WithMaxQueueSize(2048), sdktrace.WithBatchTimeout(time.Second)))
					b.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
					opts.TracerProvider = tp
				}
				cs := benchSession(b, New(opts))
				ctx := context.Background()
				b.ReportAllocs()
				for b.Loop() {
					res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: call.tool, Arguments: call.args})
					if err != nil || res.IsError {
						b.Fatalf("call: %v %v", err, res)
					}
				}
			})
		}
	}
}
