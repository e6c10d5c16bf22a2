package state

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// ConsentNonces remembers the single-use nonces of host consent
// (WRITE_APPROVAL=host): each sealed question the server hands a host
// carries one, and the answer to it is honoured only the first time the
// nonce is presented, on any replica sharing the state database.
type ConsentNonces interface {
	// UseConsentNonce records nonce as used and reports true, or reports
	// false when it was recorded before (a replay). expiresAt is when the
	// sealed question lapses by itself; a nonce is kept at least until
	// then, and nonces lapsed before now may be forgotten, since their
	// question is refused as expired anyway.
	UseConsentNonce(ctx context.Context, nonce string, expiresAt, now time.Time) (bool, error)
}

// ErrBadNonce reports a nonce UseConsentNonce will not record.
var ErrBadNonce = errors.New("state: consent nonce must be 16 to 64 characters")

// CheckConsentNonce reports why a nonce must not be recorded, or nil.
func CheckConsentNonce(nonce string, expiresAt time.Time) error {
	if len(nonce) < 16 || len(nonce) > 64 || expiresAt.IsZero() {
		return ErrBadNonce
	}
	return nil
}

var _ ConsentNonces = (*DB)(nil)

// UseConsentNonce implements ConsentNonces: one INSERT that does nothing
// on a nonce already there, in the same write transaction as the removal
// of lapsed nonces, so two processes presenting the same nonce at once
// have exactly one winner (SQLite's write lock orders them).
func (db *DB) UseConsentNonce(ctx context.Context, nonce string, expiresAt, now time.Time) (bool, error) {
	if err := CheckConsentNonce(nonce, expiresAt); err != nil {
		return false, err
	}
	var fresh bool
	err := db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM consent_nonces WHERE expires_at < ?`, formatTime(now)); err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `INSERT INTO consent_nonces (nonce, expires_at, used_at) VALUES (?, ?, ?) ON CONFLICT (nonce) DO NOTHING`,
			nonce, formatTime(expiresAt), formatTime(now))
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		fresh = n == 1
		return err
	})
	if err != nil {
		return false, fmt.Errorf("state: record consent nonce: %w", err)
	}
	return fresh, nil
}
