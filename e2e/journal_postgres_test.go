package e2e_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// TestPostgresRestartMidBurstDropsNoOrderID: a PostgreSQL restart under a
// burst loses no order: the retries record every order StoreLink holds.
func TestPostgresRestartMidBurstDropsNoOrderID(t *testing.T) {
	b := startPGBurst(t)
	b.pgctl("restart")
	if b.run(); b.late == 0 {
		t.Fatal("no send was caught between StoreLink's answer and the ledger; the restart missed the window this test is about")
	}
	b.servesAgain()
}

// TestPostgresOutageMidBurstDropsNoOrderID: an outage longer than the
// retries leaves sends pending, recorded by the replicas once it ends.
func TestPostgresOutageMidBurstDropsNoOrderID(t *testing.T) {
	b := startPGBurst(t)
	b.pgctl("down")
	// Longer than the retries, so outcomes must wait in the journal.
	time.Sleep(12 * time.Second)
	b.pgctl("up")
	if b.run(); b.pending == 0 {
		t.Fatal("no send was caught between StoreLink's answer and the ledger; the outage missed the window this test is about")
	}
}

// pgBurst is a burst of confirms through two replicas while PostgreSQL is
// stopped and started. Every StoreLink order is answered raised, and
// afterwards the ledger's raised entries equal StoreLink's orders.
type pgBurst struct {
	t        *testing.T
	w        *e2etest.World
	dsn      string
	script   string
	replicas []*e2etest.HTTPProc

	mu      sync.Mutex
	units   int
	answers map[int64]map[string]any
	stop    chan struct{}
	wg      sync.WaitGroup
	// pgErr is the script's first failure, reported after the goroutines end.
	pgErr error

	// pending counts answers with recording pending, late outcomes recorded after retries.
	pending, late int
}

// startPGBurst starts the replicas and the burst, returning once eight POSTs reached StoreLink.
func startPGBurst(t *testing.T) *pgBurst {
	dsn := pgDatabase(t)
	script := os.Getenv("TEST_POSTGRES_SCRIPT")
	if script == "" {
		t.Skip("TEST_POSTGRES_SCRIPT is not set: this test stops and starts the server through scripts/postgres-test.sh")
	}
	b := &pgBurst{t: t, w: e2etest.NewWorld(t), dsn: dsn, script: script, units: 200,
		answers: map[int64]map[string]any{}, stop: make(chan struct{})}
	tokens := b.w.Dir + "/tokens"
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	// Two replicas on one machine: one outcome journal, shared.
	env, _ := replicaEnv(t, b.w, dsn, "ALLOW_WRITES=true", "MAX_ORDER_UNITS=100000", "MCP_AUTH_TOKENS_FILE="+tokens)
	b.replicas = []*e2etest.HTTPProc{e2etest.StartHTTP(t, env, "--stateless"), e2etest.StartHTTP(t, env, "--stateless")}
	// Held POSTs keep several orders between request and answer at any time.
	b.w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: 500 * time.Millisecond})
	for r, p := range b.replicas {
		for i := range 4 {
			b.wg.Add(1)
			go b.confirmUntilStopped(p.Connect(e2etest.TokenDairy, fmt.Sprintf("burst-%d-%d", r, i)))
		}
	}
	b.waitPOSTs(8)
	t.Cleanup(func() { // also when the test fails half-way
		before := b.pgErr
		b.pgctl("up")
		if before == nil && b.pgErr != nil {
			t.Error(b.pgErr)
		}
	})
	return b
}

// confirmUntilStopped confirms orders of rising units, each with its own key, until stopped.
func (b *pgBurst) confirmUntilStopped(cs *mcp.ClientSession) {
	defer b.wg.Done()
	for {
		select {
		case <-b.stop:
			return
		default:
		}
		b.mu.Lock()
		b.units++
		u := b.units
		b.mu.Unlock()
		env, err := callEnvelope(cs, raiseTool, e2etest.Order(u, "confirm", true, "idempotency_key", fmt.Sprintf("pg-burst-key-%05d", u)), 60*time.Second)
		if err != nil {
			b.t.Errorf("call: %v", err)
			return
		}
		b.mu.Lock()
		b.answers[int64(u)] = env
		b.mu.Unlock()
		if env["ok"] != true {
			time.Sleep(50 * time.Millisecond) // pace the retries while the database is away
		}
	}
}

// servesAgain: each replica raises an order once the database is back, without a restart.
func (b *pgBurst) servesAgain() {
	for i, p := range b.replicas {
		b.units++
		args := e2etest.Order(b.units, "confirm", true, "idempotency_key", fmt.Sprintf("pg-burst-key-%05d", b.units))
		env, err := e2etest.CallHTTP(b.t, p.Connect(e2etest.TokenDairy, fmt.Sprintf("after-%d", i)), raiseTool, args)
		if err != nil || env["ok"] != true {
			b.t.Fatalf("replica %d after the restart: %v %v", i, env, err)
		}
	}
}

// pgctl runs the script with verb (restart, down, up).
func (b *pgBurst) pgctl(verb string) {
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	if out, err := exec.CommandContext(ctx, b.script, verb).CombinedOutput(); err != nil && b.pgErr == nil {
		b.pgErr = fmt.Errorf("%s %s: %v\n%s", b.script, verb, err, out)
	}
}

// halt stops the burst and waits for its calls to end.
func (b *pgBurst) halt() {
	close(b.stop)
	b.wg.Wait()
}

func (b *pgBurst) waitPOSTs(n int) {
	b.t.Helper()
	if !postsReached(b.w, n, 60*time.Second) {
		b.halt()
		b.t.Fatalf("only %d POSTs reached StoreLink, waiting for %d", b.w.Requests(isCreate), n)
	}
}

// run runs eight more POSTs after the outage, stops, waits for the drain, and checks the answers.
func (b *pgBurst) run() {
	t := b.t
	if b.pgErr != nil {
		b.halt()
		t.Fatal(b.pgErr)
	}
	b.waitPOSTs(b.w.Requests(isCreate) + 8)
	b.halt()
	b.waitDrained()
	pgJudge(t, b.w, b.dsn)
	b.judgeAnswers()
}

// waitDrained waits until the replicas have drained the journal.
func (b *pgBurst) waitDrained() {
	deadline := time.Now().Add(60 * time.Second)
	for {
		left := 0
		for _, e := range pgLedger(b.t, b.dsn) {
			if e.State == "sending" || e.State == "unknown" {
				left++
			}
		}
		if left == 0 {
			return
		}
		if time.Now().After(deadline) {
			b.t.Fatalf("%d ledger entries still without their outcome after the database came back", left)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (b *pgBurst) judgeAnswers() {
	t := b.t
	held := heldUnits(b.w)
	codes := map[string]int{}
	for u, env := range b.answers {
		id, atStoreLink := held[u]
		if env["ok"] != true {
			codes[e2etest.Code(env)]++
			if atStoreLink {
				t.Errorf("StoreLink holds order %s of %d units, but the agent was told %s: %s", id, u, e2etest.Code(env), errMessage(env))
			}
			continue
		}
		d := data(t, env)
		if d["mode"] != "raised" || d["order_id"] != id || !atStoreLink {
			t.Errorf("answer for %d units names order %v (%v); StoreLink holds %q", u, d["order_id"], d["mode"], id)
		}
		if strings.Contains(fmt.Sprint(d["next_step"]), "could not record it yet") {
			b.pending++
		}
	}
	for u, id := range held {
		if _, ok := b.answers[u]; !ok {
			t.Errorf("StoreLink holds order %s of %d units that no agent was told of", id, u)
		}
	}
	for c := range codes {
		if c != "STATE_UNAVAILABLE" {
			t.Errorf("unexpected answer %s during the outage", c)
		}
	}
	for _, p := range b.replicas {
		for _, l := range p.LogLines() {
			if l["msg"] == "ledger.recorded_late" {
				b.late++
			}
		}
	}
	t.Logf("%d answers: %d orders (%d recorded after retries, %d with recording pending), failures %v", len(b.answers), len(held), b.late, b.pending, codes)
}
