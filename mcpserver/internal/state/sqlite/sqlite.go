// Package sqlite is the embedded state.Store: one database file
// (modernc.org/sqlite, no cgo) that several server processes on one machine
// may share. It is the peer of package postgres, for replicas on several
// machines (ADR 0008); both apply the rules of package state and add only
// the storage.
//
// Writers are serialised by the file's write lock: every write transaction
// takes it at BEGIN (BEGIN IMMEDIATE), so a read-then-write cannot lose a
// race it has already half run.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/korral/storelink/mcpserver/internal/state"
)

var (
	_ state.Store    = (*DB)(nil)
	_ state.Ledger   = (*DB)(nil)
	_ state.AuditLog = (*DB)(nil)
)

// busyTimeoutMS is how long a connection waits for another process's write
// lock before giving up. Writes here are single small transactions, so five
// seconds of waiting means something is wrong rather than merely busy.
const busyTimeoutMS = 5000

// maxConns bounds the connection pool. Writes are serialised anyway (see
// DB.wsem); a few extra connections let reads proceed beside a write.
const maxConns = 4

// DB is the SQLite-backed Store. It is safe for concurrent use by many
// goroutines, and several processes may open the same file at once.
type DB struct {
	sql  *sql.DB
	path string
	// wsem admits one writer per process at a time. SQLite allows only one
	// writer per file anyway; queueing here, where waiting honours the
	// context and wakes promptly, spares in-process writers from SQLite's
	// polling busy handler, which is then left to arbitrate between
	// processes only.
	wsem chan struct{}
	// auditInsert is RecordAudit's INSERT, prepared once: it runs on every
	// tool call, and parsing it anew each time was a measurable share of a
	// trivial call's CPU (docs/benchmarks.md).
	auditInsert *sql.Stmt
	// auditNext collects the audit records waiting for the write lock (see
	// RecordAudit); auditMu guards it.
	auditMu   sync.Mutex
	auditNext *auditBatch
}

// Open opens the database at path, creating the file and its parent
// directory (mode 0700) on first use, and brings the schema up to date.
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
	// Creating the file ourselves gives it owner-only permissions (the audit
	// trail names clients and stores) and turns an unwritable location into
	// the operating system's own error, which is far clearer than SQLite's
	// "unable to open database file".
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
	if err := db.migrate(ctx); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("state: prepare database %s: %w", abs, err)
	}
	if db.auditInsert, err = sqldb.PrepareContext(ctx, auditInsertSQL); err != nil {
		_ = sqldb.Close()
		return nil, fmt.Errorf("state: prepare database %s: %w", abs, err)
	}
	return db, nil
}

// dsn builds the connection string. Every connection in the pool runs these
// pragmas when it opens, so none of them can be forgotten on a fresh
// connection: WAL lets readers proceed beside the writer, busy_timeout makes
// a second process wait for the write lock instead of failing at once, and
// _txlock=immediate makes every transaction take the write lock at BEGIN,
// so a read-then-write can never lose a race it has already half run.
func dsn(abs string) string {
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	q.Add("_pragma", "foreign_keys(1)")
	q.Set("_txlock", "immediate")
	// The path is escaped because SQLite reads a file: URI, in which '?',
	// '#' and '%' in a directory name would otherwise change its meaning.
	return "file:" + (&url.URL{Path: abs}).EscapedPath() + "?" + q.Encode()
}

// Path returns the absolute path of the database file.
func (db *DB) Path() string { return db.path }

// Close releases the database. Data already committed is on disk.
func (db *DB) Close() error {
	return errors.Join(db.auditInsert.Close(), db.sql.Close())
}

// Ping checks that the database can still be reached and read, for health
// checks.
func (db *DB) Ping(ctx context.Context) error {
	var v int
	if err := db.sql.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&v); err != nil {
		return fmt.Errorf("state: ping %s: %w", db.path, err)
	}
	return nil
}

// write runs fn in one transaction that holds the database write lock from
// its first statement (BEGIN IMMEDIATE, from the DSN) and commits when fn
// returns nil.
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

// schemaVersion is the version this code writes and understands.
const schemaVersion = 8

// migrations[i] brings the schema from version i to i+1. Migrations are only
// ever appended: a released version's statements never change, because some
// database file out there was built by them.
var migrations = []string{
	`
CREATE TABLE entries (
	id                  INTEGER PRIMARY KEY,
	idempotency_key     TEXT NOT NULL UNIQUE,
	store_id            TEXT NOT NULL,
	sku                 TEXT NOT NULL,
	quantity_units      INTEGER NOT NULL,
	reason              TEXT NOT NULL,
	request_hash        TEXT NOT NULL,
	state               TEXT NOT NULL,
	order_id            TEXT,
	error_code          TEXT NOT NULL DEFAULT '',
	error_message       TEXT NOT NULL DEFAULT '',
	approval_id         TEXT,
	approval_expires_at TEXT,
	requested_by        TEXT NOT NULL DEFAULT '',
	decided_by          TEXT NOT NULL DEFAULT '',
	created_at          TEXT NOT NULL,
	updated_at          TEXT NOT NULL
);
CREATE INDEX entries_store_sku_created ON entries (store_id, sku, created_at);
CREATE INDEX entries_order_id ON entries (order_id) WHERE order_id IS NOT NULL;
CREATE UNIQUE INDEX entries_approval_id ON entries (approval_id) WHERE approval_id IS NOT NULL;
CREATE INDEX entries_pending_expiry ON entries (approval_expires_at) WHERE state = 'pending_approval';

CREATE TABLE audit (
	id          INTEGER PRIMARY KEY,
	time        TEXT NOT NULL,
	call_id     TEXT NOT NULL,
	client      TEXT NOT NULL,
	session     TEXT NOT NULL,
	tool        TEXT NOT NULL,
	store_id    TEXT NOT NULL,
	sku         TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	error_code  TEXT NOT NULL,
	summary     TEXT NOT NULL,
	duration_ms REAL NOT NULL
);
CREATE INDEX audit_time ON audit (time);
CREATE INDEX audit_call_id ON audit (call_id);
`,
	// 2: the ledger's states become a closed set the database enforces, the
	// StoreLink each entry belongs to is recorded, and entries that earlier
	// versions stored as failed although nothing reached StoreLink become
	// retryable. SQLite cannot add a CHECK to a column, so the table is
	// rebuilt.
	`
CREATE TABLE entries_v2 (
	id                  INTEGER PRIMARY KEY,
	idempotency_key     TEXT NOT NULL UNIQUE,
	store_id            TEXT NOT NULL,
	sku                 TEXT NOT NULL,
	quantity_units      INTEGER NOT NULL CHECK (quantity_units > 0),
	reason              TEXT NOT NULL,
	request_hash        TEXT NOT NULL,
	state               TEXT NOT NULL CHECK (state IN ('sending', 'raised', 'failed', 'retryable', 'unknown', 'pending_approval', 'rejected', 'expired')),
	order_id            TEXT,
	error_code          TEXT NOT NULL DEFAULT '',
	error_message       TEXT NOT NULL DEFAULT '',
	approval_id         TEXT,
	approval_expires_at TEXT,
	requested_by        TEXT NOT NULL DEFAULT '',
	decided_by          TEXT NOT NULL DEFAULT '',
	created_at          TEXT NOT NULL,
	updated_at          TEXT NOT NULL,
	upstream_id         TEXT NOT NULL DEFAULT '',
	CHECK (state <> 'raised' OR order_id IS NOT NULL),
	CHECK (state <> 'pending_approval' OR (approval_id IS NOT NULL AND approval_expires_at IS NOT NULL))
);
INSERT INTO entries_v2 (id, idempotency_key, store_id, sku, quantity_units, reason, request_hash, state,
	order_id, error_code, error_message, approval_id, approval_expires_at, requested_by, decided_by, created_at, updated_at)
SELECT id, idempotency_key, store_id, sku, quantity_units, reason, request_hash,
	CASE WHEN state = 'failed' AND error_code IN ('RATE_LIMITED', 'UPSTREAM_UNAVAILABLE', 'AUTH_KEY_INVALID') THEN 'retryable' ELSE state END,
	order_id, error_code, error_message, approval_id, approval_expires_at, requested_by, decided_by, created_at, updated_at
FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v2 RENAME TO entries;
CREATE INDEX entries_store_sku_created ON entries (store_id, sku, created_at);
CREATE INDEX entries_order_id ON entries (order_id) WHERE order_id IS NOT NULL;
CREATE UNIQUE INDEX entries_approval_id ON entries (approval_id) WHERE approval_id IS NOT NULL;
CREATE INDEX entries_pending_expiry ON entries (approval_expires_at) WHERE state = 'pending_approval';
CREATE INDEX entries_in_flight ON entries (request_hash) WHERE state IN ('sending', 'unknown');
`,
	// The audit trail is append-only by construction, not by convention:
	// the database itself refuses to change or remove a recorded call.
	// Retention (docs/observability.md) lifts the DELETE guard only inside
	// the archiving transaction.
	`
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: UPDATE refused'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: DELETE refused; archive old rows as docs/observability.md describes'); END;
`,
	// 4: the register of named approvers. Only a verifier of each secret is
	// kept. A name is unique among the active records, compared by its key
	// (ApproverNameKey), so that revoking and adding again rotates a
	// secret. A record is never removed and changes only once, when it is
	// revoked: the register is also the history of who could approve.
	`
CREATE TABLE approvers (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
	name_key   TEXT NOT NULL,
	stores     TEXT NOT NULL DEFAULT '',
	verifier   TEXT NOT NULL CHECK (substr(verifier, 1, 1) = '$'),
	created_at TEXT NOT NULL,
	revoked_at TEXT
);
CREATE UNIQUE INDEX approvers_active_name ON approvers (name_key) WHERE revoked_at IS NULL;
CREATE INDEX approvers_name ON approvers (name_key, id);
CREATE TRIGGER approvers_revoke_only BEFORE UPDATE ON approvers
WHEN OLD.revoked_at IS NOT NULL OR NEW.revoked_at IS NULL OR NEW.id IS NOT OLD.id OR NEW.name IS NOT OLD.name
	OR NEW.name_key IS NOT OLD.name_key OR NEW.stores IS NOT OLD.stores OR NEW.verifier IS NOT OLD.verifier
	OR NEW.created_at IS NOT OLD.created_at
BEGIN SELECT RAISE(ABORT, 'approver records change only by being revoked, once: revoke and add a new one'); END;
CREATE TRIGGER approvers_no_delete BEFORE DELETE ON approvers
BEGIN SELECT RAISE(ABORT, 'approver records are kept: DELETE refused; revoke the approver instead'); END;
`,
	// 5: the used nonces of host consent (WRITE_APPROVAL=host), so that a
	// sealed confirmation is honoured once, by whichever process sees it
	// first. A nonce is kept until its question has lapsed.
	`
CREATE TABLE consent_nonces (
	nonce      TEXT PRIMARY KEY CHECK (length(nonce) BETWEEN 16 AND 64),
	expires_at TEXT NOT NULL,
	used_at    TEXT NOT NULL
);
CREATE INDEX consent_nonces_expiry ON consent_nonces (expires_at);
`,
	// 6: each audit row names the OpenTelemetry trace of its call, so the
	// row leads to the trace and back; rows from before it have none.
	`
ALTER TABLE audit ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
`,
	// 7: the approvals console's login limit and sessions, shared by every
	// replica (login.go, session.go). An attempt row is in flight until it
	// is settled (failed = 0, expires_at its hold) or a failure (failed =
	// 1, expires_at the end of its window). A session keeps only the
	// SHA-256 of its id. AUTOINCREMENT: a slot's id is never given to a
	// later attempt once the slot has been swept.
	`
CREATE TABLE login_attempts (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name_key   TEXT NOT NULL,
	addr_key   TEXT NOT NULL,
	failed     INTEGER NOT NULL CHECK (failed IN (0, 1)),
	expires_at TEXT NOT NULL
);
CREATE INDEX login_attempts_name ON login_attempts (name_key, expires_at);
CREATE INDEX login_attempts_addr ON login_attempts (addr_key, expires_at);
CREATE INDEX login_attempts_expiry ON login_attempts (expires_at);

CREATE TABLE console_sessions (
	key_hash    TEXT PRIMARY KEY CHECK (length(key_hash) = 64),
	approver_id INTEGER NOT NULL,
	created_at  TEXT NOT NULL,
	last_seen   TEXT NOT NULL,
	idle_until  TEXT NOT NULL,
	expires_at  TEXT NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
CREATE INDEX console_sessions_idle ON console_sessions (idle_until);
`,
	// 8: the approvals console's keys, shared by every replica (keys.go):
	// one row per key, made on first use and never changed, so a login
	// form served by one replica is accepted by another.
	`
CREATE TABLE console_keys (
	name       TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
	key        BLOB NOT NULL CHECK (length(key) >= 32),
	created_at TEXT NOT NULL
);
`,
}

// migrate creates or upgrades the schema inside one write transaction, so
// two processes starting together on a new file cannot both apply it.
func (db *DB) migrate(ctx context.Context) error {
	return db.write(ctx, func(tx *sql.Tx) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`); err != nil {
			return err
		}
		var have int
		if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_version`).Scan(&have); err != nil {
			return err
		}
		if have > schemaVersion {
			return fmt.Errorf("schema version %d is newer than this program understands (%d); refusing to touch it", have, schemaVersion)
		}
		for v := have; v < schemaVersion; v++ {
			if _, err := tx.ExecContext(ctx, migrations[v]); err != nil {
				return fmt.Errorf("migrate schema to version %d: %w", v+1, err)
			}
		}
		if have < schemaVersion {
			if _, err := tx.ExecContext(ctx, `DELETE FROM schema_version`); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `INSERT INTO schema_version (version) VALUES (?)`, schemaVersion); err != nil {
				return err
			}
		}
		return nil
	})
}

// timeLayout is RFC 3339 in UTC with a fixed nine-digit fraction. The fixed
// width matters: time.RFC3339Nano drops trailing zeros, and then
// "…:05Z" would sort after "…:05.1Z" and range queries on the text column
// would be wrong.
const timeLayout = "2006-01-02T15:04:05.000000000Z07:00"

func formatTime(t time.Time) string { return t.UTC().Format(timeLayout) }

func parseTime(s string) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("state: stored time %q: %w", s, err)
	}
	return t.UTC(), nil
}
