package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// auditInsertSQL appends one audit record.
const auditInsertSQL = `INSERT INTO audit
	(time, call_id, client, session, tool, store_id, sku, outcome, error_code, summary, duration_ms, trace_id)
	VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`

// RecordAudit implements state.AuditLog. A zero Time is recorded as now.
// Records are group-committed (state.AuditGroup); the call returns once its
// row is committed.
func (db *DB) RecordAudit(ctx context.Context, r state.AuditRecord) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	return db.audit.Record(ctx, r)
}

// writeAudit writes recs as one pipeline of INSERTs ending in one Sync, all
// or nothing. A record the server refuses is blamed (state.AuditRowError).
func (db *DB) writeAudit(ctx context.Context, recs []state.AuditRecord) error {
	args := func(r *state.AuditRecord) []any {
		return []any{ts(r.Time), r.CallID, r.Client, r.Session, r.Tool, r.StoreID, r.SKU,
			r.Outcome, r.ErrorCode, r.Summary, r.DurationMS, r.TraceID}
	}
	blame := func(i int, err error) error {
		var pgErr *pgconn.PgError
		refused := errors.As(err, &pgErr) && !unavailable(err)
		err = db.fail("record audit for call "+recs[i].CallID, err)
		if refused {
			return &state.AuditRowError{Index: i, Err: err}
		}
		return err
	}
	if len(recs) == 1 {
		if _, err := db.pool.Exec(ctx, auditInsertSQL, args(&recs[0])...); err != nil {
			return blame(0, err)
		}
		return nil
	}
	b := &pgx.Batch{}
	for i := range recs {
		b.Queue(auditInsertSQL, args(&recs[i])...)
	}
	br := db.pool.SendBatch(ctx, b)
	for i := range recs {
		if _, err := br.Exec(); err != nil {
			_ = br.Close()
			return blame(i, err)
		}
	}
	if err := br.Close(); err != nil {
		return db.fail(fmt.Sprintf("record audit: commit a group of %d", len(recs)), err)
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
		args = append(args, f.Limit)
		q += fmt.Sprintf(` LIMIT $%d`, len(args))
	}
	rows, err := db.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, db.fail("query audit", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.AuditRecord, error) {
		var r state.AuditRecord
		err := row.Scan(&r.Time, &r.CallID, &r.Client, &r.Session, &r.Tool, &r.StoreID, &r.SKU,
			&r.Outcome, &r.ErrorCode, &r.Summary, &r.DurationMS, &r.TraceID)
		r.Time = r.Time.UTC()
		return r, err
	})
	if err != nil {
		return nil, db.fail("query audit", err)
	}
	slices.Reverse(out)
	return out, nil
}

// Report implements state.AuditLog; percentiles are computed in Go
// (state.NearestRank) so both backends agree.
func (db *DB) Report(ctx context.Context, f state.AuditFilter) ([]state.ToolStats, error) {
	where, args := auditWhere(f)
	rows, err := db.pool.Query(ctx, `SELECT tool, count(*) FILTER (WHERE outcome = '`+state.OutcomeOK+`'),
			array_agg(duration_ms ORDER BY duration_ms),
			COALESCE(array_agg(error_code) FILTER (WHERE outcome <> '`+state.OutcomeOK+`' AND error_code <> ''), '{}')
		FROM audit`+where+` GROUP BY tool ORDER BY tool`, args...)
	if err != nil {
		return nil, db.fail("audit report", err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.ToolStats, error) {
		s := state.ToolStats{ErrorCodes: map[string]int{}}
		var durations []float64
		var codes []string
		if err := row.Scan(&s.Tool, &s.OK, &durations, &codes); err != nil {
			return s, err
		}
		s.Calls = len(durations)
		s.Errors = s.Calls - s.OK
		s.ErrorRate = float64(s.Errors) / float64(s.Calls)
		s.P50, s.P95, s.P99 = state.NearestRank(durations, 50), state.NearestRank(durations, 95), state.NearestRank(durations, 99)
		for _, c := range codes {
			s.ErrorCodes[c]++
		}
		return s, nil
	})
	if err != nil {
		return nil, db.fail("audit report", err)
	}
	if out == nil {
		out = []state.ToolStats{}
	}
	return out, nil
}

// auditWhere turns f into a WHERE clause and its arguments.
func auditWhere(f state.AuditFilter) (string, []any) {
	var conds []string
	var args []any
	if !f.Day.IsZero() {
		start, end := state.AuditDay(f.Day)
		args = append(args, start, end)
		conds = append(conds, fmt.Sprintf(`time >= $%d AND time < $%d`, len(args)-1, len(args)))
	}
	for _, c := range []struct{ col, val string }{
		{"store_id", f.StoreID}, {"call_id", f.CallID}, {"tool", f.Tool},
	} {
		if c.val != "" {
			args = append(args, c.val)
			conds = append(conds, fmt.Sprintf(`%s = $%d`, c.col, len(args)))
		}
	}
	if len(conds) == 0 {
		return "", nil
	}
	return ` WHERE ` + strings.Join(conds, ` AND `), args
}
