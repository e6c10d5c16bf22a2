package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Apply moves the entry under key by ev, recording ch, as one conditional
// update. It refuses with ErrInvalidTransition, *InFlightError or
// *OrderIDTakenError.
func (db *DB) Apply(ctx context.Context, key string, ev state.Event, ch state.Change, now time.Time) (state.Entry, error) {
	var got state.Entry
	err := db.write(ctx, func(tx *sql.Tx) error {
		cur, err := getOne(ctx, tx, `WHERE idempotency_key = ?`, key)
		if err != nil {
			return err
		}
		got, err = state.ApplyTx(ctx, ledgerTx{tx}, cur, ev, ch, now)
		return err
	})
	return got, err
}

// ledgerTx is a write transaction as state.LedgerTx; the write lock held
// from BEGIN serialises every writer.
type ledgerTx struct{ tx *sql.Tx }

// Insert implements state.LedgerTx.
func (t ledgerTx) Insert(ctx context.Context, e state.Entry) (state.Entry, bool, error) {
	cur, err := getOne(ctx, t.tx, `WHERE idempotency_key = ?`, e.IdempotencyKey)
	if !errors.Is(err, state.ErrNotFound) {
		return cur, false, err
	}
	approvalID, expires := approval(e)
	created := formatTime(e.CreatedAt)
	if _, err := t.tx.ExecContext(ctx, `INSERT INTO entries (`+entryColumns+`)
				VALUES (?, ?, ?, ?, ?, ?, ?, NULL, '', '', ?, ?, ?, '', ?, ?, ?)`,
		e.IdempotencyKey, e.StoreID, e.SKU, e.QuantityUnits, e.Reason, e.RequestHash, string(e.State),
		approvalID, expires, e.RequestedBy, created, created, e.UpstreamID); err != nil {
		return state.Entry{}, false, fmt.Errorf("state: reserve %q: %w", e.IdempotencyKey, err)
	}
	got, err := getOne(ctx, t.tx, `WHERE idempotency_key = ?`, e.IdempotencyKey)
	return got, err == nil, err
}

// Retake implements state.LedgerTx.
func (t ledgerTx) Retake(ctx context.Context, e, cur state.Entry) (state.Entry, bool, error) {
	approvalID, expires := approval(e)
	res, err := t.tx.ExecContext(ctx, `UPDATE entries
				SET state = ?, order_id = NULL, error_code = '', error_message = '', approval_id = ?, approval_expires_at = ?,
					requested_by = ?, decided_by = '', upstream_id = ?, updated_at = ?
				WHERE idempotency_key = ? AND state = 'retryable'`,
		string(e.State), approvalID, expires, e.RequestedBy, e.UpstreamID, formatTime(e.CreatedAt), e.IdempotencyKey)
	if err != nil {
		return state.Entry{}, false, fmt.Errorf("state: reserve %q again: %w", e.IdempotencyKey, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return state.Entry{}, false, nil
	}
	got, err := getOne(ctx, t.tx, `WHERE idempotency_key = ?`, e.IdempotencyKey)
	return got, err == nil, err
}

// approval is a new entry's approval id and expiry; NULL unless staged.
func approval(e state.Entry) (approvalID, expires sql.NullString) {
	if e.State == state.StatePendingApproval {
		approvalID = sql.NullString{String: e.ApprovalID, Valid: true}
		expires = sql.NullString{String: formatTime(e.ApprovalExpiresAt), Valid: true}
	}
	return approvalID, expires
}

// Update implements state.LedgerTx.
func (t ledgerTx) Update(ctx context.Context, cur, e state.Entry, ev state.Event) (state.Entry, bool, error) {
	var order sql.NullString
	if e.OrderID != "" {
		order = sql.NullString{String: e.OrderID, Valid: true}
	}
	res, err := t.tx.ExecContext(ctx, `UPDATE entries
		SET state = ?, order_id = ?, error_code = ?, error_message = ?, decided_by = ?, updated_at = ?
		WHERE idempotency_key = ? AND state = ?`,
		string(e.State), order, e.ErrorCode, e.ErrorMessage, e.DecidedBy, formatTime(e.UpdatedAt), cur.IdempotencyKey, string(cur.State))
	if err != nil {
		return state.Entry{}, false, fmt.Errorf("state: %s %q: %w", ev, cur.IdempotencyKey, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return state.Entry{}, false, nil
	}
	got, err := getOne(ctx, t.tx, `WHERE idempotency_key = ?`, cur.IdempotencyKey)
	return got, err == nil, err
}

// InFlight implements state.LedgerTx.
func (t ledgerTx) InFlight(ctx context.Context, hash, key string) (state.Entry, bool, error) {
	return first(getMany(ctx, t.tx, `WHERE request_hash = ? AND state IN ('sending', 'unknown') AND idempotency_key <> ?
		ORDER BY id LIMIT 1`, hash, key))
}

// first is the first of es, and whether there is one.
func first(es []state.Entry, err error) (state.Entry, bool, error) {
	if err != nil || len(es) == 0 {
		return state.Entry{}, false, err
	}
	return es[0], true, nil
}
