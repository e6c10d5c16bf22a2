// Package audit connects the MCP server to the audit trail in
// internal/state: it stores records, bounds caller-supplied text, and
// recognises tools/call requests the SDK refuses early. It must not decide
// what a record says; the tools do.
package audit

import (
	"context"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

// Store writes audit records to the durable audit trail.
type Store struct{ Log state.AuditLog }

// Record stores r. It records even when the caller's context is cancelled:
// the trail must keep calls whose client has gone.
func (a Store) Record(ctx context.Context, r state.AuditRecord) error {
	return a.Log.RecordAudit(context.WithoutCancel(ctx), r)
}

// MaxClientName bounds, in runes, a client's self-given name as recorded.
const MaxClientName = 64

// MaxReason bounds, in runes, the reason a refused call is recorded with.
const MaxReason = 200

// ClientName is an unverified caller-supplied name as recorded: escaped
// and bounded.
func ClientName(name string) string { return textsafe.Bound(name, MaxClientName) }
