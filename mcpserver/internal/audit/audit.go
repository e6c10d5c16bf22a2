// Package audit connects the MCP server to the audit trail in
// internal/state: it stores records, bounds caller-supplied text, and
// recognises tools/call requests the SDK refuses early. It must not decide
// what a record says; the tools do.
package audit

import (
	"context"
	"unicode/utf8"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

// Store writes audit records to the durable audit trail.
type Store struct{ Log state.AuditLog }

// Record stores r, its summary bounded (Summary). It records even when the
// caller's context is cancelled: the trail must keep calls whose client has
// gone. A log that spools (state.AuditSpooler) takes r through its spool,
// which is as durable before the answer and cheaper (ADR 0044).
func (a Store) Record(ctx context.Context, r state.AuditRecord) error {
	r.Summary = Summary(r.Summary)
	if sp, ok := a.Log.(state.AuditSpooler); ok {
		return sp.SpoolAudit(context.WithoutCancel(ctx), r)
	}
	return a.Log.RecordAudit(context.WithoutCancel(ctx), r)
}

// MaxSummary bounds, in runes, the summary a record is stored with. The
// tools' sentences stay well below it (a 20-store risk check is about
// 2,000), since the adapter holds what StoreLink sends to the
// contract's limits (ADR 0037); the bound keeps the trail's rows small should
// a text escape its own.
const MaxSummary = 4000

// Summary is s as stored: exact up to MaxSummary runes, cut there with "…"
// marking the cut. Unlike ClientName it escapes nothing; the trail's
// readers escape on display.
func Summary(s string) string {
	if len(s) <= MaxSummary || utf8.RuneCountInString(s) <= MaxSummary {
		return s
	}
	n := 0
	for i := range s {
		if n == MaxSummary {
			return s[:i] + "…"
		}
		n++
	}
	return s
}

// MaxClientName bounds, in runes, a client's self-given name as recorded.
const MaxClientName = 64

// MaxReason bounds, in runes, the reason a refused call is recorded with.
const MaxReason = 200

// ClientName is an unverified caller-supplied name as recorded: escaped
// and bounded.
func ClientName(name string) string { return textsafe.Bound(name, MaxClientName) }
