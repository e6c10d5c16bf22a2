package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.LoginAttempts = (*DB)(nil)

// AdmitLogin implements LoginAttempts. The whole step is one write
// transaction, which SQLite begins with BEGIN IMMEDIATE (see dsn): it holds
// the database's write lock from its first statement, so no other process
// counts the same keys between this count and this insert.
func (db *DB) AdmitLogin(ctx context.Context, r state.LoginRequest) (state.LoginAdmission, error) {
	if err := state.CheckLoginRequest(r); err != nil {
		return state.LoginAdmission{}, err
	}
	slot := state.LoginSlot{NameKey: state.LoginNameKey(r.Name), AddrKey: state.LoginAddrKey(r.Addr), Window: r.Window}
	var out state.LoginAdmission
	err := db.write(ctx, func(tx *sql.Tx) error {
		now := formatTime(r.Now)
		if _, err := tx.ExecContext(ctx, `DELETE FROM login_attempts WHERE expires_at <= ?`, now); err != nil {
			return err
		}
		var retry time.Time
		for _, q := range []struct{ col, key string }{{"name_key", slot.NameKey}, {"addr_key", slot.AddrKey}} {
			exp, err := loginExpiries(ctx, tx, `SELECT expires_at FROM login_attempts WHERE `+q.col+` = ? ORDER BY expires_at`, q.key)
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
		err := tx.QueryRowContext(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES (?, ?, 0, ?) RETURNING id`,
			slot.NameKey, slot.AddrKey, formatTime(r.Now.Add(r.Hold))).Scan(&slot.ID)
		out = state.LoginAdmission{Admitted: true, Slot: slot}
		return err
	})
	if err != nil {
		return state.LoginAdmission{}, fmt.Errorf("state: admit login: %w", err)
	}
	return out, nil
}

func loginExpiries(ctx context.Context, tx *sql.Tx, query, key string) ([]time.Time, error) {
	rows, err := tx.QueryContext(ctx, query, key)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []time.Time
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			return nil, err
		}
		t, err := parseTime(s)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// SettleLogin implements LoginAttempts. A failure whose slot has lapsed
// and been swept meanwhile is recorded all the same.
func (db *DB) SettleLogin(ctx context.Context, slot state.LoginSlot, outcome state.LoginOutcome, now time.Time) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		switch outcome {
		case state.LoginFailed:
			until := formatTime(now.Add(slot.Window))
			res, err := tx.ExecContext(ctx, `UPDATE login_attempts SET failed = 1, expires_at = ? WHERE id = ? AND name_key = ? AND failed = 0`, until, slot.ID, slot.NameKey)
			if err != nil {
				return err
			}
			if n, err := res.RowsAffected(); err != nil || n == 1 {
				return err
			}
			_, err = tx.ExecContext(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES (?, ?, 1, ?)`, slot.NameKey, slot.AddrKey, until)
			return err
		case state.LoginSucceeded:
			if _, err := tx.ExecContext(ctx, `DELETE FROM login_attempts WHERE id = ? OR (name_key = ? AND failed = 1)`, slot.ID, slot.NameKey); err != nil {
				return err
			}
			return nil
		case state.LoginAborted:
			_, err := tx.ExecContext(ctx, `DELETE FROM login_attempts WHERE id = ? AND name_key = ? AND failed = 0`, slot.ID, slot.NameKey)
			return err
		}
		return fmt.Errorf("unknown outcome %d", outcome)
	})
	if err != nil {
		return fmt.Errorf("state: settle login: %w", err)
	}
	return nil
}
