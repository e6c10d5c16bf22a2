package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/postgres"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

// openTimeout bounds connecting to the state database and migrating it at
// start; a replica that cannot reach its database should say so, not hang.
const openTimeout = 30 * time.Second

// openState opens the state store the configuration names: PostgreSQL when
// STATE_DATABASE_URL is set (and then no SQLite file anywhere), else the
// SQLite file at STATE_DB_PATH. Either is migrated to the current schema.
func openState(cfg *config.Config) (state.Store, error) {
	if cfg.StateDatabaseURL == "" {
		db, err := sqlite.Open(cfg.StatePath)
		if err != nil {
			return nil, fmt.Errorf("configuration: STATE_DB_PATH: %w", err)
		}
		return db, nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), openTimeout)
	defer cancel()
	db, err := postgres.Open(ctx, cfg.StateDatabaseURL, postgres.Options{MaxConns: cfg.StateMaxConns})
	if err != nil {
		return nil, fmt.Errorf("STATE_DATABASE_URL: %w", err)
	}
	return db, nil
}

// databaseKind names the backend for /readyz.
func databaseKind(cfg *config.Config) string {
	if cfg.StateDatabaseURL != "" {
		return "postgresql"
	}
	return "sqlite"
}

const migrateUsage = `Usage: storelink-mcp migrate

Brings the state database (order ledger, staged approvals, audit trail) to
the schema this version of storelink-mcp needs, and says what it applied.
With STATE_DATABASE_URL (or STATE_DATABASE_URL_FILE) set, that PostgreSQL
database; otherwise the SQLite file at STATE_DB_PATH.

Servers migrate on start as well, under a lock, so replicas starting
together migrate once. Run this ahead of a rollout to apply the change
while the old version still serves: migrations only add.
`

// runMigrate is the operator's explicit migration step.
func runMigrate(ctx context.Context, args []string, env Env) error {
	rest, err := cliflag.Parse(flag.NewFlagSet("migrate", flag.ContinueOnError), args, migrateUsage, env.Stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	if len(rest) > 0 {
		return &ExitError{Code: 2, Err: fmt.Errorf("migrate: unexpected argument %q (see storelink-mcp migrate --help)", rest[0])}
	}
	cfg, err := config.Load(env.getenv, env.ReadFile)
	if err != nil {
		return &ExitError{Code: 2, Err: fmt.Errorf("configuration: %w", err)}
	}
	if err := refuseMockNow(cfg); err != nil {
		return err
	}
	if cfg.StateDatabaseURL == "" {
		db, err := openState(cfg)
		if err != nil {
			return &ExitError{Code: 2, Err: err}
		}
		defer db.Close()
		_, err = fmt.Fprintf(env.Stdout, "sqlite %s: schema up to date\n", cfg.StatePath)
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, openTimeout)
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
		_, err = fmt.Fprintf(env.Stdout, "%s: schema up to date at version %d\n", db.Target(), m.To)
		return err
	}
	_, err = fmt.Fprintf(env.Stdout, "%s: schema migrated from version %d to %d (applied %s)\n", db.Target(), m.From, m.To, strings.Join(m.Applied, ", "))
	return err
}
