package cli

import (
	"context"
	"errors"
	"flag"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mcpserver/internal/app"
)

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
		return usageErr(err)
	}
	if len(rest) > 0 {
		return usageError("migrate: unexpected argument %q (see storelink-mcp migrate --help)", rest[0])
	}
	a, err := app.New(ctx, env.options(), app.ConfigOnly)
	if err != nil {
		return err
	}
	return a.Migrate(ctx, env.Stdout)
}
