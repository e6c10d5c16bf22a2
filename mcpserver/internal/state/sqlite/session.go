package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.ConsoleSessions = (*DB)(nil)

// CreateConsoleSession implements state.ConsoleSessions.
func (db *DB) CreateConsoleSession(ctx context.Context, s state.ConsoleSession, now time.Time) error {
	if err := state.CheckConsoleSession(s); err != nil {
		return err
	}
	err := db.write(ctx, func(tx *sql.Tx) error {
		n := formatTime(now)
		if _, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE expires_at <= ? OR idle_until <= ?`, n, n); err != nil {
			return err
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO console_sessions (key_hash, approver_id, created_at, last_seen, idle_until, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
			s.KeyHash, s.ApproverID, formatTime(s.CreatedAt), formatTime(s.LastSeen), formatTime(s.IdleUntil), formatTime(s.ExpiresAt))
		return err
	})
	if err != nil {
		return fmt.Errorf("state: create console session: %w", err)
	}
	return nil
}

// GetConsoleSession implements state.ConsoleSessions.
func (db *DB) GetConsoleSession(ctx context.Context, keyHash string) (state.ConsoleSession, bool, error) {
	var s state.ConsoleSession
	var created, seen, idle, expires string
	err := db.sql.QueryRowContext(ctx, `SELECT s.key_hash, s.approver_id, a.name, a.revoked_at IS NOT NULL, s.created_at, s.last_seen, s.idle_until, s.expires_at
		FROM console_sessions s JOIN approvers a ON a.id = s.approver_id WHERE s.key_hash = ?`, keyHash).
		Scan(&s.KeyHash, &s.ApproverID, &s.Approver, &s.Revoked, &created, &seen, &idle, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return state.ConsoleSession{}, false, nil
	}
	if err != nil {
		return state.ConsoleSession{}, false, fmt.Errorf("state: read console session: %w", err)
	}
	for _, p := range []struct {
		s string
		t *time.Time
	}{{created, &s.CreatedAt}, {seen, &s.LastSeen}, {idle, &s.IdleUntil}, {expires, &s.ExpiresAt}} {
		if *p.t, err = parseTime(p.s); err != nil {
			return state.ConsoleSession{}, false, err
		}
	}
	return s, true, nil
}

// TouchConsoleSession implements state.ConsoleSessions.
func (db *DB) TouchConsoleSession(ctx context.Context, keyHash string, lastSeen, idleUntil time.Time) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE console_sessions SET last_seen = ?, idle_until = ? WHERE key_hash = ? AND last_seen < ?`,
			formatTime(lastSeen), formatTime(idleUntil), keyHash, formatTime(lastSeen))
		return err
	})
	if err != nil {
		return fmt.Errorf("state: touch console session: %w", err)
	}
	return nil
}

// DeleteConsoleSession implements state.ConsoleSessions.
func (db *DB) DeleteConsoleSession(ctx context.Context, keyHash string) error {
	err := db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM console_sessions WHERE key_hash = ?`, keyHash)
		return err
	})
	if err != nil {
		return fmt.Errorf("state: delete console session: %w", err)
	}
	return nil
}
