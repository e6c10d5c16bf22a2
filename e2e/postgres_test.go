package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// Replicas sharing one PostgreSQL database: the mock holds exactly what the
// ledger says was raised (pgJudge).

// pgDatabase returns TEST_DATABASE_URL narrowed to a new schema dropped at
// the end. Without it the test is skipped, or fails under CI=true.
func pgDatabase(t *testing.T) string {
	t.Helper()
	base := os.Getenv("TEST_DATABASE_URL")
	if base == "" {
		if os.Getenv("CI") == "true" {
			t.Fatal("TEST_DATABASE_URL is not set, and CI=true requires the PostgreSQL tests to run: start one with scripts/postgres-test.sh start")
		}
		t.Skip("TEST_DATABASE_URL is not set: start a PostgreSQL with `eval \"$(scripts/postgres-test.sh start)\"` to run this test")
	}
	schema := fmt.Sprintf("e2e_%d", time.Now().UnixNano())
	pgExec(t, base, `CREATE SCHEMA `+schema)
	t.Cleanup(func() { pgExec(t, base, `DROP SCHEMA `+schema+` CASCADE`) })
	u, err := url.Parse(base)
	if err != nil {
		t.Fatal("TEST_DATABASE_URL is not a URL")
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String()
}

func pgExec(t *testing.T, dsn, sql string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatalf("connect to PostgreSQL: %v", err)
	}
	defer c.Close(ctx)
	if _, err := c.Exec(ctx, sql); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

// pgLedger reads every ledger entry straight from PostgreSQL.
func pgLedger(t *testing.T, dsn string) map[string]ledgerEntry {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, `SELECT idempotency_key, state, COALESCE(order_id, ''), store_id, sku, quantity_units,
		COALESCE(approval_id, ''), upstream_id, error_message FROM entries`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]ledgerEntry{}
	for rows.Next() {
		var e ledgerEntry
		if err := rows.Scan(&e.Key, &e.State, &e.OrderID, &e.StoreID, &e.SKU, &e.Units, &e.ApprovalID, &e.Upstream, &e.ErrorMessage); err != nil {
			t.Fatal(err)
		}
		out[e.Key] = e
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// pgJudge is judge with the ledger in PostgreSQL.
func pgJudge(t *testing.T, w *e2etest.World, dsn string) {
	t.Helper()
	judgeEntries(t, w, pgLedger(t, dsn))
}

// replicaEnv is one replica machine's environment: its own directories, the shared database.
func replicaEnv(t *testing.T, w *e2etest.World, dsn string, extra ...string) (env []string, dir string) {
	dir = t.TempDir()
	env = append(without(w.Env(extra...), "STATE_DB_PATH", "HOME"),
		"HOME="+dir, "XDG_STATE_HOME="+filepath.Join(dir, "state"), "STATE_DATABASE_URL="+dsn)
	return env, dir
}

// noSQLite fails if any SQLite state file appeared under dirs.
func noSQLite(t *testing.T, dirs ...string) {
	t.Helper()
	for _, d := range dirs {
		_ = filepath.WalkDir(d, func(p string, e fs.DirEntry, err error) error {
			if err == nil && strings.Contains(e.Name(), ".db") {
				t.Errorf("a SQLite file was created although STATE_DATABASE_URL is set: %s", p)
			}
			return nil
		})
	}
}

// TestPostgresReplicasRaiseOneOrderPerKey: eight concurrent confirms with one
// key through two replicas give exactly one order, and either side's audit
// trail holds all calls.
func TestPostgresReplicasRaiseOneOrderPerKey(t *testing.T) {
	dsn := pgDatabase(t)
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	envA, dirA := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "MCP_AUTH_TOKENS_FILE="+tokens)
	envB, dirB := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "MCP_AUTH_TOKENS_FILE="+tokens)
	replicas := []*e2etest.HTTPProc{e2etest.StartHTTP(t, envA, "--stateless"), e2etest.StartHTTP(t, envB, "--stateless")}
	const perReplica = 4
	const key = "pg-replica-race-key-01"
	sameKeyRace(t, w, replicas, key, perReplica)
	if l := pgLedger(t, dsn); len(l) != 1 || l[key].State != "raised" {
		t.Fatalf("ledger: %v", l)
	}
	pgJudge(t, w, dsn)

	// Either replica's audit trail holds all eight calls and both clients.
	for _, env := range [][]string{envA, envB} {
		rows := auditRowsIn(t, env)
		clients := map[string]int{}
		for _, r := range rows {
			if r["tool"] == "korral_raise_replenishment_order" {
				c := fmt.Sprint(r["client"])
				clients[c[strings.Index(c, "replica-"):][:len("replica-0")]]++
			}
		}
		if clients["replica-0"] != perReplica || clients["replica-1"] != perReplica {
			t.Fatalf("audit trail calls per replica: %v; want %d each", clients, perReplica)
		}
		out, stderr, exit := e2etest.RunCLI(t, env, "audit", "report", "--format", "json")
		if exit != 0 || !strings.Contains(out, `"calls":8`) {
			t.Fatalf("audit report: exit %d: %s\n%s", exit, out, stderr)
		}
	}
	for _, p := range replicas {
		p.Stop()
	}
	noSQLite(t, dirA, dirB, w.Dir)
}

// TestPostgresApprovalAcrossReplicas stages through one replica, approves
// with the command, and reads the outcome through the other.
func TestPostgresApprovalAcrossReplicas(t *testing.T) {
	dsn := pgDatabase(t)
	w := e2etest.NewWorld(t)
	const cred = "approver-credential-0123456789"
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	extra := []string{"ALLOW_WRITES=true", "WRITE_APPROVAL=required", "MCP_AUTH_TOKENS_FILE=" + tokens}
	envA, dirA := replicaEnv(t, w, dsn, extra...)
	envB, dirB := replicaEnv(t, w, dsn, extra...)
	// The operator's migration step ahead of the rollout, then again: nothing to do.
	out, stderr, exit := e2etest.RunCLI(t, envA, "migrate")
	if exit != 0 || !strings.Contains(out, "schema migrated from version 0 to 6 (applied 0001_initial.sql, 0002_approvers.sql, 0003_consent_nonces.sql, 0004_audit_trace_id.sql, 0005_console_logins_sessions.sql, 0006_console_form_key.sql)") {
		t.Fatalf("migrate: exit %d: %s %s", exit, out, stderr)
	}
	if out, _, exit := e2etest.RunCLI(t, envB, "migrate"); exit != 0 || !strings.Contains(out, "schema up to date at version 6") {
		t.Fatalf("migrate again: exit %d: %s", exit, out)
	}
	if out, _, exit := e2etest.RunCLI(t, nil, "migrate", "--help"); exit != 0 || !strings.Contains(out, "Usage: storelink-mcp migrate") {
		t.Fatalf("migrate --help: exit %d: %s", exit, out)
	}
	if _, stderr, exit := e2etest.RunCLI(t, envA, "migrate", "now"); exit != 2 || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
		t.Fatalf("migrate with an argument: exit %d: %q", exit, stderr)
	}
	// The approver is registered once, in the database every replica shares.
	registerApprover(t, envA, "Jana Nováková", cred)
	a, b := e2etest.StartHTTP(t, envA, "--stateless"), e2etest.StartHTTP(t, envB, "--stateless")

	staged, err := e2etest.CallHTTP(t, a.Connect(e2etest.TokenDairy, "agent-a"), "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))
	if err != nil {
		t.Fatal(err)
	}
	id, _ := data(t, staged)["approval_id"].(string)
	if id == "" || w.Requests(isCreate) != 0 {
		t.Fatalf("staged: %v, %d POSTs", staged, w.Requests(isCreate))
	}
	shellEnv, shellDir := replicaEnv(t, w, dsn, extra...)
	list, stderr, exit := e2etest.RunCLI(t, shellEnv, "approvals", "list")
	if exit != 0 || !strings.Contains(list, id) {
		t.Fatalf("approvals list: exit %d: %s %s", exit, list, stderr)
	}
	out, stderr, exit = e2etest.RunCLI(t, append(shellEnv, "APPROVER_SECRET="+cred), "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit != 0 || !strings.Contains(out, "raised") {
		t.Fatalf("approve: exit %d\n%s\n%s", exit, out, stderr)
	}
	st, err := e2etest.CallHTTP(t, b.Connect(e2etest.TokenDairy, "agent-b"), "korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"})
	if err != nil {
		t.Fatal(err)
	}
	if d := data(t, st); d["status"] != "submitted" || d["quantity_units"] != 24.0 {
		t.Fatalf("status through the other replica: %v", d)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	pgJudge(t, w, dsn)
	a.Stop()
	b.Stop()
	noSQLite(t, dirA, dirB, shellDir, w.Dir)
}

// TestPostgresReplicaKilledMidPostIsNeverResent: after a replica is killed
// mid-POST, the other sends nothing for the same key or order.
func TestPostgresReplicaKilledMidPostIsNeverResent(t *testing.T) {
	dsn := pgDatabase(t)
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	envA, _ := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "UPSTREAM_TIMEOUT=30s", "MCP_AUTH_TOKENS_FILE="+tokens)
	envB, _ := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "MCP_AUTH_TOKENS_FILE="+tokens)
	a, b := e2etest.StartHTTP(t, envA, "--stateless"), e2etest.StartHTTP(t, envB, "--stateless")
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultHang, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 20 * time.Second})
	const key = "pg-crash-test-key-01"
	csA := a.Connect(e2etest.TokenDairy, "agent-a")
	go func() {
		_, _ = e2etest.CallHTTP(t, csA, "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key))
	}()
	deadline := time.Now().Add(10 * time.Second)
	for w.Requests(isCreate) == 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if w.Requests(isCreate) != 1 {
		t.Fatal("the POST never reached StoreLink")
	}
	_ = a.Cmd.Process.Kill()
	<-a.Done
	w.Mock.Server.ClearFaults()

	csB := b.Connect(e2etest.TokenDairy, "agent-b")
	again, err := e2etest.CallHTTP(t, csB, "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key))
	if err != nil {
		t.Fatal(err)
	}
	if c := e2etest.Code(again); c != "WRITE_OUTCOME_UNKNOWN" {
		t.Fatalf("the same key through the other replica: %v", again)
	}
	other, err := e2etest.CallHTTP(t, csB, "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))
	if err != nil {
		t.Fatal(err)
	}
	if c := e2etest.Code(other); c != "ORDER_IN_FLIGHT" {
		t.Fatalf("the same order under a derived key: %v", other)
	}
	if n := w.Requests(isCreate); n != 1 {
		t.Fatalf("%d POSTs, want 1", n)
	}
	if e := pgLedger(t, dsn)[key]; e.State != "sending" {
		t.Fatalf("ledger entry after the kill: %+v; want it left sending (an unknown outcome)", e)
	}
	pgJudge(t, w, dsn)
}

// readyz returns /readyz's status code and body.
func readyz(t *testing.T, p *e2etest.HTTPProc) (int, map[string]any) {
	t.Helper()
	resp, err := http.Get(p.Base + "/readyz")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return resp.StatusCode, m
}

// TestPostgresOutageAndRecovery: with PostgreSQL stopped, calls fail with
// STATE_UNAVAILABLE and send nothing and /readyz says so; replicas recover
// without a restart. Needs TEST_POSTGRES_SCRIPT.
func TestPostgresOutageAndRecovery(t *testing.T) {
	dsn := pgDatabase(t)
	script := os.Getenv("TEST_POSTGRES_SCRIPT")
	if script == "" {
		t.Skip("TEST_POSTGRES_SCRIPT is not set: this test stops and starts the server through scripts/postgres-test.sh")
	}
	pgctl := func(verb string) {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
		defer cancel()
		if out, err := exec.CommandContext(ctx, script, verb).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", script, verb, err, out)
		}
	}
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	env, _ := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "MCP_AUTH_TOKENS_FILE="+tokens)
	replicas := []*e2etest.HTTPProc{e2etest.StartHTTP(t, env, "--stateless"), e2etest.StartHTTP(t, env, "--stateless")}
	for _, p := range replicas {
		if c, body := readyz(t, p); c != http.StatusOK || body["database"] != "postgresql" || body["ledger"] != "ok" {
			t.Fatalf("readyz before the outage: %d %v", c, body)
		}
	}

	pgctl("down")
	t.Cleanup(func() { pgctl("up") }) // also when the test fails half-way
	for i, p := range replicas {
		cs := p.Connect(e2etest.TokenDairy, fmt.Sprintf("agent-%d", i))
		env, err := e2etest.CallHTTP(t, cs, "korral_raise_replenishment_order", e2etest.Order(24+i, "confirm", true, "idempotency_key", fmt.Sprintf("pg-outage-key-%02d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if c := e2etest.Code(env); c != "STATE_UNAVAILABLE" {
			t.Fatalf("confirm while PostgreSQL is down: %v", env)
		}
		if msg := errMessage(env); strings.Contains(msg, "127.0.0.1") || strings.Contains(msg, "storelink_test") {
			t.Fatalf("the model is told the database's address: %s", msg)
		}
		if c, body := readyz(t, p); c != http.StatusServiceUnavailable || body["ledger"] != "unreachable" {
			t.Fatalf("readyz during the outage: %d %v", c, body)
		}
		if !p.Logged("tool.state_unavailable") {
			t.Fatalf("no tool.state_unavailable line:\n%s", p.Stderr.String())
		}
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs while the ledger was unreachable", n)
	}
	pw, _ := url.Parse(dsn)
	secret, _ := pw.User.Password()
	for _, p := range replicas {
		if strings.Contains(p.Stderr.String(), secret) {
			t.Fatal("a replica logged the database password")
		}
	}

	pgctl("up")
	for i, p := range replicas {
		cs := p.Connect(e2etest.TokenDairy, fmt.Sprintf("agent-after-%d", i))
		env, err := e2etest.CallHTTP(t, cs, "korral_raise_replenishment_order", e2etest.Order(24+i, "confirm", true, "idempotency_key", fmt.Sprintf("pg-outage-key-%02d", i)))
		if err != nil {
			t.Fatal(err)
		}
		if d := data(t, env); d["mode"] != "raised" {
			t.Fatalf("confirm after PostgreSQL came back: %v", d)
		}
		if c, body := readyz(t, p); c != http.StatusOK || body["ledger"] != "ok" {
			t.Fatalf("readyz after the outage: %d %v", c, body)
		}
	}
	if n := w.Requests(isCreate); n != 2 {
		t.Fatalf("%d POSTs, want 2", n)
	}
	pgJudge(t, w, dsn)
}
