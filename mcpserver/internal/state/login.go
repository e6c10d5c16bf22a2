package state

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"time"
)

// LoginAttempts is the approvals console's login rate limit, kept in the
// state database so that every replica sharing it grants one set of
// attempts, not one each. Admitting an attempt and counting it are one
// step: an admitted attempt holds a slot under its name key and its
// address key until it is settled, and a key is refused while its recent
// failures plus the attempts in flight reach the limit. So a burst of
// concurrent logins for one name is admitted only up to the limit, however
// many replicas it is spread over, and the slow secret check runs at most
// that many times per window.
type LoginAttempts interface {
	// AdmitLogin reserves a slot for one login attempt, or refuses it and
	// says when a slot opens again. The rows of the window that have run
	// out are swept in the same transaction.
	AdmitLogin(ctx context.Context, r LoginRequest) (LoginAdmission, error)
	// SettleLogin ends an admitted attempt: LoginFailed keeps it as a
	// failure for the window; LoginSucceeded releases the slot and forgets
	// the name's failures; LoginAborted (the check could not be made)
	// releases the slot only.
	SettleLogin(ctx context.Context, slot LoginSlot, outcome LoginOutcome, now time.Time) error
}

// LoginRequest is one login attempt presented for admission.
type LoginRequest struct {
	// Name is the approver name as typed; Addr the client's address. Only
	// hashes of their keys are stored (LoginNameKey, LoginAddrKey): people
	// type their secret into the name field often enough.
	Name, Addr string
	Now        time.Time
	// Limit is how many failures plus attempts in flight a key may hold
	// within Window.
	Limit  int
	Window time.Duration
	// Hold is how long an attempt in flight holds its slot if it is never
	// settled (its process crashed); then the slot lapses by itself.
	Hold time.Duration
}

// LoginAdmission is AdmitLogin's verdict.
type LoginAdmission struct {
	// Admitted reports a slot reserved; Slot is it.
	Admitted bool
	Slot     LoginSlot
	// RetryAt is, for a refused attempt, when a slot opens again for every
	// key that refused it.
	RetryAt time.Time
}

// LoginSlot is an admitted attempt, to be settled.
type LoginSlot struct {
	ID               int64
	NameKey, AddrKey string
	// Window is how long a failure counts.
	Window time.Duration
}

// LoginOutcome is how an admitted attempt ended.
type LoginOutcome int

// The outcomes of a login attempt.
const (
	LoginFailed LoginOutcome = iota + 1
	LoginSucceeded
	LoginAborted
)

// ErrBadLoginRequest reports a LoginRequest without a limit, window or hold.
var ErrBadLoginRequest = errors.New("state: a login attempt needs a positive limit, window and hold")

// LoginNameKey is the key of a typed name in the login limit: a hash of
// ApproverNameKey, the register's own key, so that every spelling the
// register takes for one name (case, NFC or NFD) shares one set of
// attempts.
func LoginNameKey(name string) string { return loginKey("name", ApproverNameKey(name)) }

// LoginAddrKey is the key of a client address in the login limit.
func LoginAddrKey(addr string) string { return loginKey("addr", addr) }

func loginKey(kind, v string) string {
	sum := sha256.Sum256([]byte("storelink console login " + kind + "\x00" + v))
	return kind + ":" + hex.EncodeToString(sum[:])
}

// CheckLoginRequest reports why r cannot be admitted, or nil.
func CheckLoginRequest(r LoginRequest) error {
	if r.Limit <= 0 || r.Window <= 0 || r.Hold <= 0 || r.Now.IsZero() {
		return ErrBadLoginRequest
	}
	return nil
}

// LoginRetryAt returns when a key holding a slot for each of expiries (the
// moments its failures leave the window and its attempts in flight lapse,
// ascending) drops below limit, or the zero time when it already is below.
func LoginRetryAt(expiries []time.Time, limit int) time.Time {
	if len(expiries) < limit {
		return time.Time{}
	}
	return expiries[len(expiries)-limit]
}

var _ LoginAttempts = (*DB)(nil)

// AdmitLogin implements LoginAttempts. The whole step is one write
// transaction, which SQLite begins with BEGIN IMMEDIATE (see dsn): it holds
// the database's write lock from its first statement, so no other process
// counts the same keys between this count and this insert.
func (db *DB) AdmitLogin(ctx context.Context, r LoginRequest) (LoginAdmission, error) {
	if err := CheckLoginRequest(r); err != nil {
		return LoginAdmission{}, err
	}
	slot := LoginSlot{NameKey: LoginNameKey(r.Name), AddrKey: LoginAddrKey(r.Addr), Window: r.Window}
	var out LoginAdmission
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
			if t := LoginRetryAt(exp, r.Limit); t.After(retry) {
				retry = t
			}
		}
		if !retry.IsZero() {
			out = LoginAdmission{RetryAt: retry}
			return nil
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO login_attempts (name_key, addr_key, failed, expires_at) VALUES (?, ?, 0, ?) RETURNING id`,
			slot.NameKey, slot.AddrKey, formatTime(r.Now.Add(r.Hold))).Scan(&slot.ID)
		out = LoginAdmission{Admitted: true, Slot: slot}
		return err
	})
	if err != nil {
		return LoginAdmission{}, fmt.Errorf("state: admit login: %w", err)
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
func (db *DB) SettleLogin(ctx context.Context, slot LoginSlot, outcome LoginOutcome, now time.Time) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		switch outcome {
		case LoginFailed:
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
		case LoginSucceeded:
			if _, err := tx.ExecContext(ctx, `DELETE FROM login_attempts WHERE id = ? OR (name_key = ? AND failed = 1)`, slot.ID, slot.NameKey); err != nil {
				return err
			}
			return nil
		case LoginAborted:
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
