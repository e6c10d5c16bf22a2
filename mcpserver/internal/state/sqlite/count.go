package sqlite

import (
	"context"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// countSQL is CountEntries' one query, a scan of a small table grouped by
// state; the placeholders are now, twice.
const countSQL = `SELECT state, COUNT(*),
	SUM(CASE WHEN state = 'pending_approval' AND approval_expires_at <= ? THEN 1 ELSE 0 END),
	MIN(CASE WHEN state = 'pending_approval' AND approval_expires_at > ? THEN approval_expires_at END)
	FROM entries GROUP BY state`

// CountEntries implements state.Counter.
func (db *DB) CountEntries(ctx context.Context, now time.Time) (state.LedgerCounts, error) {
	out := state.LedgerCounts{ByState: map[state.EntryState]int64{}}
	rows, err := db.sql.QueryContext(ctx, countSQL, formatTime(now), formatTime(now))
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n, lapsed int64
		var next *string
		if err := rows.Scan(&st, &n, &lapsed, &next); err != nil {
			return out, err
		}
		out.ByState[state.EntryState(st)] = n
		out.PendingLapsed += lapsed
		if next != nil {
			if t, err := parseTime(*next); err == nil && (out.NextExpiry.IsZero() || t.Before(out.NextExpiry)) {
				out.NextExpiry = t
			}
		}
	}
	return out, rows.Err()
}
