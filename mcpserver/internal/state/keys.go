package state

import (
	"context"
	"crypto/rand"
	"database/sql"
	"fmt"
	"time"
)

// ConsoleKeys keeps the approvals console's secret keys in the state
// database, so that every replica sharing it signs with the same key: a
// login form served by one replica is then accepted by another. A key is
// made on first use and never changes.
type ConsoleKeys interface {
	// ConsoleFormKey returns the key that signs the console's login form
	// (ConsoleKeySize bytes), creating it on first use. Handles racing on
	// first use all get the key that was stored first.
	ConsoleFormKey(ctx context.Context) ([]byte, error)
}

// ConsoleKeySize is the length of a console key in bytes.
const ConsoleKeySize = 32

// consoleFormKeyName is the form key's row in console_keys.
const consoleFormKeyName = "form"

// NewConsoleKey returns ConsoleKeySize random bytes.
func NewConsoleKey() ([]byte, error) {
	k := make([]byte, ConsoleKeySize)
	if _, err := rand.Read(k); err != nil {
		return nil, fmt.Errorf("state: console key: %w", err)
	}
	return k, nil
}

var _ ConsoleKeys = (*DB)(nil)

// ConsoleFormKey implements ConsoleKeys: the insert that loses to a key
// already stored, and the read of whichever key is stored, in one write
// transaction.
func (db *DB) ConsoleFormKey(ctx context.Context) ([]byte, error) {
	fresh, err := NewConsoleKey()
	if err != nil {
		return nil, err
	}
	var key []byte
	err = db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO console_keys (name, key, created_at) VALUES (?, ?, ?) ON CONFLICT (name) DO NOTHING`,
			consoleFormKeyName, fresh, formatTime(time.Now())); err != nil {
			return err
		}
		return tx.QueryRowContext(ctx, `SELECT key FROM console_keys WHERE name = ?`, consoleFormKeyName).Scan(&key)
	})
	if err != nil {
		return nil, fmt.Errorf("state: console form key: %w", err)
	}
	if len(key) < ConsoleKeySize {
		return nil, fmt.Errorf("state: console form key: the stored key holds %d bytes, want %d", len(key), ConsoleKeySize)
	}
	return key, nil
}
