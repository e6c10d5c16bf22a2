package upstream

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestRequestDurationsByOperationAndStatusClass: each attempt is recorded
// once under its operation and its own status class, though the labels
// are made once per pair.
func TestRequestDurationsByOperationAndStatusClass(t *testing.T) {
	var n atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if n.Add(1) == 2 {
			w.WriteHeader(http.StatusNotFound)
			_, _ = io.WriteString(w, errorBody("not_found"))
			return
		}
		_, _ = io.WriteString(w, inventoryBody)
	}))
	defer srv.Close()
	reader := sdkmetric.NewManualReader()
	c, _ := newClient(t, srv.URL, keys47(), func(o *Options) {
		o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	})
	for range 3 {
		_, _ = c.Inventory(context.Background(), "47", "8847291")
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]uint64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			h, ok := m.Data.(metricdata.Histogram[float64])
			if !ok || m.Name != "storelink.client.request.duration" {
				continue
			}
			for _, dp := range h.DataPoints {
				op, _ := dp.Attributes.Value("storelink.operation")
				class, _ := dp.Attributes.Value("http.response.status_class")
				got[op.AsString()+" "+class.AsString()] += dp.Count
			}
		}
	}
	want := map[string]uint64{"GET /v1/stores/{store_id}/inventory 2xx": 2, "GET /v1/stores/{store_id}/inventory 4xx": 1}
	if len(got) != len(want) {
		t.Errorf("recorded %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s: %d requests, want %d (all: %v)", k, got[k], v, got)
		}
	}
}
