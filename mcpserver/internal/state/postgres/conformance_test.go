package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/postgres"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

func open(t testing.TB, url string) *postgres.DB {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) (state.Store, func() state.Store) {
		url := statetest.PostgresURL(t)
		return open(t, url), func() state.Store { return open(t, url) }
	})
}

// TestAuditSurvivesKill: a SIGKILL of the process during a burst of audit
// records leaves no answered call without its row.
func TestAuditSurvivesKill(t *testing.T) {
	statetest.AuditSurvivesKill(t,
		func(t *testing.T) string { return statetest.PostgresURL(t) },
		func(t testing.TB, url string) state.Store { return open(t, url) })
}

// BenchmarkStore is statetest.Bench on PostgreSQL, beside the same on
// SQLite in package sqlite.
func BenchmarkStore(b *testing.B) {
	statetest.Bench(b, func(b *testing.B) state.Store { return open(b, statetest.PostgresURL(b)) })
}
