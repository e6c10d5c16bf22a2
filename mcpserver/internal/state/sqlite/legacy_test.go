package sqlite

import (
	"context"
	"database/sql"
	"path/filepath"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/migrate"
)

// legacyMigrations are the released migrations as Go strings;
// legacyMigrations[i] brought the schema from version i to i+1. The files
// in migrations/ must run the same statements.
var legacyMigrations = []string{
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
	// 2: closed set of states, each entry's StoreLink, and failed entries
	// that never reached StoreLink become retryable. SQLite cannot add a
	// CHECK, so the table is rebuilt.
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
	// 3: the database refuses to change or remove audit rows (retention:
	// docs/observability.md).
	`
CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: UPDATE refused'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: DELETE refused; archive old rows as docs/observability.md describes'); END;
`,
	// 4: the approver register: verifiers only, active names unique by
	// key, records never removed.
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
	// 5: used host-consent nonces, kept until their question lapses.
	`
CREATE TABLE consent_nonces (
	nonce      TEXT PRIMARY KEY CHECK (length(nonce) BETWEEN 16 AND 64),
	expires_at TEXT NOT NULL,
	used_at    TEXT NOT NULL
);
CREATE INDEX consent_nonces_expiry ON consent_nonces (expires_at);
`,
	// 6: each audit row names its OpenTelemetry trace.
	`
ALTER TABLE audit ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
`,
	// 7: the console's login limit and sessions (login.go, session.go). A
	// session keeps only the SHA-256 of its id; AUTOINCREMENT so a swept
	// slot's id is never reused.
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
	// 8: the console's keys, one row per key, shared by replicas (keys.go).
	`
CREATE TABLE console_keys (
	name       TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
	key        BLOB NOT NULL CHECK (length(key) >= 32),
	created_at TEXT NOT NULL
);
`,
	// 9: how far each audit spool has been moved (spool.go, ADR 0044).
	`
CREATE TABLE audit_spool (
	name  TEXT PRIMARY KEY,
	moved INTEGER NOT NULL
);
`,
}

// TestMigrationFilesKeepTheReleasedStatements: each file of migrations/ is
// its released statements byte for byte, after a leading comment.
func TestMigrationFilesKeepTheReleasedStatements(t *testing.T) {
	ms, err := migrate.Load(migrationFiles, "migrations")
	if err != nil {
		t.Fatal(err)
	}
	if len(ms) != len(legacyMigrations) {
		t.Fatalf("%d migration files, want %d", len(ms), len(legacyMigrations))
	}
	for i, m := range ms {
		body := m.SQL
		for strings.HasPrefix(body, "--") {
			_, body, _ = strings.Cut(body, "\n")
		}
		if body != legacyMigrations[i] {
			t.Errorf("%s without its comment differs from released migration %d:\n%s\nwant:\n%s", m.Name, i+1, body, legacyMigrations[i])
		}
	}
}

// TestOpensDatabasesOfEveryEarlierVersion builds a database at each earlier
// schema version as released code did and opens it: the schema is brought
// up to date and the ledger works.
func TestOpensDatabasesOfEveryEarlierVersion(t *testing.T) {
	for have := 0; have <= len(legacyMigrations); have++ {
		path := filepath.Join(t.TempDir(), "state.db")
		raw, err := sql.Open("sqlite", dsn(path))
		if err != nil {
			t.Fatal(err)
		}
		stmts := []string{`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)`}
		stmts = append(stmts, legacyMigrations[:have]...)
		if have > 0 {
			stmts = append(stmts, `DELETE FROM schema_version`, `INSERT INTO schema_version (version) VALUES (`+string(rune('0'+have))+`)`)
		}
		for _, s := range stmts {
			if _, err := raw.Exec(s); err != nil {
				t.Fatalf("version %d: %v", have, err)
			}
		}
		if have >= 1 {
			// Version 2 made a failed, never-sent entry retryable.
			if _, err := raw.Exec(`INSERT INTO entries (idempotency_key, store_id, sku, quantity_units, reason, request_hash,
				state, error_code, created_at, updated_at)
				VALUES ('old', '47', '8847291', 3, 'r', 'h', 'failed', 'RATE_LIMITED', '2025-03-14T09:00:00.000000000Z', '2025-03-14T09:00:00.000000000Z')`); err != nil {
				t.Fatalf("version %d: %v", have, err)
			}
		}
		if err := raw.Close(); err != nil {
			t.Fatal(err)
		}

		db, err := Open(path)
		if err != nil {
			t.Fatalf("open a version %d database: %v", have, err)
		}
		var versions, version int
		if err := db.sql.QueryRow(`SELECT COUNT(*), MAX(version) FROM schema_version`).Scan(&versions, &version); err != nil {
			t.Fatal(err)
		}
		if versions != 1 || version != len(legacyMigrations) {
			t.Errorf("from version %d: schema_version holds %d rows, version %d; want 1 row, %d", have, versions, version, len(legacyMigrations))
		}
		ctx := context.Background()
		e := state.Entry{IdempotencyKey: "k", StoreID: "47", SKU: "8847291", QuantityUnits: 24, Reason: "gap", State: state.StateSending, CreatedAt: base}
		if _, taken, err := db.Reserve(ctx, e); err != nil || !taken {
			t.Errorf("from version %d: Reserve = %v, %v", have, taken, err)
		}
		if have >= 1 {
			want := state.StateFailed
			if have == 1 {
				want = state.StateRetryable
			}
			if old, ok, err := db.Get(ctx, "old"); err != nil || !ok || old.State != want {
				t.Errorf("from version %d: the old entry: %+v, %v, %v; want it %s", have, old, ok, err, want)
			}
		}
		if err := db.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
