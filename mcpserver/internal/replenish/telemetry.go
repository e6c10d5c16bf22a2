package replenish

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"go.opentelemetry.io/otel/trace/noop"
)

// span starts a span of the write path under the call's. Only the store is
// named: SKUs, quantities and reasons are the buyer's data.
func (w *Workflow) span(ctx context.Context, name, storeID string) (context.Context, trace.Span) {
	tr := w.Tracer
	if tr == nil {
		tr = noop.Tracer{}
	}
	return tr.Start(ctx, name, trace.WithAttributes(attribute.String("storelink.store_id", storeID)))
}
