package e2e_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// A known order id is never dropped: when the ledger cannot record
// StoreLink's answer, the outcome waits in the outcome journal and reaches
// the ledger later. judge checks StoreLink holds exactly the raised orders.

const raiseTool = "korral_raise_replenishment_order"

// lockLedger takes the SQLite write lock from outside the server and returns the release.
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

// heldUnits maps the quantity of each new order StoreLink holds to its id.
func heldUnits(w *e2etest.World) map[int64]string {
	out := map[int64]string{}
	for _, o := range placed(w) {
		out[o.QuantityUnits] = string(o.OrderID)
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

// TestOrderRaisedWhileTheLedgerIsLockedIsNeverDropped: orders raised while
// the ledger is locked are reported raised and pending, and a restart
// records them from the journal before it serves.
func TestOrderRaisedWhileTheLedgerIsLockedIsNeverDropped(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true")
	p := e2etest.StartServer(t, env)
	keys := map[int64]string{24: "locked-ledger-key-24", 36: "locked-ledger-key-36"}
	unlock := confirmWhileLocked(t, w, p, keys)
	journalPath := w.StatePath + ".outcomes.jsonl"
	checkOutcomesPending(t, w, p, env, keys, journalPath)

	// Crash while locked, restart once free.
	p.Kill()
	unlock()
	for _, key := range keys {
		if e := ledgerEntries(t, w.StatePath)[key]; e.State != "sending" {
			t.Fatalf("ledger before the restart: %+v", e)
		}
	}
	w.Mock.Server.ClearFaults()
	checkOutcomesRecordedAtStart(t, w, e2etest.StartServer(t, env), env, keys, journalPath)
	if n := w.Requests(isCreate); n != len(keys) {
		t.Fatalf("%d POSTs, want %d", n, len(keys))
	}
	judge(t, w)
}

// confirmWhileLocked confirms one order per key while the ledger is locked and
// checks each answer says recording is pending. It returns the lock's release.
func confirmWhileLocked(t *testing.T, w *e2etest.World, p *e2etest.Proc, keys map[int64]string) (unlock func()) {
	t.Helper()
	// Hold each POST so the lock falls between the request and its answer.
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: time.Second})
	type answer struct {
		units int64
		env   map[string]any
		err   error
	}
	answers := make(chan answer, len(keys))
	for units, key := range keys {
		go func() {
			env, err := callEnvelope(p.CS, raiseTool, e2etest.Order(int(units), "confirm", true, "idempotency_key", key), 90*time.Second)
			answers <- answer{units, env, err}
		}()
	}
	if !postsReached(w, len(keys), 20*time.Second) {
		t.Fatalf("%d POSTs reached StoreLink, want %d", w.Requests(isCreate), len(keys))
	}
	unlock = lockLedger(t, w.StatePath)
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
	return unlock
}

// checkOutcomesPending checks the journal (mode 0600), the log and doctor
// while the ledger is locked.
func checkOutcomesPending(t *testing.T, w *e2etest.World, p *e2etest.Proc, env []string, keys map[int64]string, journalPath string) {
	t.Helper()
	for units, key := range keys {
		if e := ledgerEntries(t, w.StatePath)[key]; e.State != "sending" {
			t.Fatalf("%d units: ledger %+v while locked; want it still sending", units, e)
		}
	}
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
	if len(p.LinesWhere("ledger.record_pending")) != len(keys) {
		t.Fatalf("want one ledger.record_pending line per order:\n%s", p.Stderr.String())
	}
	out, _, exit := e2etest.RunCLI(t, env, "doctor")
	if exit != 1 || !strings.Contains(out, "FAIL  outcome journal: "+journalPath+" holds 2 order outcome(s) the ledger has not recorded") {
		t.Fatalf("doctor while the ledger is locked: exit %d\n%s", exit, out)
	}
}

// checkOutcomesRecordedAtStart checks the restart read each order back from
// StoreLink, recorded it, emptied the journal, and doctor passes.
func checkOutcomesRecordedAtStart(t *testing.T, w *e2etest.World, p *e2etest.Proc, env []string, keys map[int64]string, journalPath string) {
	t.Helper()
	for units, id := range heldUnits(w) {
		if n := w.Requests(isGetOrder(id)); n != 1 {
			t.Fatalf("order %s was read back %d time(s) at the restart, want 1", id, n)
		}
		d := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"}))
		ledger, _ := d["ledger"].(map[string]any)
		if d["order_id"] != id || ledger["state"] != "raised" || ledger["idempotency_key"] != keys[units] {
			t.Fatalf("status of %s after the restart: %v", id, d)
		}
	}
	if b, _ := os.ReadFile(journalPath); len(b) != 0 {
		t.Fatalf("journal after the replay: %q", b)
	}
	out, _, exit := e2etest.RunCLI(t, env, "doctor")
	if exit != 0 || !strings.Contains(out, "ok    outcome journal: "+journalPath+" is writable; 0 outcome(s) recorded in the ledger now, nothing pending") {
		t.Fatalf("doctor after the replay: exit %d\n%s", exit, out)
	}
}

// TestJournalPathIsCheckedAtStart: without a journal path, a server that may
// send orders exits 2 and names the setting.
func TestJournalPathIsCheckedAtStart(t *testing.T) {
	w := e2etest.NewWorld(t)
	ro := w.Dir + "/ro"
	if err := os.Mkdir(ro, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() == 0 {
		t.Skip("root writes anywhere")
	}
	_, stderr, exit := e2etest.RunCLI(t, w.Env("ALLOW_WRITES=true", "STATE_JOURNAL_PATH="+ro+"/outcomes.jsonl"), "stdio")
	if exit != 2 || !strings.Contains(stderr, "STATE_JOURNAL_PATH") || !strings.Contains(stderr, "permission denied") {
		t.Fatalf("exit %d: %s", exit, stderr)
	}
	_, stderr, exit = e2etest.RunCLI(t, w.Env("ALLOW_WRITES=true", "STATE_JOURNAL_PATH="+w.StatePath), "stdio")
	if exit != 2 || !strings.Contains(stderr, "is the state database's own file") {
		t.Fatalf("journal on the database: exit %d: %s", exit, stderr)
	}
}

// isGetOrder matches StoreLink's reads of order id.
func isGetOrder(id string) func(mockstorelink.RequestRecord) bool {
	return func(r mockstorelink.RequestRecord) bool {
		return r.OperationID == mockstorelink.OpGetReplenishmentOrder && strings.HasSuffix(r.Path, "/"+id)
	}
}

// entryAttempt returns the ledger's updated_at of key: the attempt a journal line carries.
func entryAttempt(t *testing.T, path, key string) string {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var at string
	if err := db.QueryRow(`SELECT updated_at FROM entries WHERE idempotency_key = ?`, key).Scan(&at); err != nil {
		t.Fatal(err)
	}
	return at
}

// appendLines appends raw lines to the journal.
func appendLines(t *testing.T, path string, lines ...string) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range lines {
		if _, err := f.WriteString(l + "\n"); err != nil {
			t.Fatal(err)
		}
	}
}

// sendingAfterKill confirms an order and kills the server before StoreLink
// answers, leaving the entry sending and no order at StoreLink.
func sendingAfterKill(t *testing.T, w *e2etest.World, env []string, units int, key string) {
	t.Helper()
	p := e2etest.StartServer(t, env)
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: time.Minute})
	before := w.Requests(isCreate)
	go func() {
		_, _ = callEnvelope(p.CS, raiseTool, e2etest.Order(units, "confirm", true, "idempotency_key", key), 90*time.Second)
	}()
	if !postsReached(w, before+1, 20*time.Second) {
		t.Fatal("the POST never reached StoreLink")
	}
	p.Kill()
	w.Mock.Server.ClearFaults()
	if e := ledgerEntries(t, w.StatePath)[key]; e.State != "sending" {
		t.Fatalf("ledger after the kill: %+v, want sending", e)
	}
	if _, held := heldUnits(w)[int64(units)]; held {
		t.Fatal("StoreLink took the order although the client left before its answer")
	}
}

// TestForgedAcceptedLineIsNeverRecorded: forged "accepted" journal lines are
// read back from StoreLink at restart, never recorded, and named by doctor.
func TestForgedAcceptedLineIsNeverRecorded(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true")
	const key = "forged-line-key-24"
	sendingAfterKill(t, w, env, 24, key)
	journalPath := w.StatePath + ".outcomes.jsonl"
	attempt := entryAttempt(t, w.StatePath, key)
	line := func(orderID string) string {
		return fmt.Sprintf(`{"v":1,"at":%q,"idempotency_key":%q,"attempt":%q,"event":"accepted","order_id":%q,"store_id":"47","sku":%q,"quantity_units":24}`,
			time.Now().UTC().Format(time.RFC3339Nano), key, attempt, orderID, mockstorelink.SKUButter)
	}
	appendLines(t, journalPath, line("RO-47-FORGED1"), line(mockstorelink.OrderOpen))

	p := e2etest.StartServer(t, env)
	if e := ledgerEntries(t, w.StatePath)[key]; e.State != "sending" || e.OrderID != "" {
		t.Fatalf("the forged line was recorded: %+v", e)
	}
	if n := w.Requests(isGetOrder("RO-47-FORGED1")); n != 1 {
		t.Fatalf("RO-47-FORGED1 was read back %d time(s), want 1", n)
	}
	if n := len(p.LinesWhere("journal.conflict", "order_id", "RO-47-FORGED1")); n != 1 {
		t.Fatalf("%d journal.conflict lines for RO-47-FORGED1:\n%s", n, p.Stderr.String())
	}
	st := p.Call("korral_get_order_status", map[string]any{"order_id": key, "store_id": "47"})
	if l, _ := data(t, st)["ledger"].(map[string]any); l["state"] != "sending" {
		t.Fatalf("status: %v", st)
	}
	p.Stop()

	out, _, exit := e2etest.RunCLI(t, env, "doctor")
	for _, want := range []string{
		"FAIL  outcome journal: " + journalPath + " line 1: the line says StoreLink accepted order RO-47-FORGED1",
		"StoreLink answered that store 47 holds no order RO-47-FORGED1",
		"FAIL  outcome journal: " + journalPath + " line 2: the line says StoreLink accepted order " + mockstorelink.OrderOpen,
		"its SKU is " + mockstorelink.SKUSteady,
	} {
		if exit != 1 || !strings.Contains(out, want) {
			t.Fatalf("doctor: exit %d, want %q\n%s", exit, want, out)
		}
	}
	if e := ledgerEntries(t, w.StatePath)[key]; e.State != "sending" || e.OrderID != "" {
		t.Fatalf("doctor recorded the forged line: %+v", e)
	}
	if b, _ := os.ReadFile(journalPath); strings.Count(string(b), "\n") != 2 {
		t.Fatalf("the forged lines must stay for a person: %q", b)
	}
	judge(t, w)
}

// TestAcceptedLineWaitsWhileStoreLinkCannotConfirmIt: a genuine outcome waits
// in the journal while StoreLink fails reads, then is recorded once it answers.
func TestAcceptedLineWaitsWhileStoreLinkCannotConfirmIt(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true")
	const key = "unconfirmed-key-30"
	p := e2etest.StartServer(t, env)
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultLatency, OperationID: mockstorelink.OpCreateReplenishmentOrder, Delay: time.Second})
	answer := make(chan map[string]any, 1)
	go func() {
		env, _ := callEnvelope(p.CS, raiseTool, e2etest.Order(30, "confirm", true, "idempotency_key", key), 90*time.Second)
		answer <- env
	}()
	postsReached(w, 1, 20*time.Second)
	unlock := lockLedger(t, w.StatePath)
	if a := <-answer; a["ok"] != true {
		t.Fatalf("answer: %v", a)
	}
	id := heldUnits(w)[30]
	p.Kill()
	unlock()
	w.Mock.Server.ClearFaults()

	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultStatus, OperationID: mockstorelink.OpGetReplenishmentOrder, Status: 503})
	p2 := e2etest.StartServer(t, env)
	if e := ledgerEntries(t, w.StatePath)[key]; e.State != "sending" {
		t.Fatalf("recorded before StoreLink confirmed it: %+v", e)
	}
	if w.Requests(isGetOrder(id)) == 0 {
		t.Fatal("the restart did not ask StoreLink")
	}
	out, _, exit := e2etest.RunCLI(t, env, "doctor")
	if exit != 1 || !strings.Contains(out, "line 1: order "+id+" under idempotency key "+key+" waits until StoreLink confirms it") {
		t.Fatalf("doctor while StoreLink fails: exit %d\n%s", exit, out)
	}

	w.Mock.Server.ClearFaults()
	deadline := time.Now().Add(90 * time.Second)
	for ledgerEntries(t, w.StatePath)[key].State != "raised" && time.Now().Before(deadline) {
		time.Sleep(100 * time.Millisecond)
	}
	if e := ledgerEntries(t, w.StatePath)[key]; e.State != "raised" || e.OrderID != id {
		t.Fatalf("once StoreLink answers, the order is recorded: %+v\n%s", e, p2.Stderr.String())
	}
	judge(t, w)
}

// TestUnsafeJournalIsRefused: a journal others may read or write, or a
// symlink, makes the server exit 2 with the fix, and doctor fails on it.
func TestUnsafeJournalIsRefused(t *testing.T) {
	w := e2etest.NewWorld(t)
	journalPath := w.StatePath + ".outcomes.jsonl"
	if err := os.WriteFile(journalPath, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(journalPath, 0o666); err != nil {
		t.Fatal(err)
	}
	refused := func(env []string, problem, fix string) {
		t.Helper()
		for _, cmd := range [][]string{{"stdio"}, {"serve", "--http", "127.0.0.1:0"}} {
			_, stderr, exit := e2etest.RunCLI(t, env, cmd...)
			var lines []string
			for _, l := range strings.Split(stderr, "\n") {
				if strings.HasPrefix(l, "storelink-mcp: ") {
					lines = append(lines, l)
				}
			}
			if exit != 2 || len(lines) != 1 || !strings.Contains(lines[0], "STATE_JOURNAL_PATH") || !strings.Contains(lines[0], problem) ||
				!strings.Contains(lines[0], "must be a regular file (not a symbolic link) owned by the user the server runs as, with mode 0600") || !strings.Contains(lines[0], "fix: "+fix) {
				t.Fatalf("%v: exit %d, want one line with %q and %q:\n%s", cmd, exit, problem, fix, stderr)
			}
		}
		out, _, exit := e2etest.RunCLI(t, env, "doctor")
		if exit != 1 || !strings.Contains(out, "FAIL  outcome journal: journal: ") || !strings.Contains(out, problem) || !strings.Contains(out, "; fix: "+fix) {
			t.Fatalf("doctor: exit %d, want %q and %q\n%s", exit, problem, fix, out)
		}
	}
	refused(w.Env("ALLOW_WRITES=true"), journalPath+" has mode 0666", "chmod 600 "+journalPath)
	// A leftover journal is replayed even with writes off, so the same rules apply.
	refused(w.Env(), journalPath+" has mode 0666", "chmod 600 "+journalPath)
	if st, _ := os.Stat(journalPath); st.Mode().Perm() != 0o666 {
		t.Fatalf("the refusal changed the file: %v", st.Mode())
	}

	target := filepath.Join(w.Dir, "elsewhere.jsonl")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(w.Dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	refused(w.Env("ALLOW_WRITES=true", "STATE_JOURNAL_PATH="+link), link+" is a symbolic link (to "+target+")", "set STATE_JOURNAL_PATH="+target)
	dangling := filepath.Join(w.Dir, "dangling.jsonl")
	if err := os.Symlink(filepath.Join(w.Dir, "nowhere.jsonl"), dangling); err != nil {
		t.Fatal(err)
	}
	refused(w.Env("ALLOW_WRITES=true", "STATE_JOURNAL_PATH="+dangling), dangling+" is a symbolic link", "remove the link (rm "+dangling)
	if _, err := os.Lstat(filepath.Join(w.Dir, "nowhere.jsonl")); err == nil {
		t.Fatal("the link's target was created")
	}

	// Put right as the fix says, the server starts and serves.
	if err := os.Chmod(journalPath, 0o600); err != nil {
		t.Fatal(err)
	}
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true"))
	p.Call("korral_list_authorized_stores", map[string]any{})
	judge(t, w)
}
