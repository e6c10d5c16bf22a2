package postgres

import (
	"context"
	"fmt"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.ConsoleKeys = (*DB)(nil)

// ConsoleFormKey implements state.ConsoleKeys. The insert loses to a key
// already stored, or waits for a racing insert to commit and then loses to
// it; the SELECT that follows, a statement of its own, sees whichever key
// was stored.
func (db *DB) ConsoleFormKey(ctx context.Context) ([]byte, error) {
	fresh, err := state.NewConsoleKey()
	if err != nil {
		return nil, err
	}
	if _, err := db.pool.Exec(ctx, `INSERT INTO console_keys (name, key) VALUES ('form', $1) ON CONFLICT (name) DO NOTHING`, fresh); err != nil {
		return nil, db.fail("console form key", err)
	}
	var key []byte
	if err := db.pool.QueryRow(ctx, `SELECT key FROM console_keys WHERE name = 'form'`).Scan(&key); err != nil {
		return nil, db.fail("console form key", err)
	}
	if len(key) < state.ConsoleKeySize {
		return nil, fmt.Errorf("state: console form key: the stored key holds %d bytes, want %d", len(key), state.ConsoleKeySize)
	}
	return key, nil
}
