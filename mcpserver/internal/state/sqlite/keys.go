package sqlite

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// consoleFormKeyName is the form key's row in console_keys.
const consoleFormKeyName = "form"

var _ state.ConsoleKeys = (*DB)(nil)

// ConsoleFormKey implements state.ConsoleKeys: the insert that loses to a key
// already stored, and the read of whichever key is stored, in one write
// transaction.
func (db *DB) ConsoleFormKey(ctx context.Context) ([]byte, error) {
	fresh, err := state.NewConsoleKey()
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
	if len(key) < state.ConsoleKeySize {
		return nil, fmt.Errorf("state: console form key: the stored key holds %d bytes, want %d", len(key), state.ConsoleKeySize)
	}
	return key, nil
}
