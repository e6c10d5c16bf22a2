package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// auditInsertSQL appends one audit record; DB prepares it once, in Open.
const auditInsertSQL = `INSERT INTO audit
	(time, call_id, client, session, tool, store_id, sku, outcome, error_code, summary, duration_ms, trace_id)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// RecordAudit implements state.AuditLog. A zero Time is recorded as now.
// Records are group-committed (state.AuditGroup); the call returns once its
// row is committed.
func (db *DB) RecordAudit(ctx context.Context, r state.AuditRecord) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	return db.audit.Record(ctx, r)
}

// writeAudit inserts recs in one transaction under the write lock.
func (db *DB) writeAudit(ctx context.Context, recs []state.AuditRecord) error {
	release, err := db.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	return db.insertAudit(ctx, recs)
}

// insertAudit inserts recs under the write lock. One record's failure is
// that record's (state.AuditRowError).
func (db *DB) insertAudit(ctx context.Context, recs []state.AuditRecord) error {
	insert := func(stmt *sql.Stmt, i int) error {
		r := &recs[i]
		if _, err := stmt.ExecContext(ctx,
			formatTime(r.Time), r.CallID, r.Client, r.Session, r.Tool, r.StoreID, r.SKU,
			r.Outcome, r.ErrorCode, r.Summary, r.DurationMS, r.TraceID); err != nil {
			return &state.AuditRowError{Index: i, Err: fmt.Errorf("state: record audit for call %s: %w", r.CallID, err)}
		}
		return nil
	}
	if len(recs) == 1 {
		return insert(db.auditInsert, 0)
	}
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state: record audit: begin: %w", err)
	}
	stmt := tx.StmtContext(ctx, db.auditInsert)
	for i := range recs {
		if err := insert(stmt, i); err != nil {
			_ = tx.Rollback()
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state: record audit: commit: %w", err)
	}
	return nil
}

// QueryAudit implements state.AuditLog. With a Limit it returns the latest
// Limit records, oldest first.
func (db *DB) QueryAudit(ctx context.Context, f state.AuditFilter) ([]state.AuditRecord, error) {
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
	var out []state.AuditRecord
	for rows.Next() {
		var r state.AuditRecord
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
	// Newest first so LIMIT keeps the latest.
	slices.Reverse(out)
	return out, nil
}

// Report implements state.AuditLog; percentiles are computed in Go so both
// backends agree.
func (db *DB) Report(ctx context.Context, f state.AuditFilter) ([]state.ToolStats, error) {
	where, args := auditWhere(f)
	rows, err := db.sql.QueryContext(ctx, `SELECT tool, outcome, error_code, duration_ms FROM audit`+where, args...)
	if err != nil {
		return nil, fmt.Errorf("state: audit report: %w", err)
	}
	defer rows.Close()
	byTool := map[string]*state.ToolStats{}
	durations := map[string][]float64{}
	for rows.Next() {
		var tool, outcome, code string
		var ms float64
		if err := rows.Scan(&tool, &outcome, &code, &ms); err != nil {
			return nil, fmt.Errorf("state: audit report: %w", err)
		}
		s := byTool[tool]
		if s == nil {
			s = &state.ToolStats{Tool: tool, ErrorCodes: map[string]int{}}
			byTool[tool] = s
		}
		s.Calls++
		if outcome == state.OutcomeOK {
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
	out := make([]state.ToolStats, 0, len(byTool))
	for tool, s := range byTool {
		d := durations[tool]
		slices.Sort(d)
		s.ErrorRate = float64(s.Errors) / float64(s.Calls)
		s.P50, s.P95, s.P99 = state.NearestRank(d, 50), state.NearestRank(d, 95), state.NearestRank(d, 99)
		out = append(out, *s)
	}
	slices.SortFunc(out, func(a, b state.ToolStats) int { return strings.Compare(a.Tool, b.Tool) })
	return out, nil
}

// auditWhere turns f into a WHERE clause and its arguments.
func auditWhere(f state.AuditFilter) (string, []any) {
	var conds []string
	var args []any
	if !f.Day.IsZero() {
		start, end := state.AuditDay(f.Day)
		conds = append(conds, `time >= ? AND time < ?`)
		args = append(args, formatTime(start), formatTime(end))
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
