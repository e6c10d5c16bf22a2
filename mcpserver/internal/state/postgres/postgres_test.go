package postgres_test

import (
	"context"
	"errors"
	"net"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/postgres"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	return ctx
}

// conn is a plain connection to the test's schema, for what the Store
// interface cannot do: tamper with rows.
func conn(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	c, err := pgx.Connect(testCtx(t), url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close(context.Background()) })
	return c
}

func TestAuditTrailIsAppendOnly(t *testing.T) {
	url := statetest.PostgresURL(t)
	db, c := open(t, url), conn(t, url)
	exec := func(ctx context.Context, stmt string) error { _, err := c.Exec(ctx, stmt); return err }
	statetest.AuditTrailIsAppendOnly(t, db, exec, []string{
		`UPDATE audit SET summary = 'forged' WHERE call_id = 'c1'`,
		`UPDATE audit SET outcome = 'error'`,
		`DELETE FROM audit WHERE call_id = 'c1'`,
		`DELETE FROM audit`,
		`TRUNCATE audit`,
	})
}

func TestStateColumnIsAClosedSet(t *testing.T) {
	ctx := testCtx(t)
	url := statetest.PostgresURL(t)
	open(t, url)
	c := conn(t, url)
	for _, row := range []string{
		`('k', '47', '1', 1, 'r', 'h', 'done', NULL, now(), now())`,
		`('k', '47', '1', 1, 'r', 'h', 'raised', NULL, now(), now())`,
		`('k', '47', '1', 0, 'r', 'h', 'sending', NULL, now(), now())`,
	} {
		if _, err := c.Exec(ctx, `INSERT INTO entries (idempotency_key, store_id, sku, quantity_units, reason, request_hash, state, order_id, created_at, updated_at) VALUES `+row); err == nil {
			t.Errorf("the database accepted %s", row)
		}
	}
}

func TestConcurrentOpenMigratesOnce(t *testing.T) {
	ctx := testCtx(t)
	url := statetest.PostgresURL(t)
	var wg sync.WaitGroup
	errs := make(chan error, 6)
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 2})
			if err == nil {
				err = db.Close()
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	// Every migration file is one row.
	ms, err := filepath.Glob(filepath.Join("migrations", "*.sql"))
	if err != nil || len(ms) == 0 {
		t.Fatalf("migrations: %v %v", ms, err)
	}
	var n int
	if err := conn(t, url).QueryRow(ctx, `SELECT count(*) FROM schema_migrations`).Scan(&n); err != nil || n != len(ms) {
		t.Fatalf("schema_migrations holds %d rows (%v); want %d", n, err, len(ms))
	}
	again, err := open(t, url).Migrate(ctx)
	if err != nil || len(again.Applied) != 0 || again.From != len(ms) || again.To != len(ms) {
		t.Fatalf("Migrate on a current schema = %+v, %v; want nothing applied", again, err)
	}
}

func TestOpenRefusesNewerSchema(t *testing.T) {
	ctx := testCtx(t)
	url := statetest.PostgresURL(t)
	open(t, url)
	if _, err := conn(t, url).Exec(ctx, `INSERT INTO schema_migrations (version, name) VALUES (99, '0099_future.sql')`); err != nil {
		t.Fatal(err)
	}
	_, err := postgres.Open(ctx, url, postgres.Options{})
	if err == nil || !strings.Contains(err.Error(), "newer than this program") {
		t.Fatalf("Open on a newer schema: err = %v", err)
	}
}

// TestPasswordNeverInErrors opens with a wrong password and against a port
// nobody listens on: the errors name the database but never the password.
func TestPasswordNeverInErrors(t *testing.T) {
	ctx := testCtx(t)
	u, err := url.Parse(statetest.PostgresURL(t))
	if err != nil {
		t.Fatal(err)
	}
	const secret = "Sup3rSecretPassw0rd"
	u.User = url.UserPassword(u.User.Username(), secret)
	_, err = postgres.Open(ctx, u.String(), postgres.Options{})
	if err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("wrong password: err = %v", err)
	}

	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	u.Host = addr
	_, err = postgres.Open(ctx, u.String(), postgres.Options{})
	if !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("nobody listening: err = %v, want state.ErrUnavailable", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Fatalf("the error shows the password: %v", err)
	}
	if _, err := postgres.Open(ctx, "postgres://u:"+secret+"@[::1", postgres.Options{}); err == nil || strings.Contains(err.Error(), secret) {
		t.Fatalf("malformed URL: err = %v", err)
	}
}

// TestOutageIsUnavailableAndRecovers cuts every connection of the store
// from the server's side, as a restart does: the next call either succeeds
// on a fresh connection or fails with state.ErrUnavailable, and the store
// works again without being reopened.
func TestOutageIsUnavailableAndRecovers(t *testing.T) {
	ctx := testCtx(t)
	url := statetest.PostgresURL(t)
	// The store's connections are named, so that only they are cut and
	// tests running beside this one keep theirs.
	name := "outage-" + strconv.FormatInt(time.Now().UnixNano(), 10)
	db := open(t, url+"&application_name="+name)
	if err := db.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	var cut int
	if err := conn(t, url).QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE application_name = $1`, name).Scan(&cut); err != nil || cut == 0 {
		t.Fatalf("cut %d connections: %v", cut, err)
	}
	_, _, err := db.Get(ctx, "k")
	if err != nil && !errors.Is(err, state.ErrUnavailable) {
		t.Fatalf("after the connections were cut: err = %v, want nil or state.ErrUnavailable", err)
	}
	if _, _, err := db.Reserve(ctx, state.Entry{IdempotencyKey: "k", StoreID: "47", SKU: "1", QuantityUnits: 1, Reason: "r", State: state.StateSending}); err != nil {
		t.Fatalf("the store did not recover: %v", err)
	}
}
