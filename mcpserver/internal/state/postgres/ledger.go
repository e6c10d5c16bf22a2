package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Times are truncated to microseconds (timestamptz's precision), also in
// comparisons, so a value reads back exactly as it compares.
func ts(t time.Time) time.Time { return t.UTC().Truncate(time.Microsecond) }

const entryColumns = `idempotency_key, store_id, sku, quantity_units, reason, request_hash, state,
	order_id, error_code, error_message, approval_id, approval_expires_at,
	requested_by, decided_by, created_at, updated_at, upstream_id`

// The request lock serialises, across processes, transactions that may put
// one request in flight. It is taken before the row lock, so no cycle.
const requestLock = `pg_advisory_xact_lock(hashtextextended('storelink-mcp request ' || %s, 0))`

// Reserve implements state.Ledger with INSERT … ON CONFLICT DO NOTHING:
// exactly one concurrent caller inserts.
func (db *DB) Reserve(ctx context.Context, e state.Entry) (state.Entry, bool, error) {
	e, err := state.NewEntry(e)
	if err != nil {
		return state.Entry{}, false, err
	}
	var got state.Entry
	var taken bool
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		got, taken, err = state.ReserveTx(ctx, ledgerTx{tx}, e)
		return err
	})
	if err != nil {
		return state.Entry{}, false, db.wrap("reserve "+e.IdempotencyKey, err)
	}
	return got, taken, nil
}

// ledgerTx is a transaction as state.LedgerTx, using row locks and the
// advisory locks requestLock and orderLock.
type ledgerTx struct{ tx pgx.Tx }

// approval is a new entry's approval id and expiry; NULL unless staged.
func approval(e state.Entry) (*string, *time.Time) {
	if e.State != state.StatePendingApproval {
		return nil, nil
	}
	x := ts(e.ApprovalExpiresAt)
	return &e.ApprovalID, &x
}

// Insert implements state.LedgerTx, taking the request lock in the INSERT
// and reading an existing entry with its row lock.
func (t ledgerTx) Insert(ctx context.Context, e state.Entry) (state.Entry, bool, error) {
	approvalID, expires := approval(e)
	rows, err := t.tx.Query(ctx, `INSERT INTO entries (`+entryColumns+`)
			SELECT $1, $2, $3, $4, $5, $6, $7, NULL, '', '', $8, $9, $10, '', $11, $11, $12
			FROM `+fmt.Sprintf(requestLock, "$6::text")+`
			ON CONFLICT (idempotency_key) DO NOTHING
			RETURNING `+entryColumns,
		e.IdempotencyKey, e.StoreID, e.SKU, e.QuantityUnits, e.Reason, e.RequestHash, string(e.State),
		approvalID, expires, e.RequestedBy, ts(e.CreatedAt), e.UpstreamID)
	if err != nil {
		return state.Entry{}, false, err
	}
	inserted, err := collect(rows)
	if err != nil {
		return state.Entry{}, false, err
	}
	if len(inserted) == 1 {
		return inserted[0], true, nil
	}
	cur, err := getOne(ctx, t.tx, `WHERE idempotency_key = $1 FOR UPDATE`, e.IdempotencyKey)
	return cur, false, err
}

// Retake implements state.LedgerTx.
func (t ledgerTx) Retake(ctx context.Context, e, cur state.Entry) (state.Entry, bool, error) {
	approvalID, expires := approval(e)
	rows, err := t.tx.Query(ctx, `UPDATE entries
			SET state = $1, order_id = NULL, error_code = '', error_message = '', approval_id = $2, approval_expires_at = $3,
				requested_by = $4, decided_by = '', upstream_id = $5, updated_at = $6
			WHERE idempotency_key = $7 AND state = $8
			RETURNING `+entryColumns,
		string(e.State), approvalID, expires, e.RequestedBy, e.UpstreamID, ts(e.CreatedAt), e.IdempotencyKey, string(cur.State))
	if err != nil {
		return state.Entry{}, false, err
	}
	return one(collect(rows))
}

// one is the single entry of es, and false unless there is exactly one.
func one(es []state.Entry, err error) (state.Entry, bool, error) {
	if err != nil || len(es) != 1 {
		return state.Entry{}, false, err
	}
	return es[0], true, nil
}

// wrap passes the ledger's own errors through and marks database failures.
func (db *DB) wrap(op string, err error) error {
	var fl *state.InFlightError
	var taken *state.OrderIDTakenError
	if errors.Is(err, state.ErrNotFound) || errors.Is(err, state.ErrInvalidTransition) ||
		errors.Is(err, state.ErrNotPending) || errors.As(err, &fl) || errors.As(err, &taken) {
		return err
	}
	return db.fail(op, err)
}

// InFlight implements state.LedgerTx; the caller holds the request lock.
func (t ledgerTx) InFlight(ctx context.Context, hash, key string) (state.Entry, bool, error) {
	es, err := getMany(ctx, t.tx, `WHERE request_hash = $1 AND state IN ('sending', 'unknown') AND idempotency_key <> $2
		ORDER BY id LIMIT 1`, hash, key)
	if err != nil || len(es) == 0 {
		return state.Entry{}, false, err
	}
	return es[0], true, nil
}

// The order lock serialises, across processes, transactions that record a
// StoreLink order id. It is taken last and its holder waits for nothing
// else, so it adds no cycle.
const orderLock = `SELECT pg_advisory_xact_lock(hashtextextended('storelink-mcp order ' || $1::text, 0))`

// OrderIDHolder implements state.LedgerTx under the order lock, with the
// SQLite store's condition.
func (t ledgerTx) OrderIDHolder(ctx context.Context, cur state.Entry, orderID string) (state.Entry, bool, error) {
	if _, err := t.tx.Exec(ctx, orderLock, orderID); err != nil {
		return state.Entry{}, false, err
	}
	es, err := getMany(ctx, t.tx, `WHERE order_id = $1 AND idempotency_key <> $2 AND (upstream_id = $3 OR upstream_id = '' OR $3 = '')
		ORDER BY id LIMIT 1`, orderID, cur.IdempotencyKey, cur.UpstreamID)
	if err != nil || len(es) == 0 {
		return state.Entry{}, false, err
	}
	return es[0], true, nil
}

// Finish implements state.Ledger.
func (db *DB) Finish(ctx context.Context, key string, st state.EntryState, orderID, errCode, errMsg string, now time.Time) (state.Entry, error) {
	ev, err := state.FinishEvent(key, st, orderID)
	if err != nil {
		return state.Entry{}, err
	}
	return db.Apply(ctx, key, ev, state.Change{OrderID: orderID, ErrorCode: errCode, ErrorMessage: errMsg}, now)
}

// Apply implements state.Ledger.
func (db *DB) Apply(ctx context.Context, key string, ev state.Event, ch state.Change, now time.Time) (state.Entry, error) {
	return db.locked(ctx, "apply "+string(ev)+" to "+key, `idempotency_key`, key, func(tx pgx.Tx, cur state.Entry) (state.Entry, error) {
		return state.ApplyTx(ctx, ledgerTx{tx}, cur, ev, ch, ts(now))
	})
}

// locked runs fn on the entry where col = val, in one transaction holding
// the request lock and the row lock.
func (db *DB) locked(ctx context.Context, op, col, val string, fn func(tx pgx.Tx, cur state.Entry) (state.Entry, error)) (state.Entry, error) {
	var got state.Entry
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		// One statement reads the entry and takes the request lock, then
		// the row lock.
		cur, err := getOne(ctx, tx, `e, `+fmt.Sprintf(requestLock, "e.request_hash")+` WHERE e.`+col+` = $1 FOR UPDATE OF e`, val)
		if err != nil {
			return err
		}
		got, err = fn(tx, cur)
		return err
	})
	if err != nil {
		return state.Entry{}, db.wrap(op, err)
	}
	return got, nil
}

// Update implements state.LedgerTx.
func (t ledgerTx) Update(ctx context.Context, cur, e state.Entry, _ state.Event) (state.Entry, bool, error) {
	var order *string
	if e.OrderID != "" {
		order = &e.OrderID
	}
	rows, err := t.tx.Query(ctx, `UPDATE entries
		SET state = $1, order_id = $2, error_code = $3, error_message = $4, decided_by = $5, updated_at = $6
		WHERE idempotency_key = $7 AND state = $8
		RETURNING `+entryColumns,
		string(e.State), order, e.ErrorCode, e.ErrorMessage, e.DecidedBy, e.UpdatedAt, cur.IdempotencyKey, string(cur.State))
	if err != nil {
		return state.Entry{}, false, err
	}
	return one(collect(rows))
}

// Get implements state.Ledger.
func (db *DB) Get(ctx context.Context, key string) (state.Entry, bool, error) {
	return db.lookup(ctx, "get "+key, `WHERE idempotency_key = $1`, key)
}

// ByOrderID implements state.Ledger; on a reused order id the latest entry
// wins.
func (db *DB) ByOrderID(ctx context.Context, orderID string) (state.Entry, bool, error) {
	if orderID == "" {
		return state.Entry{}, false, nil
	}
	return db.lookup(ctx, "find order "+orderID, `WHERE order_id = $1 ORDER BY id DESC LIMIT 1`, orderID)
}

// ByApprovalID implements state.Ledger.
func (db *DB) ByApprovalID(ctx context.Context, approvalID string) (state.Entry, bool, error) {
	if approvalID == "" {
		return state.Entry{}, false, nil
	}
	return db.lookup(ctx, "find approval "+approvalID, `WHERE approval_id = $1`, approvalID)
}

// Recent implements state.Ledger.
func (db *DB) Recent(ctx context.Context, storeID, sku string, since time.Time) ([]state.Entry, error) {
	es, err := getMany(ctx, db.pool, `WHERE store_id = $1 AND sku = $2 AND created_at >= $3
		ORDER BY created_at DESC, id DESC`, storeID, sku, ts(since))
	if err != nil {
		return nil, db.fail("recent orders", err)
	}
	return es, nil
}

// Pending implements state.Ledger.
func (db *DB) Pending(ctx context.Context, now time.Time) ([]state.Entry, error) {
	es, err := getMany(ctx, db.pool, `WHERE state = 'pending_approval' AND approval_expires_at > $1
		ORDER BY created_at, id`, ts(now))
	if err != nil {
		return nil, db.fail("pending approvals", err)
	}
	return es, nil
}

// Staged implements state.Ledger.
func (db *DB) Staged(ctx context.Context) ([]state.Entry, error) {
	es, err := getMany(ctx, db.pool, `WHERE approval_id IS NOT NULL ORDER BY created_at, id`)
	if err != nil {
		return nil, db.fail("staged approvals", err)
	}
	return es, nil
}

// Claim implements state.Ledger.
func (db *DB) Claim(ctx context.Context, approvalID, decidedBy string, now time.Time) (state.Entry, error) {
	return db.decide(ctx, approvalID, decidedBy, state.EventClaim, now)
}

// Reject implements state.Ledger.
func (db *DB) Reject(ctx context.Context, approvalID, decidedBy string, now time.Time) (state.Entry, error) {
	return db.decide(ctx, approvalID, decidedBy, state.EventReject, now)
}

// decide applies ev to a pending, unexpired approval; the row lock lets
// one decider win.
func (db *DB) decide(ctx context.Context, approvalID, decidedBy string, ev state.Event, now time.Time) (state.Entry, error) {
	if approvalID == "" {
		return state.Entry{}, fmt.Errorf("%w: empty approval id", state.ErrNotFound)
	}
	return db.locked(ctx, string(ev)+" approval "+approvalID, `approval_id`, approvalID, func(tx pgx.Tx, cur state.Entry) (state.Entry, error) {
		return state.DecideTx(ctx, ledgerTx{tx}, cur, approvalID, decidedBy, ev, ts(now))
	})
}

// Expire implements state.Ledger; it takes no request lock.
func (db *DB) Expire(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		due, err := getMany(ctx, tx, `WHERE state = 'pending_approval' AND approval_expires_at <= $1 ORDER BY id FOR UPDATE`, ts(now))
		if err != nil {
			return err
		}
		if err := state.ExpireTx(ctx, ledgerTx{tx}, due, ts(now)); err != nil {
			return fmt.Errorf("expire approvals: %w", err)
		}
		n = len(due)
		return nil
	})
	if err != nil {
		return 0, db.wrap("expire approvals", err)
	}
	return n, nil
}

// querier is what reads need from the pool or a transaction.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// lookup returns the entry selected by where, and false when there is none.
func (db *DB) lookup(ctx context.Context, op, where string, args ...any) (state.Entry, bool, error) {
	e, err := getOne(ctx, db.pool, where, args...)
	if errors.Is(err, state.ErrNotFound) {
		return state.Entry{}, false, nil
	}
	if err != nil {
		return state.Entry{}, false, db.fail(op, err)
	}
	return e, true, nil
}

func getOne(ctx context.Context, q querier, where string, args ...any) (state.Entry, error) {
	return state.First(getMany(ctx, q, where, args...))
}

func getMany(ctx context.Context, q querier, where string, args ...any) ([]state.Entry, error) {
	rows, err := q.Query(ctx, `SELECT `+entryColumns+` FROM entries `+where, args...)
	if err != nil {
		return nil, err
	}
	return collect(rows)
}

// collect scans rows of entryColumns.
func collect(rows pgx.Rows) ([]state.Entry, error) {
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (state.Entry, error) {
		var (
			e                state.Entry
			st               string
			order, approval  *string
			expires          *time.Time
			created, updated time.Time
		)
		if err := row.Scan(&e.IdempotencyKey, &e.StoreID, &e.SKU, &e.QuantityUnits, &e.Reason, &e.RequestHash, &st,
			&order, &e.ErrorCode, &e.ErrorMessage, &approval, &expires,
			&e.RequestedBy, &e.DecidedBy, &created, &updated, &e.UpstreamID); err != nil {
			return state.Entry{}, err
		}
		e.State = state.EntryState(st)
		if order != nil {
			e.OrderID = *order
		}
		if approval != nil {
			e.ApprovalID = *approval
		}
		if expires != nil {
			e.ApprovalExpiresAt = expires.UTC()
		}
		e.CreatedAt, e.UpdatedAt = created.UTC(), updated.UTC()
		return e, nil
	})
}

// countSQL counts entries by state; the parameter is now.
const countSQL = `SELECT state, COUNT(*),
	SUM(CASE WHEN state = 'pending_approval' AND approval_expires_at <= $1 THEN 1 ELSE 0 END),
	MIN(CASE WHEN state = 'pending_approval' AND approval_expires_at > $1 THEN approval_expires_at END)
	FROM entries GROUP BY state`

// CountEntries implements state.Counter.
func (db *DB) CountEntries(ctx context.Context, now time.Time) (state.LedgerCounts, error) {
	out := state.LedgerCounts{ByState: map[state.EntryState]int64{}}
	rows, err := db.pool.Query(ctx, countSQL, ts(now))
	if err != nil {
		return out, db.fail("count entries", err)
	}
	defer rows.Close()
	for rows.Next() {
		var st string
		var n, lapsed int64
		var next *time.Time
		if err := rows.Scan(&st, &n, &lapsed, &next); err != nil {
			return out, db.fail("count entries", err)
		}
		out.ByState[state.EntryState(st)] = n
		out.PendingLapsed += lapsed
		if next != nil && (out.NextExpiry.IsZero() || next.Before(out.NextExpiry)) {
			out.NextExpiry = next.UTC()
		}
	}
	if err := rows.Err(); err != nil {
		return out, db.fail("count entries", err)
	}
	return out, nil
}
