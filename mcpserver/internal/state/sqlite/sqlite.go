// Package sqlite is the state.Store in one SQLite file (modernc.org/sqlite,
// no cgo), shared by processes on one machine (ADR 0008). It adds only
// storage to package state's rules. Every write transaction takes the write
// lock at BEGIN (BEGIN IMMEDIATE).
package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite" // the "sqlite" driver, and its Error type
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/migrate"
)

var (
	_ state.Store    = (*DB)(nil)
	_ state.Ledger   = (*DB)(nil)
	_ state.AuditLog = (*DB)(nil)

	_ state.AuditSpooler = (*DB)(nil)
)

// busyTimeoutMS is how long a connection waits for another process's write
// lock.
const busyTimeoutMS = 5000

// maxConns bounds the pool; extra connections let reads run beside a write.
const maxConns = 4

// DB is the SQLite-backed Store, safe for concurrent use by goroutines and
// processes.
type DB struct {
	sql  *sql.DB
	path string
	// wsem admits one writer per process, so in-process writers queue
	// with context support instead of SQLite's polling busy handler.
	wsem chan struct{}
	// auditInsert is RecordAudit's INSERT, prepared once for speed
	// (docs/benchmarks.md).
	auditInsert *sql.Stmt
	// spoolMoved records a spool's moved offset (spoolMovedSQL).
	spoolMoved *sql.Stmt
	// audit commits RecordAudit's rows to the table; spool takes
	// SpoolAudit's (ADR 0044).
	audit *state.AuditGroup
	spool *spool
}

// Open opens the database at path, creating it and its directory (0700) if
// needed, and migrates the schema.
func Open(path string) (*DB, error) {
	if path == "" {
		return nil, errors.New("state: empty database path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("state: resolve database path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("state: create directory for database %s: %w", abs, err)
	}
	// Create the file ourselves: owner-only permissions, and a clearer
	// error than SQLite's for an unwritable location.
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, fmt.Errorf("state: open database file %s: %w", abs, err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("state: open database file %s: %w", abs, err)
	}

	sqldb, err := sql.Open("sqlite", dsn(abs))
	if err != nil {
		return nil, fmt.Errorf("state: open database %s: %w", abs, err)
	}
	sqldb.SetMaxOpenConns(maxConns)
	sqldb.SetMaxIdleConns(maxConns)
	db := &DB{sql: sqldb, path: abs, wsem: make(chan struct{}, 1)}

	ctx, cancel := context.WithTimeout(context.Background(), 2*busyTimeoutMS*time.Millisecond)
	defer cancel()
	if err := retryBusy(ctx, db.migrate); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("state: prepare database %s: %w", abs, err)
	}
	if db.auditInsert, err = sqldb.PrepareContext(ctx, auditInsertSQL); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("state: prepare database %s: %w", abs, err)
	}
	if db.spoolMoved, err = sqldb.PrepareContext(ctx, spoolMovedSQL); err != nil {
		_ = db.auditInsert.Close()
		_ = sqldb.Close()
		return nil, fmt.Errorf("state: prepare database %s: %w", abs, err)
	}
	db.audit = state.NewAuditGroup(db.writeAudit)
	db.spool = newSpool(db)
	// The spools of processes that ended are moved now. A failure leaves
	// them where readers still find them, for the next Open.
	if err := db.adoptSpools(ctx); err != nil {
		slog.Default().Error("audit.spool_failed", "step", "replay", "spool", spoolDir(abs), "error", err.Error())
	}
	return db, nil
}

// dsn builds the connection string; every pooled connection runs its
// pragmas: WAL, busy_timeout, and _txlock=immediate.
func dsn(abs string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	// Escape the path: '?', '#' and '%' are special in a file: URI.
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close moves this process's spooled audit records to the table, writes
// queued ones, and releases the database.
func (db *DB) Close() error {
	db.spool.close()
	db.audit.Close()
	return errors.Join(db.spoolMoved.Close(), db.auditInsert.Close(), db.sql.Close())
}

// Ping checks that the database can be read.
func (db *DB) Ping(ctx context.Context) error {
	var v int
	if err := db.sql.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return fmt.Errorf("state: ping %s: %w", db.path, err)
	}
	return nil
}

// write runs fn in one transaction holding the write lock, committing when
// fn returns nil.
func (db *DB) write(ctx context.Context, fn func(tx *sql.Tx) error) error {
	release, err := db.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state: begin: %w", err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return err
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state: commit: %w", err)
	}
	return nil
}

// lockWrite waits for this process's turn to write.
func (db *DB) lockWrite(ctx context.Context) (release func(), err error) {
	select {
	case db.wsem <- struct{}{}:
		return func() { <-db.wsem }, nil
	case <-ctx.Done():
		return nil, fmt.Errorf("state: waiting to write: %w", ctx.Err())
	}
}

// migrationFiles are the schema's migrations; NNNN_*.sql brings the schema
// to version NNNN. Released files never change.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// book keeps the schema version in one row of schema_version.
var book = migrate.Book{
	Create:  `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`,
	Version: `SELECT COALESCE(MAX(version), 0) FROM schema_version`,
	Record: func(ctx context.Context, tx migrate.Tx, m migrate.Migration) error {
		if err := tx.Exec(ctx, `DELETE FROM schema_version`); err != nil {
			return err
		}
		return tx.Exec(ctx, `INSERT INTO schema_version (version) VALUES (?)`, m.Version)
	},
	Failed: func(m migrate.Migration, err error) error {
		return fmt.Errorf("migrate schema to version %d: %w", m.Version, err)
	},
}

// migrate creates or upgrades the schema in one write transaction, so two
// processes cannot both apply it.
func (db *DB) migrate(ctx context.Context) error {
	ms, err := migrate.Load(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := migrate.Run(ctx, migrateTx{tx}, ms, book)
		return err
	})
}

// retryBusy runs fn until it succeeds, fails for a reason other than
// SQLITE_BUSY, or ctx ends; Open runs migrate through it.
//
// On a file that is not yet in WAL mode, the busy timeout does not cover
// every wait: while one connection changes the journal mode, SQLite can
// answer another's BEGIN IMMEDIATE with SQLITE_BUSY at once, because
// waiting could deadlock. Processes that open a new file together meet
// this, so Open waits and tries again. Once the file is in WAL mode, the
// busy timeout covers the waits.
func retryBusy(ctx context.Context, fn func(context.Context) error) error {
	wait := 5 * time.Millisecond
	for {
		err := fn(ctx)
		if err == nil || !isBusy(err) {
			return err
		}
		// A random share of the wait keeps processes that collided from
		// trying again in step.
		t := time.NewTimer(wait/2 + rand.N(wait/2+1))
		select {
		case <-ctx.Done():
			t.Stop()
			return err
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// isBusy reports whether err comes from SQLite's SQLITE_BUSY. The
// extended codes (SQLITE_BUSY_RECOVERY, SQLITE_BUSY_SNAPSHOT, ...) share
// its low byte.
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}

// migrateTx is a transaction as package migrate uses it.
type migrateTx struct{ tx *sql.Tx }

func (t migrateTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.tx.ExecContext(ctx, query, args...)
	return err
}

func (t migrateTx) QueryInt(ctx context.Context, query string) (int, error) {
	var n int
	err := t.tx.QueryRowContext(ctx, query).Scan(&n)
	return n, err
}

// timeLayout is RFC 3339 UTC with a fixed nine-digit fraction, so text
// order is time order.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("state: stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}
