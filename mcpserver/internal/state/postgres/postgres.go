// Package postgres is the PostgreSQL state.Store, for replicas on several
// machines that must share one ledger, one set of staged approvals and one
// audit trail (ADR 0008).
//
// It keeps the guarantees of the SQLite store: an idempotency key is
// reserved by one INSERT … ON CONFLICT DO NOTHING before anything is sent,
// every change of state is one conditional UPDATE chosen by the transition
// table of package state, the database refuses states outside the closed
// set and any change to the audit trail. Where SQLite serialises writers
// with its file lock, this store takes a transaction-scoped advisory lock
// per request fingerprint, so that two replicas cannot both send the same
// request under different keys.
package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/korral/storelink/mcpserver/internal/state"
)

var _ state.Store = (*DB)(nil)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// connectTimeout bounds one attempt to open a connection, so a call made
// while the database is down fails with state.ErrUnavailable in seconds
// instead of hanging until the client gives up.
const connectTimeout = 5 * time.Second

// DefaultMaxConns is the pool size when Options.MaxConns is zero.
const DefaultMaxConns = 10

// Options tunes the connection pool.
type Options struct {
	// MaxConns caps this process's connections; every replica holds up to
	// this many, so replicas × MaxConns must stay below the server's
	// max_connections. Zero means DefaultMaxConns.
	MaxConns int
}

// DB is the PostgreSQL-backed state.Store. It is safe for concurrent use,
// and any number of processes may share one database.
type DB struct {
	pool *pgxpool.Pool
	// target names the database for messages without the password.
	target string
	// password is scrubbed from every error, should a driver quote it.
	password string
}

// Open connects to the database named by url (postgres:// or
// postgresql://) and applies the migrations it is missing. The password
// never appears in an error.
func Open(ctx context.Context, url string, opts Options) (*DB, error) {
	db, err := Connect(ctx, url, opts)
	if err != nil {
		return nil, err
	}
	if _, err := db.Migrate(ctx); err != nil {
		db.pool.Close()
		return nil, fmt.Errorf("state: prepare %s: %w", db.target, err)
	}
	return db, nil
}

// Connect is Open without the migrations, for an operator's explicit
// migrate step, which reports what it applies.
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
	return &DB{pool: pool, target: target, password: cfg.ConnConfig.Password}, nil
}

// scrub removes the password from an error's text should a driver ever
// include it, and puts the text on one line (pgx lists each connection
// attempt on its own), keeping state.ErrUnavailable matchable.
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

// Target names the database (host, port, name and user; never the
// password), for logs.
func (db *DB) Target() string { return db.target }

// Close releases the pool's connections.
func (db *DB) Close() error {
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

// unavailable reports whether err means the database could not be reached
// or went away, rather than that it answered with an error of its own.
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

// migration is one numbered file of migrations/.
type migration struct {
	version int
	name    string
	sql     string
}

// migrations returns the embedded migrations in order, refusing a gap or a
// duplicate number, which would make two databases differ by the order
// they were migrated in.
func migrations() ([]migration, error) {
	names, err := fs.Glob(migrationFiles, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var out []migration
	for _, n := range names {
		base := strings.TrimPrefix(n, "migrations/")
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and an underscore", base)
		}
		b, err := migrationFiles.ReadFile(n)
		if err != nil {
			return nil, err
		}
		out = append(out, migration{version: v, name: base, sql: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].version < out[j].version })
	for i, m := range out {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected number %d; the numbers must run 1, 2, 3… without gaps", m.name, i+1)
		}
	}
	return out, nil
}

// Migrated is what Migrate did.
type Migrated struct {
	// From and To are the schema versions before and after.
	From, To int
	// Applied names the migration files applied, in order.
	Applied []string
}

// Migrate applies the embedded migrations the database lacks, all in one
// transaction under an advisory lock scoped to the current schema, so
// replicas starting together migrate once and the others wait and find the
// work done. A database newer than this program is refused untouched.
func (db *DB) Migrate(ctx context.Context) (Migrated, error) {
	ms, err := migrations()
	if err != nil {
		return Migrated{}, err
	}
	var res Migrated
	err = pgx.BeginFunc(ctx, db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended('storelink-mcp migrate ' || current_schema(), 0))`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS schema_migrations (
			version integer PRIMARY KEY, name text NOT NULL, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
			return err
		}
		if err := tx.QueryRow(ctx, `SELECT COALESCE(MAX(version), 0) FROM schema_migrations`).Scan(&res.From); err != nil {
			return err
		}
		res.To = res.From
		if res.From > len(ms) {
			return fmt.Errorf("schema version %d is newer than this program understands (%d); refusing to touch it", res.From, len(ms))
		}
		for _, m := range ms[res.From:] {
			if _, err := tx.Exec(ctx, m.sql); err != nil {
				return fmt.Errorf("apply migration %s: %w", m.name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES ($1, $2)`, m.version, m.name); err != nil {
				return err
			}
			res.To = m.version
			res.Applied = append(res.Applied, m.name)
		}
		return nil
	})
	if err != nil {
		return Migrated{}, db.fail("migrate", err)
	}
	return res, nil
}
