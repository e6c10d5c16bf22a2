package sqlite_test

import (
	"path/filepath"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

// TestConformance runs the behaviour every backend shares against SQLite;
// state/postgres runs the same suite against PostgreSQL.
func TestConformance(t *testing.T) {
	statetest.Run(t, func(t *testing.T) (state.Store, func() state.Store) {
		path := filepath.Join(t.TempDir(), "state.db")
		open := func() state.Store {
			db, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		}
		return open(), open
	})
}

// BenchmarkStore is statetest.Bench on SQLite; state/postgres runs the same
// on PostgreSQL, so the two read side by side.
func BenchmarkStore(b *testing.B) {
	statetest.Bench(b, func(b *testing.B) state.Store {
		db, err := sqlite.Open(filepath.Join(b.TempDir(), "state.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { _ = db.Close() })
		return db
	})
}

// TestAuditSurvivesKill: a SIGKILL during a burst of audit records leaves
// no answered call without its row.
func TestAuditSurvivesKill(t *testing.T) {
	statetest.AuditSurvivesKill(t,
		func(t *testing.T) string { return filepath.Join(t.TempDir(), "state.db") },
		func(t testing.TB, path string) state.Store {
			db, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		})
}

// TestAuditSpoolSurvivesKill: a SIGKILL during a burst of spooled audit
// records leaves every answered call with one row once the database is
// opened again.
func TestAuditSpoolSurvivesKill(t *testing.T) {
	statetest.AuditSpoolSurvivesKill(t,
		func(t *testing.T) string { return filepath.Join(t.TempDir(), "state.db") },
		func(t testing.TB, path string) state.Store {
			db, err := sqlite.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = db.Close() })
			return db
		})
}
