// Package audit connects the MCP server to the audit trail kept in
// internal/state: it stores the tools' audit records, bounds what the trail
// keeps of caller-supplied text, and recognises the tools/call requests the
// MCP SDK refuses before the server's middleware runs. It does not decide
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

// MaxClientName bounds, in runes, the name a client gives itself as the
// trail and the logs keep it.
const MaxClientName = 64

// MaxReason bounds, in runes, the reason a refused call is recorded with.
const MaxReason = 200

// ClientName is a caller-supplied name as it is recorded: nobody verified
// it, so it is escaped (no line break or terminal escape reaches a log or
// the console) and bounded.
func ClientName(name string) string { return textsafe.Bound(name, MaxClientName) }
