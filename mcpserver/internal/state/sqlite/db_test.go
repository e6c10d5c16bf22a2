package sqlite

import (
	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/state"

	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// base is a fixed instant the tests measure from, so nothing depends on the
// wall clock.
var base = time.Date(2025, 3, 14, 9, 0, 0, 0, time.UTC)

// testCtx bounds every test's database calls, so a lock that is never
// released fails the test instead of hanging it.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func openAt(t testing.TB, path string) *DB {
	t.Helper()
	db, err := Open(path)
	if err != nil {
		t.Fatalf("Open(%q): %v", path, err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func openTemp(t testing.TB) *DB {
	t.Helper()
	return openAt(t, filepath.Join(t.TempDir(), "state.db"))
}

func TestOpenCreatesDirectoryAndFile(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "does", "not", "exist")
	path := filepath.Join(dir, "state.db")
	db := openAt(t, path)
	if err := db.Ping(testCtx(t)); err != nil {
		t.Fatalf("Ping: %v", err)
	}
	st, err := os.Stat(dir)
	if err != nil {
		t.Fatalf("directory not created: %v", err)
	}
	if got := st.Mode().Perm(); got != 0o700 {
		t.Errorf("directory mode = %o, want 700", got)
	}
	fst, err := os.Stat(path)
	if err != nil {
		t.Fatalf("database file not created: %v", err)
	}
	if got := fst.Mode().Perm(); got != 0o600 {
		t.Errorf("file mode = %o, want 600", got)
	}
	if db.Path() != path {
		t.Errorf("Path() = %q, want %q", db.Path(), path)
	}
}

func TestOpenPathWithURISpecialCharacters(t *testing.T) {
	// '?', '#' and '%' mean something in a file: URI; the database must still
	// land at exactly the path asked for.
	path := filepath.Join(t.TempDir(), "odd ?#% dir", "state.db")
	db := openAt(t, path)
	if _, _, err := db.Reserve(testCtx(t), sendingEntry("k1", base)); err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("database not at the requested path: %v", err)
	}
}

func TestOpenUnwritablePath(t *testing.T) {
	// A regular file where a directory is needed fails for every user,
	// root included.
	blocker := filepath.Join(t.TempDir(), "blocker")
	if err := os.WriteFile(blocker, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(blocker, "sub", "state.db")
	db, err := Open(path)
	if err == nil {
		_ = db.Close()
		t.Fatalf("Open(%q) succeeded, want an error", path)
	}
	if !strings.Contains(err.Error(), path) && !strings.Contains(err.Error(), filepath.Dir(path)) {
		t.Errorf("error %q does not name the path", err)
	}
	if !strings.Contains(err.Error(), "not a directory") {
		t.Errorf("error %q does not give the operating system's reason", err)
	}
}

func TestOpenReadOnlyDirectory(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root ignores directory permissions")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "state.db")
	db, err := Open(path)
	if err == nil {
		_ = db.Close()
		t.Fatalf("Open(%q) succeeded, want an error", path)
	}
	if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "permission denied") {
		t.Errorf("error %q should name the path and say permission denied", err)
	}
}

func TestOpenEmptyPath(t *testing.T) {
	if _, err := Open(""); err == nil {
		t.Fatal("Open(\"\") succeeded, want an error")
	}
}

func TestOpenConcurrentlyOnNewFile(t *testing.T) {
	// Several processes starting together on a fresh file must all open it,
	// and only one may create the schema. While the first connection moves
	// a new file to WAL mode, SQLite can refuse another's BEGIN IMMEDIATE
	// without waiting (retryBusy); one round meets that a few
	// times in a hundred, so the test runs several rounds. TestRetryBusy
	// checks the retry itself deterministically.
	const rounds, n = 8, 6
	for round := range rounds {
		path := filepath.Join(t.TempDir(), "state.db")
		var wg sync.WaitGroup
		errs := make([]error, n)
		dbs := make([]*DB, n)
		for i := range n {
			wg.Go(func() { dbs[i], errs[i] = Open(path) })
		}
		wg.Wait()
		for i := range n {
			if errs[i] != nil {
				t.Errorf("round %d: Open #%d: %v", round, i, errs[i])
				continue
			}
			_ = dbs[i].Close()
		}
		db := openAt(t, path)
		var versions int
		if err := db.sql.QueryRow(`SELECT COUNT(*) FROM schema_version`).Scan(&versions); err != nil {
			t.Fatal(err)
		}
		if versions != 1 {
			t.Errorf("round %d: schema_version has %d rows, want 1", round, versions)
		}
	}
}

func TestRetryBusy(t *testing.T) {
	busy := busyError(t)
	other := errors.New("state: migrate schema to version 3: no such table")

	calls := 0
	err := retryBusy(t.Context(), func(context.Context) error {
		calls++
		if calls < 4 {
			return busy
		}
		return nil
	})
	if err != nil || calls != 4 {
		t.Errorf("busy three times, then nil: err = %v after %d calls, want nil after 4", err, calls)
	}

	// The deadline only stops a retryBusy that wrongly retries other errors.
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Second)
	defer cancel()
	calls = 0
	err = retryBusy(ctx, func(context.Context) error {
		calls++
		if calls == 1 {
			return busy
		}
		return other
	})
	if !errors.Is(err, other) || calls != 2 {
		t.Errorf("busy, then another error: err = %v after %d calls, want %v after 2", err, calls, other)
	}

	ctx, cancel = context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	calls = 0
	err = retryBusy(ctx, func(context.Context) error {
		calls++
		return busy
	})
	if !errors.Is(err, busy) || calls < 2 {
		t.Errorf("busy until the deadline: err = %v after %d calls, want the busy error after several", err, calls)
	}
}

// busyError returns a real SQLITE_BUSY: a second connection's BEGIN
// IMMEDIATE while the first holds the write lock, with no busy timeout.
func busyError(t *testing.T) error {
	t.Helper()
	path := filepath.Join(t.TempDir(), "busy.db")
	a, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = a.Close() })
	b, err := sql.Open("sqlite", "file:"+path+"?_txlock=immediate")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	tx, err := a.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = tx.Rollback() })
	if _, err = b.Begin(); err == nil {
		t.Fatal("second BEGIN IMMEDIATE succeeded, want SQLITE_BUSY")
	}
	return fmt.Errorf("state: begin: %w", err)
}

func TestIsBusy(t *testing.T) {
	if err := busyError(t); !isBusy(err) {
		t.Errorf("isBusy(%v) = false, want true", err)
	}
	if isBusy(errors.New("database is locked (5)")) {
		t.Error("isBusy is true for a plain error with SQLite's words; it must look at the code")
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "other.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err = db.Exec(`SELECT * FROM no_such_table`); err == nil || isBusy(err) {
		t.Errorf("isBusy(%v) = true, want false for a missing table", err)
	}
}

func TestOpenUsesWAL(t *testing.T) {
	db := openTemp(t)
	var mode string
	if err := db.sql.QueryRow(`PRAGMA journal_mode`).Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "wal" {
		t.Errorf("journal_mode = %q, want wal", mode)
	}
	var timeout int
	if err := db.sql.QueryRow(`PRAGMA busy_timeout`).Scan(&timeout); err != nil {
		t.Fatal(err)
	}
	if timeout != busyTimeoutMS {
		t.Errorf("busy_timeout = %d, want %d", timeout, busyTimeoutMS)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db := openAt(t, path)
	if _, err := db.sql.Exec(`UPDATE schema_version SET version = ?`, len(legacyMigrations)+1); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	again, err := Open(path)
	if err == nil {
		_ = again.Close()
		t.Fatal("Open accepted a schema newer than it understands")
	}
	if !strings.Contains(err.Error(), "newer") {
		t.Errorf("error %q should say the schema is newer", err)
	}
}

func TestDataSurvivesReopen(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Reserve(ctx, sendingEntry("k1", base)); err != nil {
		t.Fatal(err)
	}
	want, err := db.Finish(ctx, "k1", state.StateRaised, "ORD-1", "", "", base.Add(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.RecordAudit(ctx, state.AuditRecord{Time: base, CallID: "c1", Tool: "t", Outcome: state.OutcomeOK}); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	db = openAt(t, path)
	got, ok, err := db.Get(ctx, "k1")
	if err != nil || !ok {
		t.Fatalf("Get after reopen = %v, %v", ok, err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("entry after reopen (-want +got):\n%s", diff)
	}
	recs, err := db.QueryAudit(ctx, state.AuditFilter{CallID: "c1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 {
		t.Errorf("audit after reopen has %d records, want 1", len(recs))
	}
}

func TestClosedDBPingFails(t *testing.T) {
	db, err := Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if err := db.Ping(testCtx(t)); err == nil {
		t.Fatal("Ping on a closed database succeeded")
	}
}

func TestTimeTextSortsChronologically(t *testing.T) {
	// The schema compares times as text; that only works if the text sorts
	// like the instants do, including whole seconds against fractions and
	// non-UTC inputs.
	zone := time.FixedZone("east", 2*3600)
	times := []time.Time{
		base,
		base.Add(time.Nanosecond),
		base.Add(100 * time.Millisecond),
		base.Add(time.Second),
		base.Add(time.Second).In(zone).Add(time.Microsecond),
		base.Add(-time.Nanosecond),
	}
	for _, a := range times {
		for _, b := range times {
			if got, want := formatTime(a) < formatTime(b), a.Before(b); got != want {
				t.Errorf("%s < %s = %v, want %v", formatTime(a), formatTime(b), got, want)
			}
		}
		back, err := parseTime(formatTime(a))
		if err != nil || !back.Equal(a) {
			t.Errorf("round trip of %v = %v, %v", a, back, err)
		}
	}
}
