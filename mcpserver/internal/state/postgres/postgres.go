// Package postgres is the state.Store in PostgreSQL, for replicas on
// several machines (ADR 0008). It runs package state's algorithms over its
// own statements; an advisory lock per request fingerprint keeps replicas
// from sending one request under two keys.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/migrate"
)

var _ state.Store = (*DB)(nil)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// connectTimeout bounds one connection attempt, so calls fail fast with
// state.ErrUnavailable while the database is down.
const connectTimeout = 5 * time.Second

// DefaultMaxConns is the pool size when Options.MaxConns is zero.
const DefaultMaxConns = 10

// Options tunes the connection pool.
type Options struct {
	// MaxConns caps this process's connections; replicas × MaxConns must
	// stay below max_connections. Zero means DefaultMaxConns.
	MaxConns int
}

// DB is the PostgreSQL-backed state.Store, safe for concurrent use by
// goroutines and processes.
type DB struct {
	pool *pgxpool.Pool
	// target names the database for messages without the password.
	target string
	// password is scrubbed from every error, should a driver quote it.
	password string
	audit    *state.AuditGroup
}

// Open connects to url (postgres:// or postgresql://) and applies missing
// migrations. The password never appears in an error.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	db, err := Connect(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("state: prepare %s: %w", db.target, err)
	}
	return db, nil
}

// Connect is Open without migrations.
func Connect(ctx context.Context, url string, opts Options) (*DB, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		// pgx's message may quote parts of the URL; ours names none of it.
		return nil, errors.New("state: STATE_DATABASE_URL is not a valid PostgreSQL URL (want postgres://user:password@host:5432/dbname)")
	}
	cfg.MaxConns = int32(opts.MaxConns)
	if cfg.MaxConns <= 0 {
		cfg.MaxConns = DefaultMaxConns
	}
	cfg.ConnConfig.ConnectTimeout = connectTimeout
	target := fmt.Sprintf("postgresql database %q at %s:%d as %q", cfg.ConnConfig.Database, cfg.ConnConfig.Host, cfg.ConnConfig.Port, cfg.ConnConfig.User)
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("state: open %s: %w", target, scrub(err, cfg.ConnConfig.Password))
	}
	db := &DB{pool: pool, target: target, password: cfg.ConnConfig.Password}
	db.audit = state.NewAuditGroup(db.writeAudit)
	return db, nil
}

// scrub removes the password from an error's text and puts it on one
// line, keeping state.ErrUnavailable matchable.
func scrub(err error, password string) error {
	msg := err.Error()
	if (password == "" || !strings.Contains(msg, password)) && !strings.Contains(msg, "\n") {
		return err
	}
	if password != "" {
		msg = strings.ReplaceAll(msg, password, "xxxxx")
	}
	msg = strings.ReplaceAll(strings.ReplaceAll(msg, "\n\t", "; "), "\n", "; ")
	if errors.Is(err, state.ErrUnavailable) {
		return fmt.Errorf("%w: %s", state.ErrUnavailable, strings.TrimPrefix(msg, state.ErrUnavailable.Error()+": "))
	}
	return errors.New(msg)
}

// Target names the database without the password, for logs.
func (db *DB) Target() string { return db.target }

// Close writes queued audit records and closes the pool.
func (db *DB) Close() error {
	db.audit.Close()
	db.pool.Close()
	return nil
}

// Ping checks that the database answers and holds the schema.
func (db *DB) Ping(ctx context.Context) error {
	var v int
	if err := db.pool.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&v); err != nil {
		return db.fail("ping", err)
	}
	return nil
}

// fail wraps err from an operation, marking a lost or refused connection
// with state.ErrUnavailable.
func (db *DB) fail(op string, err error) error {
	if unavailable(err) {
		err = fmt.Errorf("%w: %s on %s: %w", state.ErrUnavailable, op, db.target, err)
	} else {
		err = fmt.Errorf("state: %s: %w", op, err)
	}
	return scrub(err, db.password)
}

// unavailable reports whether err means the database was unreachable,
// rather than an error it answered with.
func unavailable(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		// Class 08 is connection exception; 57P01-57P03 are the server
		// shutting down or starting up; 53300 is too many connections.
		return strings.HasPrefix(pgErr.Code, "08") || pgErr.Code == "57P01" || pgErr.Code == "57P02" ||
			pgErr.Code == "57P03" || pgErr.Code == "53300"
	}
	var ce *pgconn.ConnectError
	var ne net.Error
	return errors.As(err, &ce) || errors.As(err, &ne) || pgconn.Timeout(err) || pgconn.SafeToRetry(err) ||
		errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, pgx.ErrTxClosed) ||
		strings.Contains(err.Error(), "conn closed")
}

// book keeps the schema version in schema_migrations, under an advisory
// lock so replicas migrate once.
var book = migrate.Book{
	Lock: `SELECT pg_advisory_xact_lock(hashtextextended('storelink-mcp migrate ' || current_schema(), 0))`,
	Create: `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`,
	Version: `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`,
	Record: func(ctx context.Context, tx migrate.Tx, m migrate.Migration) error {
		return tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.Version, m.Name)
	},
	Failed: func(m migrate.Migration, err error) error {
		return fmt.Errorf("apply migration %s: %w", m.Name, err)
	},
}

// Migrated is what Migrate did.
type Migrated = migrate.Result

// Migrate applies missing migrations in one transaction under an advisory
// lock. A database newer than this program is refused untouched.
func (db *DB) Migrate(ctx context.Context) (Migrated, error) {
	ms, err := migrate.Load(migrationFiles, "migrations")
	if err != nil {
		return Migrated{}, err
	}
	var res Migrated
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		res, err = migrate.Run(ctx, migrateTx{tx}, ms, book)
		return err
	})
	if err != nil {
		return Migrated{}, db.fail("migrate", err)
	}
	return res, nil
}

// migrateTx is a transaction as package migrate uses it.
type migrateTx struct{ tx pgx.Tx }

func (t migrateTx) Exec(ctx context.Context, query string, args ...any) error {
	_, err := t.tx.Exec(ctx, query, args...)
	return err
}

func (t migrateTx) QueryInt(ctx context.Context, query string) (int, error) {
	var n int
	err := t.tx.QueryRow(ctx, query).Scan(&n)
	return n, err
}
