package storelink_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/mockstorelink"
)

// A known order id is never dropped. When the ledger cannot record what
// StoreLink answered, the agent is still told the order was raised, with its
// id; the outcome waits in the outcome journal and reaches the ledger once
// it can: after the call's retries, in the background, at the next start or
// from doctor. The judge is the same as on the whole write path: StoreLink
// holds exactly the orders the ledger says were raised.

const raiseTool = "korral_raise_replenishment_order"

// lockLedger takes the SQLite file's write lock from outside the server, as
// a long backup or another program would: the server still reads, but no
// write of its own gets through. It returns the release.
func lockLedger(t *testing.T, path string) func() {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(20000)")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatalf("lock the ledger: %v", err)
	}
	var once sync.Once
	release := func() {
		once.Do(func() {
			_, _ = conn.ExecContext(context.Background(), "ROLLBACK")
			_ = conn.Close()
			_ = db.Close()
		})
	}
	t.Cleanup(release)
	return release
}

// heldUnits maps the quantity of each order StoreLink holds (beyond its
// fixtures) to its id.
func heldUnits(w *world) map[int64]string {
	out := map[int64]string{}
	for _, o := range w.mock.Server.Orders() {
		if o.OrderID != mockstorelink.OrderOpen && o.OrderID != mockstorelink.OrderRejected {
			out[o.QuantityUnits] = string(o.OrderID)
		}
	}
	return out
}

func callEnvelope(cs *mcp.ClientSession, name string, args map[string]any, timeout time.Duration) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	var env map[string]any
	err = json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env)
	return env, err
}

// TestOrderRaisedWhileTheLedgerIsLockedIsNeverDropped: two orders reach
// StoreLink while the SQLite ledger cannot be written. Both answers say the
// order was raised, with StoreLink's ids, and that recording is pending; the
// journal holds both; doctor reports them; after a crash and a restart the
// server records them before it serves, and the status tool shows them
// raised.
func TestOrderRaisedWhileTheLedgerIsLockedIsNeverDropped(t *testing.T) {
	w := newWorld(t)
	env := w.env("ALLOW_WRITES=true")
	p := startServer(t, env)
	// Each POST is held a moment, so the lock falls between the request and
	// its answer, where the order id becomes known.
	w.mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: time.Second})
	keys := map[int64]string{24: "locked-ledger-key-24", 36: "locked-ledger-key-36"}
	type answer struct {
		units int64
		env   map[string]any
		err   error
	}
	answers := make(chan answer, len(keys))
	for units, key := range keys {
		go func() {
			env, err := callEnvelope(p.cs, raiseTool, order(int(units), "confirm", true, "idempotency_key", key), 90*time.Second)
			answers <- answer{units, env, err}
		}()
	}
	deadline := time.Now().Add(20 * time.Second)
	for w.requests(isCreate) < len(keys) && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if n := w.requests(isCreate); n != len(keys) {
		t.Fatalf("%d POSTs reached StoreLink, want %d", n, len(keys))
	}
	unlock := lockLedger(t, w.statePath)

	for range keys {
		a := <-answers
		if a.err != nil {
			t.Fatalf("confirm of %d units: %v", a.units, a.err)
		}
		if a.env["ok"] != true {
			t.Fatalf("an order StoreLink raised is answered as a failure: %v", a.env)
		}
		d := data(t, a.env)
		next, _ := d["next_step"].(string)
		if id := heldUnits(w)[a.units]; d["mode"] != "raised" || d["order_id"] != id || id == "" {
			t.Fatalf("answer for %d units names %v; StoreLink holds %q", a.units, d["order_id"], id)
		}
		if !strings.Contains(next, "could not record it yet") || !strings.Contains(next, "Do not raise it again") {
			t.Fatalf("next_step does not say recording is pending: %q", next)
		}
	}
	for units, key := range keys {
		if e := ledgerEntries(t, w.statePath)[key]; e.State != "sending" {
			t.Fatalf("%d units: ledger %+v while locked; want it still sending", units, e)
		}
	}
	journalPath := w.statePath + ".outcomes.jsonl"
	b, err := os.ReadFile(journalPath)
	if err != nil {
		t.Fatal(err)
	}
	for units, id := range heldUnits(w) {
		if !strings.Contains(string(b), `"order_id":"`+id+`"`) || !strings.Contains(string(b), `"idempotency_key":"`+keys[units]+`"`) {
			t.Fatalf("the journal lacks order %s:\n%s", id, b)
		}
	}
	if st, _ := os.Stat(journalPath); st.Mode().Perm() != 0o600 {
		t.Fatalf("journal mode %v, want 0600", st.Mode().Perm())
	}
	if len(p.linesWhere("ledger.record_pending")) != len(keys) {
		t.Fatalf("want one ledger.record_pending line per order:\n%s", p.stderr.String())
	}

	out, _, exit := runCLI(t, env, "doctor")
	if exit != 1 || !strings.Contains(out, "FAIL  outcome journal: "+journalPath+" holds 2 order outcome(s) the ledger has not recorded") {
		t.Fatalf("doctor while the ledger is locked: exit %d\n%s", exit, out)
	}

	// A crash while the ledger is still locked, then a restart once it is
	// free: the outcomes are recorded before the server serves.
	p.kill()
	unlock()
	for _, key := range keys {
		if e := ledgerEntries(t, w.statePath)[key]; e.State != "sending" {
			t.Fatalf("ledger before the restart: %+v", e)
		}
	}
	w.mock.Server.ClearFaults()
	p2 := startServer(t, env)
	for units, id := range heldUnits(w) {
		st := p2.call("korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"})
		d := data(t, st)
		ledger, _ := d["ledger"].(map[string]any)
		if d["order_id"] != id || ledger["state"] != "raised" || ledger["idempotency_key"] != keys[units] {
			t.Fatalf("status of %s after the restart: %v", id, d)
		}
	}
	if b, _ := os.ReadFile(journalPath); len(b) != 0 {
		t.Fatalf("journal after the replay: %q", b)
	}
	out, _, exit = runCLI(t, env, "doctor")
	if exit != 0 || !strings.Contains(out, "ok    outcome journal: "+journalPath+" is writable; 0 outcome(s) recorded in the ledger now, nothing pending") {
		t.Fatalf("doctor after the replay: exit %d\n%s", exit, out)
	}
	if n := w.requests(isCreate); n != len(keys) {
		t.Fatalf("%d POSTs, want %d", n, len(keys))
	}
	judge(t, w)
}

// TestJournalPathIsCheckedAtStart: a server that may send orders refuses to
// start (exit 2) without a place for the outcome journal, and says which
// setting to fix.
func TestJournalPathIsCheckedAtStart(t *testing.T) {
	w := newWorld(t)
	ro := w.dir + "/ro"
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere")
	}
	_, stderr, exit := runCLI(t, w.env("ALLOW_WRITES=true", "STATE_JOURNAL_PATH="+ro+"/outcomes.jsonl"), "stdio")
	if exit != 2 || !strings.Contains(stderr, "STATE_JOURNAL_PATH") || !strings.Contains(stderr, "permission denied") {
		t.Fatalf("exit %d: %s", exit, stderr)
	}
	_, stderr, exit = runCLI(t, w.env("ALLOW_WRITES=true", "STATE_JOURNAL_PATH="+w.statePath), "stdio")
	if exit != 2 || !strings.Contains(stderr, "is the state database's own file") {
		t.Fatalf("journal on the database: exit %d: %s", exit, stderr)
	}
}

// TestPostgresRestartMidBurstDropsNoOrderID is the story: PostgreSQL
// restarts under a burst of confirms through two replicas. The sends caught
// between StoreLink's answer and the ledger are recorded by the retries, so
// every order StoreLink holds is answered as raised and recorded.
func TestPostgresRestartMidBurstDropsNoOrderID(t *testing.T) {
	r := pgMidBurst(t, func(pgctl func(string)) { pgctl("restart") })
	if r.late == 0 {
		t.Fatal("no send was caught between StoreLink's answer and the ledger; the restart missed the window this test is about")
	}
}

// TestPostgresOutageMidBurstDropsNoOrderID: PostgreSQL stays away longer
// than the retries. The sends caught in flight are answered as raised with
// recording pending, and the replicas record them by themselves once the
// database is back.
func TestPostgresOutageMidBurstDropsNoOrderID(t *testing.T) {
	r := pgMidBurst(t, func(pgctl func(string)) {
		pgctl("down")
		// Longer than the retries of the sends caught in flight, so their
		// outcomes must wait in the journal.
		time.Sleep(12 * time.Second)
		pgctl("up")
	})
	if r.pending == 0 {
		t.Fatal("no send was caught between StoreLink's answer and the ledger; the outage missed the window this test is about")
	}
}

// pgMidBurst runs a burst of confirms through two replicas, applies outage
// to PostgreSQL under it, and judges every answer against what StoreLink
// holds: each order StoreLink holds was answered as raised with its id
// (recorded or pending), no answer denies one, and once the database is
// back the ledger's raised entries are exactly StoreLink's orders, none
// left sending. It says how many answers said recording was pending, and
// how many outcomes the replicas recorded only after retrying.
func pgMidBurst(t *testing.T, outage func(pgctl func(string))) (r struct{ pending, late int }) {
	t.Helper()
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
	w := newWorld(t)
	tokens := w.dir + "/tokens"
	writeTokenFile(t, tokens, "dairy-agent "+tokenDairy+"\n", time.Now())
	// Two replicas on one machine: one outcome journal, shared.
	env, _ := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "MAX_ORDER_UNITS=100000", "MCP_AUTH_TOKENS_FILE="+tokens)
	replicas := []*httpProc{startHTTP(t, env, "--stateless"), startHTTP(t, env, "--stateless")}
	// Held POSTs keep several orders between request and answer at any time.
	w.mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 500 * time.Millisecond})

	var mu sync.Mutex
	units := 200
	answers := map[int64]map[string]any{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for r, p := range replicas {
		for i := range 4 {
			cs := p.connect(tokenDairy, fmt.Sprintf("burst-%d-%d", r, i))
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					mu.Lock()
					units++
					u := units
					mu.Unlock()
					env, err := callEnvelope(cs, raiseTool, order(u, "confirm", true, "idempotency_key", fmt.Sprintf("pg-burst-key-%05d", u)), 60*time.Second)
					if err != nil {
						t.Errorf("call: %v", err)
						return
					}
					mu.Lock()
					answers[int64(u)] = env
					mu.Unlock()
					if env["ok"] != true {
						time.Sleep(50 * time.Millisecond) // pace the retries while the database is away
					}
				}
			}()
		}
	}
	waitPOSTs := func(n int) {
		t.Helper()
		deadline := time.Now().Add(60 * time.Second)
		for w.requests(isCreate) < n && time.Now().Before(deadline) {
			time.Sleep(10 * time.Millisecond)
		}
		if w.requests(isCreate) < n {
			close(stop)
			wg.Wait()
			t.Fatalf("only %d POSTs reached StoreLink, waiting for %d", w.requests(isCreate), n)
		}
	}
	waitPOSTs(8)
	t.Cleanup(func() { pgctl("up") }) // also when the test fails half-way
	outage(pgctl)
	waitPOSTs(w.requests(isCreate) + 8)
	close(stop)
	wg.Wait()

	// The replicas drain the journal by themselves.
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := 0
		for _, e := range pgLedger(t, dsn) {
			if e.State == "sending" || e.State == "unknown" {
				left++
			}
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d ledger entries still without their outcome after the database came back", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
	pgJudge(t, w, dsn)

	held := heldUnits(w)
	pending, codes := 0, map[string]int{}
	for u, env := range answers {
		id, atStoreLink := held[u]
		if env["ok"] != true {
			codes[code(env)]++
			if atStoreLink {
				t.Errorf("StoreLink holds order %s of %d units, but the agent was told %s: %s", id, u, code(env), errMessage(env))
			}
			continue
		}
		d := data(t, env)
		if d["mode"] != "raised" || d["order_id"] != id || !atStoreLink {
			t.Errorf("answer for %d units names order %v (%v); StoreLink holds %q", u, d["order_id"], d["mode"], id)
		}
		if strings.Contains(fmt.Sprint(d["next_step"]), "could not record it yet") {
			pending++
		}
	}
	for u, id := range held {
		if _, ok := answers[u]; !ok {
			t.Errorf("StoreLink holds order %s of %d units that no agent was told of", id, u)
		}
	}
	for c := range codes {
		if c != "STATE_UNAVAILABLE" {
			t.Errorf("unexpected answer %s during the outage", c)
		}
	}
	for _, p := range replicas {
		for _, l := range p.logLines() {
			if l["msg"] == "ledger.recorded_late" {
				r.late++
			}
		}
	}
	r.pending = pending
	t.Logf("%d answers: %d orders (%d recorded after retries, %d with recording pending), failures %v", len(answers), len(held), r.late, pending, codes)
	return r
}
