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
// Records are group-committed to the table (state.AuditGroup); the call
// returns once its row is committed. The rows of a person's decisions
// take this way; tool calls' rows take SpoolAudit's.
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

// QueryAudit implements state.AuditLog: the table's rows and the spooled
// records not yet moved (ADR 0044), in the table's order. With a Limit it
// returns the latest Limit records, oldest first.
func (db *DB) QueryAudit(ctx context.Context, f state.AuditFilter) ([]state.AuditRecord, error) {
	where, args := auditWhere(f)
	q := `SELECT time, call_id, client, session, tool, store_id, sku, outcome, error_code, summary, duration_ms, trace_id
		FROM audit` + where + ` ORDER BY time DESC, id DESC`
	if f.Limit > 0 {
		q += ` LIMIT ?`
		args = append(args, f.Limit)
	}
	var out []state.AuditRecord
	spooled, err := db.readAudit(ctx, f, func(tx *sql.Tx) error {
		out = out[:0]
		rows, err := tx.QueryContext(ctx, q, args...)
		if err != nil {
			return fmt.Errorf("state: query audit: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var r state.AuditRecord
			var t string
			if err := rows.Scan(&t, &r.CallID, &r.Client, &r.Session, &r.Tool, &r.StoreID, &r.SKU,
				&r.Outcome, &r.ErrorCode, &r.Summary, &r.DurationMS, &r.TraceID); err != nil {
				return fmt.Errorf("state: query audit: %w", err)
			}
			if r.Time, err = parseTime(t); err != nil {
				return err
			}
			out = append(out, r)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("state: query audit: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	// Newest first so LIMIT keeps the latest.
	slices.Reverse(out)
	out = mergeSpooled(out, spooled)
	if f.Limit > 0 && len(out) > f.Limit {
		out = out[len(out)-f.Limit:]
	}
	return out, nil
}

// mergeSpooled merges table rows and spooled records, each in time order,
// as the table will order them: a spooled record, numbered later, after
// the rows of its instant.
func mergeSpooled(rows, spooled []state.AuditRecord) []state.AuditRecord {
	if len(spooled) == 0 {
		return rows
	}
	out := make([]state.AuditRecord, 0, len(rows)+len(spooled))
	i, j := 0, 0
	for i < len(rows) && j < len(spooled) {
		if spooled[j].Time.Before(rows[i].Time) {
			out = append(out, spooled[j])
			j++
		} else {
			out = append(out, rows[i])
			i++
		}
	}
	out = append(out, rows[i:]...)
	return append(out, spooled[j:]...)
}

// Report implements state.AuditLog over the table's rows and the spooled
// records not yet moved; percentiles are computed in Go so both backends
// agree.
func (db *DB) Report(ctx context.Context, f state.AuditFilter) ([]state.ToolStats, error) {
	where, args := auditWhere(f)
	var byTool map[string]*state.ToolStats
	var durations map[string][]float64
	add := func(tool, outcome, code string, ms float64) {
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
	spooled, err := db.readAudit(ctx, f, func(tx *sql.Tx) error {
		byTool, durations = map[string]*state.ToolStats{}, map[string][]float64{}
		rows, err := tx.QueryContext(ctx, `SELECT tool, outcome, error_code, duration_ms FROM audit`+where, args...)
		if err != nil {
			return fmt.Errorf("state: audit report: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var tool, outcome, code string
			var ms float64
			if err := rows.Scan(&tool, &outcome, &code, &ms); err != nil {
				return fmt.Errorf("state: audit report: %w", err)
			}
			add(tool, outcome, code, ms)
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("state: audit report: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for _, r := range spooled {
		add(r.Tool, r.Outcome, r.ErrorCode, r.DurationMS)
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
