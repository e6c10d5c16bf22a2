package state

import (
	"context"
	"time"
)

// OutcomeOK is the Outcome of a successful call; any other is an error.
const OutcomeOK = "ok"

// AuditRecord is one tool call, reads included, as the audit trail keeps
// it; the console shows it as console.AuditRow.
type AuditRecord struct {
	Time time.Time `json:"time"`
	// CallID ties the call to its log lines.
	CallID string `json:"call_id"`
	// Client is who called: the MCP client and session, or a token label.
	Client  string `json:"client"`
	Session string `json:"session"`
	Tool    string `json:"tool"`
	StoreID string `json:"store_id,omitempty"`
	SKU     string `json:"sku,omitempty"`
	// Outcome is "ok" or an error outcome; ErrorCode the taxonomy code.
	Outcome    string  `json:"outcome"`
	ErrorCode  string  `json:"error_code,omitempty"`
	Summary    string  `json:"summary"`
	DurationMS float64 `json:"duration_ms"`
	// TraceID is the OpenTelemetry trace of the call, "" when it had none.
	TraceID string `json:"trace_id,omitempty"`
}

// AuditFilter selects audit records. Empty fields match everything.
type AuditFilter struct {
	// Day keeps the records of Day's calendar day in UTC; zero keeps every day.
	Day     time.Time
	StoreID string
	CallID  string
	Tool    string
	// Limit caps QueryAudit at the most recent Limit records; zero or less
	// means no cap. Report ignores it.
	Limit int
}

// ToolStats summarises the calls of one tool.
type ToolStats struct {
	Tool   string
	Calls  int
	OK     int
	Errors int
	// ErrorRate is Errors / Calls.
	ErrorRate float64
	// P50, P95 and P99 are call durations in milliseconds, nearest-rank.
	P50, P95, P99 float64
	// ErrorCodes counts failed calls per error code (coded ones only).
	ErrorCodes map[string]int
}

// AuditLog is the durable audit trail of tool calls.
type AuditLog interface {
	// RecordAudit appends r to the trail.
	RecordAudit(ctx context.Context, r AuditRecord) error
	// QueryAudit returns the records matching f, oldest first.
	QueryAudit(ctx context.Context, f AuditFilter) ([]AuditRecord, error)
	// Report returns per-tool statistics over the records matching f,
	// sorted by tool name.
	Report(ctx context.Context, f AuditFilter) ([]ToolStats, error)
}

// AuditSpooler is an AuditLog with a cheaper way in for the rows of tool
// calls (ADR 0044). SpoolAudit returns once r survives a crash of this
// process, and from then on QueryAudit and Report in every process return
// it, as they do a row RecordAudit wrote; the row reaches the audit table
// a little later. Like RecordAudit's commit, it does not wait for the disk:
// a power loss may take the latest rows.
type AuditSpooler interface {
	SpoolAudit(ctx context.Context, r AuditRecord) error
}

// NearestRank returns the p-th percentile of sorted, non-empty values by
// nearest rank, ceil(p*n/100), computed in integers.
func NearestRank(sorted []float64, p int) float64 {
	n := len(sorted)
	rank := (p*n + 99) / 100
	rank = max(rank, 1)
	return sorted[rank-1]
}

// AuditDay returns the half-open UTC interval [start, end) that
// AuditFilter.Day selects.
func AuditDay(day time.Time) (start, end time.Time) {
	d := day.UTC()
	start = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
	return start, start.AddDate(0, 0, 1)
}
