package postgres

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.ConsentNonces = (*DB)(nil)

// UseConsentNonce implements state.ConsentNonces: one INSERT … ON CONFLICT
// DO NOTHING, so replicas presenting the same nonce at once have exactly
// one winner (the primary key decides), in the transaction that forgets
// nonces whose question has lapsed.
func (db *DB) UseConsentNonce(ctx context.Context, nonce string, expiresAt, now time.Time) (bool, error) {
	if err := state.CheckConsentNonce(nonce, expiresAt); err != nil {
		return false, err
	}
	var fresh bool
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM consent_nonces WHERE expires_at < $1`, ts(now)); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO consent_nonces (nonce, expires_at, used_at) VALUES ($1, $2, $3) ON CONFLICT (nonce) DO NOTHING`,
			nonce, ts(expiresAt), ts(now))
		fresh = tag.RowsAffected() == 1
		return err
	})
	if err != nil {
		return false, db.fail("record consent nonce", err)
	}
	return fresh, nil
}
