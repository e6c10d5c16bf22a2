package postgres

import (
	"context"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.LoginAttempts = (*DB)(nil)

// sweepBatch bounds the rows one call sweeps.
const sweepBatch = 500

// lockLoginKey locks key's row for the rest of tx, inserting it if needed.
func lockLoginKey(ctx context.Context, tx pgx.Tx, key string, now time.Time) error {
	var got string
	return tx.QueryRow(ctx, `INSERT INTO login_keys (key, last_used) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET last_used = GREATEST(login_keys.last_used, EXCLUDED.last_used)
		RETURNING key`, key, ts(now)).Scan(&got)
}

// AdmitLogin implements state.LoginAttempts: the two keys' rows are locked
// in a fixed order, then live rows counted and the attempt inserted in one
// transaction.
func (db *DB) AdmitLogin(ctx context.Context, r state.LoginRequest) (state.LoginAdmission, error) {
	slot, err := state.NewLoginSlot(r)
	if err != nil {
		return state.LoginAdmission{}, err
	}
	var out state.LoginAdmission
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		var err error
		out, err = state.AdmitLoginTx(ctx, loginTx{tx}, r, slot)
		return err
	})
	if err != nil {
		return state.LoginAdmission{}, db.fail("admit login", err)
	}
	return out, nil
}

// SettleLogin implements state.LoginAttempts.
func (db *DB) SettleLogin(ctx context.Context, slot state.LoginSlot, outcome state.LoginOutcome, now time.Time) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		return state.SettleLoginTx(ctx, loginTx{tx}, slot, outcome, now)
	})
	if err != nil {
		return db.fail("settle login", err)
	}
	return nil
}

// loginTx is a transaction as state.LoginTx, serialised per key by
// login_keys rows.
type loginTx struct{ tx pgx.Tx }

// Sweep implements state.LoginTx: lock both keys, then sweep in batches.
func (t loginTx) Sweep(ctx context.Context, r state.LoginRequest, slot state.LoginSlot) error {
	keys := []string{slot.NameKey, slot.AddrKey}
	slices.Sort(keys)
	now := ts(r.Now)
	for _, k := range keys {
		if err := lockLoginKey(ctx, t.tx, k, now); err != nil {
			return err
		}
	}
	if _, err := t.tx.Exec(ctx, `DELETE FROM login_attempts WHERE id IN (
			SELECT id FROM login_attempts WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, now, sweepBatch); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `DELETE FROM login_keys WHERE key IN (
			SELECT key FROM login_keys WHERE last_used < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, ts(r.Now.Add(-r.Window-r.Hold)), sweepBatch)
	return err
}

// Expiries implements state.LoginTx, skipping expired rows not yet swept.
func (t loginTx) Expiries(ctx context.Context, byName bool, key string, now time.Time) ([]time.Time, error) {
	col := "addr_key"
	if byName {
		col = "name_key"
	}
	rows, err := t.tx.Query(ctx, `SELECT expires_at FROM login_attempts WHERE `+col+` = $1 AND expires_at > $2 ORDER BY expires_at`, key, ts(now))
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (time.Time, error) {
		var t time.Time
		err := row.Scan(&t)
		return t.UTC(), err
	})
}

// Admit implements state.LoginTx.
func (t loginTx) Admit(ctx context.Context, slot state.LoginSlot, expires time.Time) (int64, error) {
	var id int64
	err := t.tx.QueryRow(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES ($1, $2, false, $3) RETURNING id`,
		slot.NameKey, slot.AddrKey, ts(expires)).Scan(&id)
	return id, err
}

// Fail implements state.LoginTx.
func (t loginTx) Fail(ctx context.Context, slot state.LoginSlot, until time.Time) (bool, error) {
	tag, err := t.tx.Exec(ctx, `UPDATE login_attempts SET failed = true, expires_at = $1 WHERE id = $2 AND name_key = $3 AND NOT failed`, ts(until), slot.ID, slot.NameKey)
	if err != nil {
		return false, err
	}
	return tag.RowsAffected() == 1, nil
}

// AddFailure implements state.LoginTx.
func (t loginTx) AddFailure(ctx context.Context, slot state.LoginSlot, until time.Time) error {
	_, err := t.tx.Exec(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES ($1, $2, true, $3)`, slot.NameKey, slot.AddrKey, ts(until))
	return err
}

// Succeed implements state.LoginTx, under the name's lock.
func (t loginTx) Succeed(ctx context.Context, slot state.LoginSlot, now time.Time) error {
	if err := lockLoginKey(ctx, t.tx, slot.NameKey, now); err != nil {
		return err
	}
	_, err := t.tx.Exec(ctx, `DELETE FROM login_attempts WHERE id = $1 OR (name_key = $2 AND failed)`, slot.ID, slot.NameKey)
	return err
}

// Abort implements state.LoginTx.
func (t loginTx) Abort(ctx context.Context, slot state.LoginSlot) error {
	_, err := t.tx.Exec(ctx, `DELETE FROM login_attempts WHERE id = $1 AND name_key = $2 AND NOT failed`, slot.ID, slot.NameKey)
	return err
}
