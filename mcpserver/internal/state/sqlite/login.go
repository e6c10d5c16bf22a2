package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.LoginAttempts = (*DB)(nil)

// AdmitLogin implements state.LoginAttempts. The whole step is one write
// transaction, which SQLite begins with BEGIN IMMEDIATE (see dsn): it holds
// the database's write lock from its first statement, so no other process
// counts the same keys between this count and this insert.
func (db *DB) AdmitLogin(ctx context.Context, r state.LoginRequest) (state.LoginAdmission, error) {
	slot, err := state.NewLoginSlot(r)
	if err != nil {
		return state.LoginAdmission{}, err
	}
	var out state.LoginAdmission
	err = db.write(ctx, func(tx *sql.Tx) error {
		var err error
		out, err = state.AdmitLoginTx(ctx, loginTx{tx}, r, slot)
		return err
	})
	if err != nil {
		return state.LoginAdmission{}, fmt.Errorf("state: admit login: %w", err)
	}
	return out, nil
}

// SettleLogin implements state.LoginAttempts.
func (db *DB) SettleLogin(ctx context.Context, slot state.LoginSlot, outcome state.LoginOutcome, now time.Time) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		return state.SettleLoginTx(ctx, loginTx{tx}, slot, outcome, now)
	})
	if err != nil {
		return fmt.Errorf("state: settle login: %w", err)
	}
	return nil
}

// loginTx is a write transaction as the login limit's shared algorithms
// use it (state.LoginTx); the write lock serialises it with every other
// writer of the file.
type loginTx struct{ tx *sql.Tx }

// Sweep implements state.LoginTx.
func (t loginTx) Sweep(ctx context.Context, r state.LoginRequest, _ state.LoginSlot) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM login_attempts WHERE expires_at <= ?`, formatTime(r.Now))
	return err
}

// Expiries implements state.LoginTx. Sweep has removed the rows that ran
// out.
func (t loginTx) Expiries(ctx context.Context, byName bool, key string, _ time.Time) ([]time.Time, error) {
	col := "addr_key"
	if byName {
		col = "name_key"
	}
	rows, err := t.tx.QueryContext(ctx, `SELECT expires_at FROM login_attempts WHERE `+col+` = ? ORDER BY expires_at`, key)
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

// Admit implements state.LoginTx.
func (t loginTx) Admit(ctx context.Context, slot state.LoginSlot, expires time.Time) (int64, error) {
	var id int64
	err := t.tx.QueryRowContext(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES (?, ?, 0, ?) RETURNING id`,
		slot.NameKey, slot.AddrKey, formatTime(expires)).Scan(&id)
	return id, err
}

// Fail implements state.LoginTx.
func (t loginTx) Fail(ctx context.Context, slot state.LoginSlot, until time.Time) (bool, error) {
	res, err := t.tx.ExecContext(ctx, `UPDATE login_attempts SET failed = 1, expires_at = ? WHERE id = ? AND name_key = ? AND failed = 0`, formatTime(until), slot.ID, slot.NameKey)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// AddFailure implements state.LoginTx.
func (t loginTx) AddFailure(ctx context.Context, slot state.LoginSlot, until time.Time) error {
	_, err := t.tx.ExecContext(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES (?, ?, 1, ?)`, slot.NameKey, slot.AddrKey, formatTime(until))
	return err
}

// Succeed implements state.LoginTx.
func (t loginTx) Succeed(ctx context.Context, slot state.LoginSlot, _ time.Time) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM login_attempts WHERE id = ? OR (name_key = ? AND failed = 1)`, slot.ID, slot.NameKey)
	return err
}

// Abort implements state.LoginTx.
func (t loginTx) Abort(ctx context.Context, slot state.LoginSlot) error {
	_, err := t.tx.ExecContext(ctx, `DELETE FROM login_attempts WHERE id = ? AND name_key = ? AND failed = 0`, slot.ID, slot.NameKey)
	return err
}
