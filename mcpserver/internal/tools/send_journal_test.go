package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The write path when the ledger cannot take an order's outcome: the answer
// says the order was raised, the journal keeps it, and it reaches the
// ledger once the ledger is back.

// outageLedger fails outcome writes (Apply, Finish) while down or for the
// next failN writes; reservations and reads pass.
type outageLedger struct {
	state.Ledger
	mu     sync.Mutex
	down   bool
	failN  int
	writes int
}

func (l *outageLedger) fail() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.writes++
	if l.down || l.failN > 0 {
		l.failN--
		return fmt.Errorf("%w: connection refused (injected)", state.ErrUnavailable)
	}
	return nil
}

func (l *outageLedger) Apply(ctx context.Context, key string, ev state.Event, ch state.Change, now time.Time) (state.Entry, error) {
	if err := l.fail(); err != nil {
		return state.Entry{}, err
	}
	return l.Ledger.Apply(ctx, key, ev, ch, now)
}

func (l *outageLedger) Finish(ctx context.Context, key string, st state.EntryState, orderID, code, msg string, now time.Time) (state.Entry, error) {
	if err := l.fail(); err != nil {
		return state.Entry{}, err
	}
	return l.Ledger.Finish(ctx, key, st, orderID, code, msg, now)
}

// keepingUpstream is a fake StoreLink that also answers for its orders.
type keepingUpstream struct{ *fakeUpstream }

func (k keepingUpstream) CreateOrder(ctx context.Context, id string, req domain.OrderRequest) (domain.Order, error) {
	o, err := k.fakeUpstream.CreateOrder(ctx, id, req)
	if err == nil {
		o.SubmittedAt, o.ExpectedArrival = testNow, testNow.Add(48*time.Hour)
		k.mu.Lock()
		k.orders[o.ID] = o
		k.mu.Unlock()
	}
	return o, err
}

func (k keepingUpstream) Order(ctx context.Context, id, orderID string) (domain.Order, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	o, ok := k.orders[orderID]
	if !ok || o.StoreID != id {
		return k.fakeUpstream.Order(ctx, id, "no-such-order")
	}
	return o, nil
}

func openLedger(t *testing.T, path string) *sqlite.DB {
	t.Helper()
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	return db
}

func writeSession(t *testing.T, up Upstream, l state.Ledger, rec *journal.Recorder) session {
	t.Helper()
	return connect(t, up, mustKeyring(t, `{"47":"k1"}`), func(o *Options) {
		if rec != nil && rec.Log == nil {
			rec.Log = o.Logger // its lines go with the call's
		}
		o.Writes = &WriteOptions{AllowWrites: true, MaxOrderUnits: 500, Ledger: l, Recorder: rec, UpstreamID: "https://storelink.test"}
	})
}

func confirmArgs(key string) map[string]any {
	return map[string]any{"sku": "8847291", "quantity_units": 24, "reason": "stockout before close", "store_id": "47", "confirm": true, "idempotency_key": key}
}

// TestOutcomeRecordedAfterTheLedgerRecovers: the ledger refuses the outcome
// three times, then takes it; the agent gets the plain raised answer.
func TestOutcomeRecordedAfterTheLedgerRecovers(t *testing.T) {
	dir := t.TempDir()
	db := openLedger(t, filepath.Join(dir, "state.db"))
	l := &outageLedger{Ledger: db, failN: 3}
	j, err := journal.Open(filepath.Join(dir, "state.db.outcomes.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	rec := &journal.Recorder{Ledger: l, Journal: j, Now: func() time.Time { return testNow },
		Backoff: journal.Backoff{First: time.Millisecond, Max: 2 * time.Millisecond, Budget: time.Minute}}
	defer rec.Close()
	s := writeSession(t, keepingUpstream{newFake()}, l, rec)

	env, _ := callTool(t, s, "korral_raise_replenishment_order", confirmArgs("retry-key-00000001"))
	d, _ := env["data"].(map[string]any)
	if env["ok"] != true || d["mode"] != "raised" || d["order_id"] != "RO-47-000001" {
		t.Fatalf("confirm: %v", env)
	}
	if strings.Contains(d["next_step"].(string), "could not record") {
		t.Fatalf("a recorded order is answered as unrecorded: %v", d["next_step"])
	}
	if l.writes != 4 {
		t.Fatalf("%d ledger writes, want 3 refused and 1 taken", l.writes)
	}
	if e, _, _ := db.Get(context.Background(), "retry-key-00000001"); e.State != state.StateRaised || e.OrderID != "RO-47-000001" {
		t.Fatalf("ledger: %+v", e)
	}
	if !strings.Contains(s.logText(), `"msg":"ledger.recorded_late"`) {
		t.Fatalf("no ledger.recorded_late line:\n%s", s.logText())
	}
}

// TestOutcomeTheLedgerCannotTakeIsAnsweredTrulyAndReplayed: the ledger stays
// down. The agent is told the order was raised and recording is pending;
// the status tool shows an unknown outcome until a restart's replay
// records it as raised.
func TestOutcomeTheLedgerCannotTakeIsAnsweredTrulyAndReplayed(t *testing.T) {
	dir := t.TempDir()
	dbPath, jPath := filepath.Join(dir, "state.db"), filepath.Join(dir, "state.db.outcomes.jsonl")
	db := openLedger(t, dbPath)
	l := &outageLedger{Ledger: db, down: true}
	j, err := journal.Open(jPath)
	if err != nil {
		t.Fatal(err)
	}
	rec := &journal.Recorder{Ledger: l, Journal: j, Now: func() time.Time { return testNow },
		Backoff: journal.Backoff{First: time.Millisecond, Max: 4 * time.Millisecond, Budget: 40 * time.Millisecond}, DrainEvery: time.Hour}
	up := keepingUpstream{newFake()}
	s := writeSession(t, up, l, rec)
	const key = "down-key-00000001"

	env, _ := callTool(t, s, "korral_raise_replenishment_order", confirmArgs(key))
	if env["ok"] != true {
		t.Fatalf("an order StoreLink raised is answered as a failure: %v", env)
	}
	d := env["data"].(map[string]any)
	next, _ := d["next_step"].(string)
	if d["mode"] != "raised" || d["order_id"] != "RO-47-000001" || d["order_status"] != "submitted" || d["expected_arrival"] == nil {
		t.Fatalf("answer: %v", d)
	}
	for _, want := range []string{"StoreLink raised order RO-47-000001", "could not record it yet", "outcome journal keeps it", "Do not raise it again"} {
		if !strings.Contains(next, want) {
			t.Errorf("next_step %q lacks %q", next, want)
		}
	}
	if strings.Contains(next, "nothing was sent") || strings.Contains(next, "could not be completed") {
		t.Errorf("next_step denies the order: %q", next)
	}
	if len(up.created) != 1 {
		t.Fatalf("%d orders sent, want 1", len(up.created))
	}
	b, err := os.ReadFile(jPath)
	if err != nil || strings.Count(string(b), "\n") != 1 || !strings.Contains(string(b), `"order_id":"RO-47-000001"`) || !strings.Contains(string(b), `"idempotency_key":"`+key+`"`) {
		t.Fatalf("journal: %q %v", b, err)
	}
	if !strings.Contains(s.logText(), `"msg":"ledger.record_pending"`) {
		t.Fatalf("no ledger.record_pending line:\n%s", s.logText())
	}

	// Until recorded the entry is an unknown outcome whose note names the
	// code (read as text).
	st := callText(t, s, "korral_get_order_status", map[string]any{"order_id": key, "store_id": "47"})
	view := st["data"].(map[string]any)["ledger"].(map[string]any)
	if note, _ := view["note"].(string); view["state"] != "sending" || !strings.Contains(note, "(WRITE_OUTCOME_UNKNOWN)") || strings.Contains(note, "()") {
		t.Fatalf("status while unrecorded: %v", view)
	}

	// A restart replays the journal before serving, as storelink-mcp does.
	_ = rec.Close()
	_ = j.Close()
	db2 := openLedger(t, dbPath)
	j2, err := journal.Open(jPath)
	if err != nil {
		t.Fatal(err)
	}
	defer j2.Close()
	// The new process reads the order back from StoreLink before recording.
	rec2 := &journal.Recorder{Ledger: db2, Journal: j2, Now: func() time.Time { return testNow },
		Confirm: journal.ConfirmFunc(func(ctx context.Context, e state.Entry, orderID string) error {
			if o, err := up.Order(ctx, e.StoreID, orderID); err != nil || o.SKU != e.SKU || o.QuantityUnits != e.QuantityUnits {
				return &journal.NotConfirmedError{Reason: fmt.Sprintf("order %s: %+v %v", orderID, o, err)}
			}
			return nil
		})}
	defer rec2.Close()
	rep, err := rec2.Replay(context.Background())
	if err != nil || rep.Recorded != 1 || !rep.Clean() {
		t.Fatalf("replay at start: %+v %v", rep, err)
	}
	s2 := writeSession(t, up, db2, rec2)
	st, _ = callTool(t, s2, "korral_get_order_status", map[string]any{"order_id": "RO-47-000001", "store_id": "47"})
	sd := st["data"].(map[string]any)
	if st["ok"] != true || sd["order_id"] != "RO-47-000001" || sd["ledger"].(map[string]any)["state"] != "raised" ||
		sd["ledger"].(map[string]any)["idempotency_key"] != key {
		t.Fatalf("status after the replay: %v", st)
	}
	if b, _ := os.ReadFile(jPath); len(b) != 0 {
		t.Fatalf("journal after the replay: %q", b)
	}
	// Confirming again replays the recorded order; nothing is sent.
	again, _ := callTool(t, s2, "korral_raise_replenishment_order", confirmArgs(key))
	if ad := again["data"].(map[string]any); ad["mode"] != "replay" || ad["order_id"] != "RO-47-000001" || len(up.created) != 1 {
		t.Fatalf("confirm again: %v, %d sent", again, len(up.created))
	}
}

// TestUnrecordedNotSentSaysSo: StoreLink did not take the order and the
// ledger cannot record that; the answer keeps StoreLink's code.
func TestUnrecordedNotSentSaysSo(t *testing.T) {
	dir := t.TempDir()
	db := openLedger(t, filepath.Join(dir, "state.db"))
	l := &outageLedger{Ledger: db, down: true}
	rec := &journal.Recorder{Ledger: l, Now: func() time.Time { return testNow },
		Backoff: journal.Backoff{First: time.Millisecond, Max: 2 * time.Millisecond, Budget: 20 * time.Millisecond}}
	up := &notTaking{keepingUpstream{newFake()}}
	s := writeSession(t, up, l, rec)
	env, _ := callTool(t, s, "korral_raise_replenishment_order", confirmArgs("notsent-key-0001"))
	msg, _ := env["error"].(map[string]any)["message"].(string)
	if errCode(env) != "UPSTREAM_UNAVAILABLE" || !strings.Contains(msg, "the ledger has not recorded that yet") || strings.Contains(msg, "may be confirmed again") {
		t.Fatalf("answer: %v", env)
	}
}

// notTaking is a StoreLink whose breaker is open: nothing is sent.
type notTaking struct{ keepingUpstream }

func (n *notTaking) CreateOrder(context.Context, string, domain.OrderRequest) (domain.Order, error) {
	e := apperr.New(apperr.UpstreamUnavailable, "StoreLink is failing; the circuit breaker is open and no request was sent", "")
	e.Reach = apperr.ReachNotSent
	return domain.Order{}, e
}

// callText calls a tool and decodes its text envelope, unchecked.
func callText(t *testing.T, s session, name string, args any) map[string]any {
	t.Helper()
	res, err := s.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return env
}
