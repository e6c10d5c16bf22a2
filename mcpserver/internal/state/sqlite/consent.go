package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.ConsentNonces = (*DB)(nil)

// UseConsentNonce implements state.ConsentNonces: one INSERT that does nothing
// on a nonce already there, in the same write transaction as the removal
// of lapsed nonces, so two processes presenting the same nonce at once
// have exactly one winner (SQLite's write lock orders them).
func (db *DB) UseConsentNonce(ctx context.Context, nonce string, expiresAt, now time.Time) (bool, error) {
	if err := state.CheckConsentNonce(nonce, expiresAt); err != nil {
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
