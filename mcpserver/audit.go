package mcpserver

import (
	"context"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// AuditStore writes audit events to the durable audit trail.
type AuditStore struct{ Log state.AuditLog }

// Record implements AuditSink.
func (a AuditStore) Record(ctx context.Context, e AuditEvent) error {
	// The trail outlives the call: record even when the client has left.
	return a.Log.RecordAudit(context.WithoutCancel(ctx), state.AuditRecord{
		Time: e.Time, CallID: e.CallID, Client: e.Client, Session: e.Session, Tool: e.Tool,
		StoreID: e.StoreID, SKU: e.SKU, Outcome: e.Outcome, ErrorCode: e.ErrorCode,
		Summary: e.Summary, DurationMS: e.DurationMS, TraceID: e.TraceID,
	})
}
