package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

const entryColumns = `idempotency_key, store_id, sku, quantity_units, reason, request_hash, state,
	order_id, error_code, error_message, approval_id, approval_expires_at,
	requested_by, decided_by, created_at, updated_at, upstream_id`

// Reserve implements state.Ledger. e.State must be StateSending or
// StatePendingApproval (with ApprovalID and ApprovalExpiresAt). Taking over
// a retryable entry keeps its CreatedAt.
func (db *DB) Reserve(ctx context.Context, e state.Entry) (state.Entry, bool, error) {
	e, err := state.NewEntry(e)
	if err != nil {
		return state.Entry{}, false, err
	}
	var got state.Entry
	var taken bool
	err = db.write(ctx, func(tx *sql.Tx) error {
		var err error
		got, taken, err = state.ReserveTx(ctx, ledgerTx{tx}, e)
		return err
	})
	if err != nil {
		return state.Entry{}, false, err
	}
	return got, taken, nil
}

// Finish implements state.Ledger. StateRaised requires an orderID.
func (db *DB) Finish(ctx context.Context, key string, st state.EntryState, orderID, errCode, errMsg string, now time.Time) (state.Entry, error) {
	ev, err := state.FinishEvent(key, st, orderID)
	if err != nil {
		return state.Entry{}, err
	}
	return db.Apply(ctx, key, ev, state.Change{OrderID: orderID, ErrorCode: errCode, ErrorMessage: errMsg}, now)
}

// Get implements state.Ledger.
func (db *DB) Get(ctx context.Context, key string) (state.Entry, bool, error) {
	return found(getOne(ctx, db.sql, `WHERE idempotency_key = ?`, key))
}

// ByOrderID implements state.Ledger; on a reused order id the latest entry
// wins.
func (db *DB) ByOrderID(ctx context.Context, orderID string) (state.Entry, bool, error) {
	if orderID == "" {
		return state.Entry{}, false, nil
	}
	return found(getOne(ctx, db.sql, `WHERE order_id = ? ORDER BY id DESC LIMIT 1`, orderID))
}

// ByApprovalID implements state.Ledger.
func (db *DB) ByApprovalID(ctx context.Context, approvalID string) (state.Entry, bool, error) {
	if approvalID == "" {
		return state.Entry{}, false, nil
	}
	return found(getOne(ctx, db.sql, `WHERE approval_id = ?`, approvalID))
}

// Recent implements state.Ledger.
func (db *DB) Recent(ctx context.Context, storeID, sku string, since time.Time) ([]state.Entry, error) {
	return getMany(ctx, db.sql, `WHERE store_id = ? AND sku = ? AND created_at >= ?
		ORDER BY created_at DESC, id DESC`, storeID, sku, formatTime(since))
}

// Pending implements state.Ledger.
func (db *DB) Pending(ctx context.Context, now time.Time) ([]state.Entry, error) {
	return getMany(ctx, db.sql, `WHERE state = 'pending_approval' AND approval_expires_at > ?
		ORDER BY created_at, id`, formatTime(now))
}

// Staged implements state.Ledger.
func (db *DB) Staged(ctx context.Context) ([]state.Entry, error) {
	return getMany(ctx, db.sql, `WHERE approval_id IS NOT NULL ORDER BY created_at, id`)
}

// Claim implements state.Ledger.
func (db *DB) Claim(ctx context.Context, approvalID, decidedBy string, now time.Time) (state.Entry, error) {
	return db.decide(ctx, approvalID, decidedBy, state.EventClaim, now)
}

// Reject implements state.Ledger.
func (db *DB) Reject(ctx context.Context, approvalID, decidedBy string, now time.Time) (state.Entry, error) {
	return db.decide(ctx, approvalID, decidedBy, state.EventReject, now)
}

// decide applies ev to a pending, unexpired approval in one write-locked
// transaction, so one decider wins.
func (db *DB) decide(ctx context.Context, approvalID, decidedBy string, ev state.Event, now time.Time) (state.Entry, error) {
	if approvalID == "" {
		return state.Entry{}, fmt.Errorf("%w: empty approval id", state.ErrNotFound)
	}
	var got state.Entry
	err := db.write(ctx, func(tx *sql.Tx) error {
		cur, err := getOne(ctx, tx, `WHERE approval_id = ?`, approvalID)
		if err != nil {
			return err
		}
		got, err = state.DecideTx(ctx, ledgerTx{tx}, cur, approvalID, decidedBy, ev, now)
		return err
	})
	return got, err
}

// Expire implements state.Ledger; an approval expires at ApprovalExpiresAt.
func (db *DB) Expire(ctx context.Context, now time.Time) (int, error) {
	var n int
	err := db.write(ctx, func(tx *sql.Tx) error {
		due, err := getMany(ctx, tx, `WHERE state = 'pending_approval' AND approval_expires_at <= ?`, formatTime(now))
		if err != nil {
			return err
		}
		if err := state.ExpireTx(ctx, ledgerTx{tx}, due, now); err != nil {
			return fmt.Errorf("state: expire approvals: %w", err)
		}
		n = len(due)
		return nil
	})
	return n, err
}

// querier is what reads need from either the pool or a transaction.
type querier interface {
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
}

// getOne returns the single entry selected by where, or ErrNotFound.
func getOne(ctx context.Context, q querier, where string, args ...any) (state.Entry, error) {
	return state.First(getMany(ctx, q, where, args...))
}

// found turns ErrNotFound into the (zero, false, nil) of the lookup methods.
func found(e state.Entry, err error) (state.Entry, bool, error) {
	if errors.Is(err, state.ErrNotFound) {
		return state.Entry{}, false, nil
	}
	if err != nil {
		return state.Entry{}, false, err
	}
	return e, true, nil
}

func getMany(ctx context.Context, q querier, where string, args ...any) ([]state.Entry, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+entryColumns+` FROM entries `+where, args...)
	if err != nil {
		return nil, fmt.Errorf("state: read ledger: %w", err)
	}
	defer rows.Close()
	var out []state.Entry
	for rows.Next() {
		e, err := scanEntry(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("state: read ledger: %w", err)
	}
	return out, nil
}

func scanEntry(rows *sql.Rows) (state.Entry, error) {
	var (
		e                        state.Entry
		st                       string
		order, approval, expires sql.NullString
		created, updated         string
	)
	if err := rows.Scan(&e.IdempotencyKey, &e.StoreID, &e.SKU, &e.QuantityUnits, &e.Reason, &e.RequestHash, &st,
		&order, &e.ErrorCode, &e.ErrorMessage, &approval, &expires,
		&e.RequestedBy, &e.DecidedBy, &created, &updated, &e.UpstreamID); err != nil {
		return state.Entry{}, fmt.Errorf("state: read ledger entry: %w", err)
	}
	e.State = state.EntryState(st)
	e.OrderID = order.String
	e.ApprovalID = approval.String
	var err error
	if expires.Valid {
		if e.ApprovalExpiresAt, err = parseTime(expires.String); err != nil {
			return state.Entry{}, err
		}
	}
	if e.CreatedAt, err = parseTime(created); err != nil {
		return state.Entry{}, err
	}
	if e.UpdatedAt, err = parseTime(updated); err != nil {
		return state.Entry{}, err
	}
	return e, nil
}
