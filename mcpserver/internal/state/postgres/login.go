package postgres

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.LoginAttempts = (*DB)(nil)

// sweepBatch bounds the rows one call sweeps, so a call after a long quiet
// spell stays short; the next calls take the rest.
const sweepBatch = 500

// lockLoginKey takes the row lock of key for the rest of tx: one INSERT …
// ON CONFLICT DO UPDATE … RETURNING, which inserts the row or locks the one
// there (also one another transaction is just deleting).
func lockLoginKey(ctx context.Context, tx pgx.Tx, key string, now time.Time) error {
	var got string
	return tx.QueryRow(ctx, `INSERT INTO login_keys (key, last_used) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET last_used = GREATEST(login_keys.last_used, EXCLUDED.last_used)
		RETURNING key`, key, ts(now)).Scan(&got)
}

// AdmitLogin implements state.LoginAttempts. The rows of the attempt's two
// keys are locked first, in a fixed order (so two attempts never wait for
// each other in a circle); then the keys' live rows are counted and the
// attempt inserted, all in one transaction, so no other replica counts the
// same keys in between. Expired rows are swept on the way, skipping rows
// another transaction holds.
func (db *DB) AdmitLogin(ctx context.Context, r state.LoginRequest) (state.LoginAdmission, error) {
	if err := state.CheckLoginRequest(r); err != nil {
		return state.LoginAdmission{}, err
	}
	slot := state.LoginSlot{NameKey: state.LoginNameKey(r.Name), AddrKey: state.LoginAddrKey(r.Addr), Window: r.Window}
	keys := []string{slot.NameKey, slot.AddrKey}
	slices.Sort(keys)
	now := ts(r.Now)
	var out state.LoginAdmission
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		for _, k := range keys {
			if err := lockLoginKey(ctx, tx, k, now); err != nil {
				return err
			}
		}
		if _, err := tx.Exec(ctx, `DELETE FROM login_attempts WHERE id IN (
			SELECT id FROM login_attempts WHERE expires_at <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, now, sweepBatch); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM login_keys WHERE key IN (
			SELECT key FROM login_keys WHERE last_used < $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, ts(r.Now.Add(-r.Window-r.Hold)), sweepBatch); err != nil {
			return err
		}
		var retry time.Time
		for _, q := range []struct{ col, key string }{{"name_key", slot.NameKey}, {"addr_key", slot.AddrKey}} {
			rows, err := tx.Query(ctx, `SELECT expires_at FROM login_attempts WHERE `+q.col+` = $1 AND expires_at > $2 ORDER BY expires_at`, q.key, now)
			if err != nil {
				return err
			}
			exp, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (time.Time, error) {
				var t time.Time
				err := row.Scan(&t)
				return t.UTC(), err
			})
			if err != nil {
				return err
			}
			if t := state.LoginRetryAt(exp, r.Limit); t.After(retry) {
				retry = t
			}
		}
		if !retry.IsZero() {
			out = state.LoginAdmission{RetryAt: retry}
			return nil
		}
		out = state.LoginAdmission{Admitted: true, Slot: slot}
		return tx.QueryRow(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES ($1, $2, false, $3) RETURNING id`,
			slot.NameKey, slot.AddrKey, ts(r.Now.Add(r.Hold))).Scan(&out.Slot.ID)
	})
	if err != nil {
		return state.LoginAdmission{}, db.fail("admit login", err)
	}
	return out, nil
}

// SettleLogin implements state.LoginAttempts.
func (db *DB) SettleLogin(ctx context.Context, slot state.LoginSlot, outcome state.LoginOutcome, now time.Time) error {
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		switch outcome {
		case state.LoginFailed:
			until := ts(now.Add(slot.Window))
			tag, err := tx.Exec(ctx, `UPDATE login_attempts SET failed = true, expires_at = $1 WHERE id = $2 AND name_key = $3 AND NOT failed`, until, slot.ID, slot.NameKey)
			if err != nil || tag.RowsAffected() == 1 {
				return err
			}
			// The slot lapsed and was swept while the check ran: the
			// failure counts all the same.
			_, err = tx.Exec(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES ($1, $2, true, $3)`, slot.NameKey, slot.AddrKey, until)
			return err
		case state.LoginSucceeded:
			// Under the name's lock, so two successes of one name do not
			// delete each other's rows in opposite orders.
			if err := lockLoginKey(ctx, tx, slot.NameKey, now); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DELETE FROM login_attempts WHERE id = $1 OR (name_key = $2 AND failed)`, slot.ID, slot.NameKey)
			return err
		case state.LoginAborted:
			_, err := tx.Exec(ctx, `DELETE FROM login_attempts WHERE id = $1 AND name_key = $2 AND NOT failed`, slot.ID, slot.NameKey)
			return err
		}
		return fmt.Errorf("unknown outcome %d", outcome)
	})
	if err != nil {
		return db.fail("settle login", err)
	}
	return nil
}
