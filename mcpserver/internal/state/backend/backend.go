// Package backend opens the state database the configuration names:
// PostgreSQL when STATE_DATABASE_URL is set, else the SQLite file at
// STATE_DB_PATH, migrated to the current schema. It holds no state logic.
package backend

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/postgres"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

// ConfigError is a state database the configuration names wrongly (a
// SQLite path that cannot be opened): the caller exits 2.
type ConfigError struct{ Err error }

// Error is the problem's message.
func (e *ConfigError) Error() string { return e.Err.Error() }

// Unwrap is the problem.
func (e *ConfigError) Unwrap() error { return e.Err }

// OpenTimeout bounds connecting to the state database and migrating it at
// start; a replica that cannot reach its database should say so, not hang.
const OpenTimeout = 30 * time.Second

// Open opens the state store the configuration names: PostgreSQL when
// STATE_DATABASE_URL is set (and then no SQLite file anywhere), else the
// SQLite file at STATE_DB_PATH. Either is migrated to the current schema.
func Open(cfg *config.Config) (state.Store, error) {
	if cfg.StateDatabaseURL == "" {
		db, err := sqlite.Open(cfg.StatePath)
		if err != nil {
			return nil, fmt.Errorf("configuration: STATE_DB_PATH: %w", err)
		}
		return db, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), OpenTimeout)
	defer cancel()
	db, err := postgres.Open(ctx, cfg.StateDatabaseURL, postgres.Options{MaxConns: cfg.StateMaxConns})
	if err != nil {
		return nil, fmt.Errorf("STATE_DATABASE_URL: %w", err)
	}
	return db, nil
}

// Kind names the backend for /readyz and doctor.
func Kind(cfg *config.Config) string {
	if cfg.StateDatabaseURL != "" {
		return "postgresql"
	}
	return "sqlite"
}

// Migrate brings the state database cfg names to the current schema and
// writes what it applied to w (storelink-mcp migrate). A SQLite file that
// cannot be opened is a *ConfigError.
func Migrate(ctx context.Context, cfg *config.Config, w io.Writer) error {
	if cfg.StateDatabaseURL == "" {
		db, err := Open(cfg)
		if err != nil {
			return &ConfigError{Err: err}
		}
		defer db.Close()
		_, err = fmt.Fprintf(w, "sqlite %s: schema up to date\n", cfg.StatePath)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, OpenTimeout)
	defer cancel()
	db, err := postgres.Connect(ctx, cfg.StateDatabaseURL, postgres.Options{MaxConns: 1})
	if err != nil {
		return fmt.Errorf("STATE_DATABASE_URL: %w", err)
	}
	defer db.Close()
	m, err := db.Migrate(ctx)
	if err != nil {
		return fmt.Errorf("STATE_DATABASE_URL: %w", err)
	}
	if len(m.Applied) == 0 {
		_, err = fmt.Fprintf(w, "%s: schema up to date at version %d\n", db.Target(), m.To)
		return err
	}
	_, err = fmt.Fprintf(w, "%s: schema migrated from version %d to %d (applied %s)\n", db.Target(), m.From, m.To, strings.Join(m.Applied, ", "))
	return err
}
