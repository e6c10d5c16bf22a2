package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Apply moves the entry under key by ev, recording ch, as one conditional
// update (… WHERE idempotency_key = ? AND state = ?). A pair the table does
// not allow is refused with ErrInvalidTransition; an entry about to be sent
// is refused with an *InFlightError while the same request is in flight
// under another key, and an order id another entry of the same StoreLink
// already holds with an *OrderIDTakenError.
func (db *DB) Apply(ctx context.Context, key string, ev state.Event, ch state.Change, now time.Time) (state.Entry, error) {
	var got state.Entry
	err := db.write(ctx, func(tx *sql.Tx) error {
		cur, err := getOne(ctx, tx, `WHERE idempotency_key = ?`, key)
		if err != nil {
			return err
		}
		got, err = applyTx(ctx, tx, cur, ev, ch, now)
		return err
	})
	return got, err
}

// applyTx is Apply inside a write transaction that has already read cur.
func applyTx(ctx context.Context, tx *sql.Tx, cur state.Entry, ev state.Event, ch state.Change, now time.Time) (state.Entry, error) {
	e, err := state.Transition(cur, ev, ch, now)
	if err != nil {
		return state.Entry{}, err
	}
	if e.State == state.StateSending {
		if err := checkNotInFlight(ctx, tx, cur.RequestHash, cur.IdempotencyKey); err != nil {
			return state.Entry{}, err
		}
	}
	if e.OrderID != "" && e.OrderID != cur.OrderID {
		if err := checkOrderIDFree(ctx, tx, cur, e.OrderID); err != nil {
			return state.Entry{}, err
		}
	}
	var order sql.NullString
	if e.OrderID != "" {
		order = sql.NullString{String: e.OrderID, Valid: true}
	}
	res, err := tx.ExecContext(ctx, `UPDATE entries
		SET state = ?, order_id = ?, error_code = ?, error_message = ?, decided_by = ?, updated_at = ?
		WHERE idempotency_key = ? AND state = ?`,
		string(e.State), order, e.ErrorCode, e.ErrorMessage, e.DecidedBy, formatTime(now), cur.IdempotencyKey, string(cur.State))
	if err != nil {
		return state.Entry{}, fmt.Errorf("state: %s %q: %w", ev, cur.IdempotencyKey, err)
	}
	if n, err := res.RowsAffected(); err != nil || n != 1 {
		return state.Entry{}, fmt.Errorf("%w: %q changed state while %s was applied", state.ErrInvalidTransition, cur.IdempotencyKey, ev)
	}
	return getOne(ctx, tx, `WHERE idempotency_key = ?`, cur.IdempotencyKey)
}

// checkNotInFlight refuses a send while another entry with the same request
// fingerprint is sending or unknown: one request is one order, whatever the
// key.
func checkNotInFlight(ctx context.Context, tx *sql.Tx, hash, key string) error {
	es, err := getMany(ctx, tx, `WHERE request_hash = ? AND state IN ('sending', 'unknown') AND idempotency_key <> ?
		ORDER BY id LIMIT 1`, hash, key)
	if err != nil {
		return err
	}
	if len(es) > 0 {
		return &state.InFlightError{Entry: es[0]}
	}
	return nil
}
