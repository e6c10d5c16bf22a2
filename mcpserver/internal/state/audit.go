package state

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"
)

// OutcomeOK is the Outcome of a tool call that succeeded. Every other
// outcome counts as an error in a Report.
const OutcomeOK = "ok"

// AuditRecord is one tool call, reads included, as the audit trail keeps it
// and a buyer reads it the next morning. It is the one audit record of the
// server: the tools hand it to their sink (mcpserver.AuditEvent), the trail
// stores it, and the console shows it (console.AuditRow).
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
	// means no cap. Report ignores it, since statistics over an arbitrary
	// slice of the calls would mislead.
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
	// P50, P95 and P99 are call durations in milliseconds, by the
	// nearest-rank method, so each is a duration that was actually observed.
	P50, P95, P99 float64
	// ErrorCodes counts the failed calls per error code; failures without a
	// code are not listed.
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

// auditInsertSQL appends one audit record; DB prepares it once, in Open.
const auditInsertSQL = `INSERT INTO audit
	(time, call_id, client, session, tool, store_id, sku, outcome, error_code, summary, duration_ms, trace_id)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordAudit implements AuditLog. A zero Time is recorded as the current
// time, so that no record falls outside every day filter.
//
// Records that arrive while another write holds the lock are committed
// together (group commit): whichever of their callers takes the lock next
// inserts them all in one transaction, and every one of those callers
// returns only once that transaction has committed, with its error if it
// failed. A call is therefore still audited before it is answered, at one
// commit per batch instead of one per call.
func (db *DB) RecordAudit(ctx context.Context, r AuditRecord) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	db.auditMu.Lock()
	b := db.auditNext
	if b == nil {
		b = &auditBatch{done: make(chan struct{})}
		db.auditNext = b
	}
	b.recs = append(b.recs, &r)
	db.auditMu.Unlock()

	select {
	case <-b.done:
		return b.err
	case db.wsem <- struct{}{}:
	case <-ctx.Done():
		db.auditMu.Lock()
		pending := db.auditNext == b
		if pending {
			b.recs = slices.DeleteFunc(b.recs, func(p *AuditRecord) bool { return p == &r })
			if len(b.recs) == 0 {
				db.auditNext = nil
			}
		}
		db.auditMu.Unlock()
		if pending {
			return fmt.Errorf("state: waiting to write: %w", ctx.Err())
		}
		// Another caller is already committing this record: its outcome
		// is this call's.
		<-b.done
		return b.err
	}
	defer func() { <-db.wsem }()
	// A batch is taken and finished only under the write lock, so holding
	// the lock, this caller's batch is either finished or still pending.
	select {
	case <-b.done:
		return b.err
	default:
	}
	db.auditMu.Lock()
	db.auditNext = nil
	db.auditMu.Unlock()
	b.err = db.insertAudit(ctx, b.recs)
	close(b.done)
	return b.err
}

// auditBatch is the records waiting for the write lock; done is closed once
// they are committed or have failed with err.
type auditBatch struct {
	recs []*AuditRecord
	done chan struct{}
	err  error
}

// insertAudit inserts recs, the caller holding the write lock. A single
// record is inserted on its own, which commits it; several share one
// transaction.
func (db *DB) insertAudit(ctx context.Context, recs []*AuditRecord) error {
	insert := func(stmt *sql.Stmt, r *AuditRecord) error {
		if _, err := stmt.ExecContext(ctx,
			formatTime(r.Time), r.CallID, r.Client, r.Session, r.Tool, r.StoreID, r.SKU,
			r.Outcome, r.ErrorCode, r.Summary, r.DurationMS, r.TraceID); err != nil {
			return fmt.Errorf("state: record audit for call %s: %w", r.CallID, err)
		}
		return nil
	}
	if len(recs) == 1 {
		return insert(db.auditInsert, recs[0])
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state: record audit: begin: %w", err)
	}
	stmt := tx.StmtContext(ctx, db.auditInsert)
	for _, r := range recs {
		if err := insert(stmt, r); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state: record audit: commit: %w", err)
	}
	return nil
}

// QueryAudit implements AuditLog. With a Limit it returns the most recent
// Limit records, still oldest first.
func (db *DB) QueryAudit(ctx context.Context, f AuditFilter) ([]AuditRecord, error) {
	where, args := auditWhere(f)
	q := `SELECT time, call_id, client, session, tool, store_id, sku, outcome, error_code, summary, duration_ms, trace_id
		FROM audit` + where + ` ORDER BY time DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	rows, err := db.sql.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("state: query audit: %w", err)
	}
	defer rows.Close()
	var out []AuditRecord
	for rows.Next() {
		var r AuditRecord
		var t string
		if err := rows.Scan(&t, &r.CallID, &r.Client, &r.Session, &r.Tool, &r.StoreID, &r.SKU,
			&r.Outcome, &r.ErrorCode, &r.Summary, &r.DurationMS, &r.TraceID); err != nil {
			return nil, fmt.Errorf("state: query audit: %w", err)
		}
		if r.Time, err = parseTime(t); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: query audit: %w", err)
	}
	// Selected newest first so that LIMIT keeps the latest records; the
	// trail reads in time order.
	slices.Reverse(out)
	return out, nil
}

// Report implements AuditLog. Percentiles are computed here rather than in
// SQL so that every backend yields the same numbers.
func (db *DB) Report(ctx context.Context, f AuditFilter) ([]ToolStats, error) {
	where, args := auditWhere(f)
	rows, err := db.sql.QueryContext(ctx, `SELECT tool, outcome, error_code, duration_ms FROM audit`+where, args...)
	if err != nil {
		return nil, fmt.Errorf("state: audit report: %w", err)
	}
	defer rows.Close()
	byTool := map[string]*ToolStats{}
	durations := map[string][]float64{}
	for rows.Next() {
		var tool, outcome, code string
		var ms float64
		if err := rows.Scan(&tool, &outcome, &code, &ms); err != nil {
			return nil, fmt.Errorf("state: audit report: %w", err)
		}
		s := byTool[tool]
		if s == nil {
			s = &ToolStats{Tool: tool, ErrorCodes: map[string]int{}}
			byTool[tool] = s
		}
		s.Calls++
		if outcome == OutcomeOK {
			s.OK++
		} else {
			s.Errors++
			if code != "" {
				s.ErrorCodes[code]++
			}
		}
		durations[tool] = append(durations[tool], ms)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: audit report: %w", err)
	}
	out := make([]ToolStats, 0, len(byTool))
	for tool, s := range byTool {
		d := durations[tool]
		slices.Sort(d)
		s.ErrorRate = float64(s.Errors) / float64(s.Calls)
		s.P50, s.P95, s.P99 = nearestRank(d, 50), nearestRank(d, 95), nearestRank(d, 99)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b ToolStats) int { return strings.Compare(a.Tool, b.Tool) })
	return out, nil
}

// nearestRank returns the p-th percentile of sorted, non-empty values: the
// smallest value with at least p percent of the values at or below it. The
// rank ceil(p*n/100) is computed in integers so that, for example, p=95 of
// 20 values is exactly rank 19, with no floating-point rounding.
func nearestRank(sorted []float64, p int) float64 {
	n := len(sorted)
	rank := (p*n + 99) / 100
	rank = max(rank, 1)
	return sorted[rank-1]
}

// auditWhere turns f into a WHERE clause (with its leading space) and its
// arguments.
func auditWhere(f AuditFilter) (string, []any) {
	var conds []string
	var args []any
	if !f.Day.IsZero() {
		d := f.Day.UTC()
		start := time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
		conds = append(conds, `time >= ? AND time < ?`)
		args = append(args, formatTime(start), formatTime(start.AddDate(0, 0, 1)))
	}
	for _, c := range []struct{ col, val string }{
		{"store_id", f.StoreID}, {"call_id", f.CallID}, {"tool", f.Tool},
	} {
		if c.val != "" {
			conds = append(conds, c.col+` = ?`)
			args = append(args, c.val)
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return ` WHERE ` + strings.Join(conds, ` AND `), args
}
