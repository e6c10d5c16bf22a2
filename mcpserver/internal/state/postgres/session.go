package postgres

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.ConsoleSessions = (*DB)(nil)

// CreateConsoleSession implements state.ConsoleSessions: the insert, and a
// bounded sweep of lapsed sessions that skips rows another transaction
// holds.
func (db *DB) CreateConsoleSession(ctx context.Context, s state.ConsoleSession, now time.Time) error {
	if err := state.CheckConsoleSession(s); err != nil {
		return err
	}
	err := pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DELETE FROM console_sessions WHERE key_hash IN (
			SELECT key_hash FROM console_sessions WHERE expires_at <= $1 OR idle_until <= $1 LIMIT $2 FOR UPDATE SKIP LOCKED)`, ts(now), sweepBatch); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO console_sessions (key_hash, approver_id, created_at, last_seen, idle_until, expires_at) VALUES ($1, $2, $3, $4, $5, $6)`,
			s.KeyHash, s.ApproverID, ts(s.CreatedAt), ts(s.LastSeen), ts(s.IdleUntil), ts(s.ExpiresAt))
		return err
	})
	if err != nil {
		return db.fail("create console session", err)
	}
	return nil
}

// GetConsoleSession implements state.ConsoleSessions.
func (db *DB) GetConsoleSession(ctx context.Context, keyHash string) (state.ConsoleSession, bool, error) {
	var s state.ConsoleSession
	err := db.pool.QueryRow(ctx, `SELECT s.key_hash, s.approver_id, a.name, a.revoked_at IS NOT NULL, s.created_at, s.last_seen, s.idle_until, s.expires_at
		FROM console_sessions s JOIN approvers a ON a.id = s.approver_id WHERE s.key_hash = $1`, keyHash).
		Scan(&s.KeyHash, &s.ApproverID, &s.Approver, &s.Revoked, &s.CreatedAt, &s.LastSeen, &s.IdleUntil, &s.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return state.ConsoleSession{}, false, nil
	}
	if err != nil {
		return state.ConsoleSession{}, false, db.fail("read console session", err)
	}
	s.CreatedAt, s.LastSeen, s.IdleUntil, s.ExpiresAt = s.CreatedAt.UTC(), s.LastSeen.UTC(), s.IdleUntil.UTC(), s.ExpiresAt.UTC()
	return s, true, nil
}

// TouchConsoleSession implements state.ConsoleSessions.
func (db *DB) TouchConsoleSession(ctx context.Context, keyHash string, lastSeen, idleUntil time.Time) error {
	if _, err := db.pool.Exec(ctx, `UPDATE console_sessions SET last_seen = $1, idle_until = $2 WHERE key_hash = $3 AND last_seen < $1`,
		ts(lastSeen), ts(idleUntil), keyHash); err != nil {
		return db.fail("touch console session", err)
	}
	return nil
}

// DeleteConsoleSession implements state.ConsoleSessions.
func (db *DB) DeleteConsoleSession(ctx context.Context, keyHash string) error {
	if _, err := db.pool.Exec(ctx, `DELETE FROM console_sessions WHERE key_hash = $1`, keyHash); err != nil {
		return db.fail("delete console session", err)
	}
	return nil
}
