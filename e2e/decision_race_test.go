package e2e_test

import (
	"context"
	"database/sql"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/internal/e2etest"
)

// Approve and reject of one staged order at once, from two processes sharing
// the state database: each person is told what the ledger holds, the ledger
// matches StoreLink, and the losing attempt is audited.

// raceRounds is the rounds per pairing and backend.
const raceRounds = 50

// raceWorld is one backend's setup: the mock, two "machines", the staging
// server, the approvers and direct readers of the ledger and audit trail.
type raceWorld struct {
	w          *e2etest.World
	envA, envB []string
	stage      func(t *testing.T) string
	jana, petr string
	// state reads the ledger state and order id of an approval.
	state func(t *testing.T, approvalID string) (string, string)
	// lateRows counts audit rows of attempts that came after another decision.
	lateRows func(t *testing.T) int
	judge    func(t *testing.T)
}

func newRaceWorld(t *testing.T, postgres bool) *raceWorld {
	t.Helper()
	rw := &raceWorld{w: e2etest.NewWorld(t)}
	mode := []string{"ALLOW_WRITES=true", "WRITE_APPROVAL=required"}
	if postgres {
		dsn := pgDatabase(t)
		rw.envA, _ = replicaEnv(t, rw.w, dsn, mode...)
		rw.envB, _ = replicaEnv(t, rw.w, dsn, mode...)
		rw.state = func(t *testing.T, id string) (string, string) {
			for _, e := range pgLedger(t, dsn) {
				if e.ApprovalID == id {
					return e.State, e.OrderID
				}
			}
			return "", ""
		}
		rw.lateRows = func(t *testing.T) int { return pgLateRows(t, dsn) }
		rw.judge = func(t *testing.T) { pgJudge(t, rw.w, dsn) }
	} else {
		rw.envA = approvalModeEnv(rw.w)
		rw.envB = rw.envA
		rw.state = func(t *testing.T, id string) (string, string) {
			for _, e := range ledgerEntries(t, rw.w.StatePath) {
				if e.ApprovalID == id {
					return e.State, e.OrderID
				}
			}
			return "", ""
		}
		rw.lateRows = func(t *testing.T) int { return sqliteLateRows(t, rw.w.StatePath) }
		rw.judge = func(t *testing.T) { judge(t, rw.w) }
	}
	rw.jana = addApprover(t, rw.envA, "jana", "--stores", "47")
	rw.petr = addApprover(t, rw.envB, "petr", "--stores", "47")
	p := e2etest.StartServer(t, rw.envA)
	n := 0
	rw.stage = func(t *testing.T) string {
		t.Helper()
		// Each round's reason differs, so no round replays an earlier one.
		n++
		reason := fmt.Sprintf("Projected to sell out before close (race round %d).", n)
		d := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "reason", reason)))
		id, _ := d["approval_id"].(string)
		if id == "" {
			t.Fatalf("nothing staged: %v", d)
		}
		return id
	}
	return rw
}

const lateRowsQuery = `SELECT count(*) FROM audit WHERE tool IN ('approvals.approve', 'approvals.reject') AND error_code = 'APPROVAL_ALREADY_DECIDED'`

func sqliteLateRows(t *testing.T, path string) int {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+path+"?mode=ro")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(lateRowsQuery).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func pgLateRows(t *testing.T, dsn string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close(ctx)
	var n int
	if err := c.QueryRow(ctx, lateRowsQuery).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// told is what one person was told: the page's heading and text, or the command's output.
type told struct {
	who, text string
	err       error
}

var heading = regexp.MustCompile(`(?s)<h1>(.*?)</h1>\s*<p>(.*?)</p>`)

// decidePage posts a decision (no t.Fatal: it runs in a goroutine) and returns the outcome page.
func decidePage(c *consoleClient, path string, form url.Values) told {
	form.Set("csrf", c.csrf)
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.c.Do(req)
	if err != nil {
		return told{who: "console", err: err}
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := heading.FindSubmatch(b)
	if m == nil {
		return told{who: "console", err: fmt.Errorf("%d without an outcome: %s", resp.StatusCode, b)}
	}
	return told{who: "console", text: string(m[1]) + " | " + string(m[2])}
}

// decideCLI runs `approvals approve|reject` (no t.Fatal: it runs in a goroutine) and returns its output.
func decideCLI(t *testing.T, env []string, secret, verb, id, name string) told {
	args := []string{"approvals", verb, id, "--approver", name}
	if verb == "reject" {
		args = append(args, "--reason", "Enough butter on the shelf.")
	}
	stdout, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+secret), args...)
	return told{who: "cli", text: fmt.Sprintf("exit %d: %s%s", exit, stdout, stderr)}
}

// checkRound compares what both people were told with the ledger.
func checkRound(t *testing.T, round int, id, state, orderID string, approved, rejected told) {
	t.Helper()
	if approved.err != nil || rejected.err != nil {
		t.Fatalf("round %d: %v / %v", round, approved.err, rejected.err)
	}
	var okA, okR bool
	switch state {
	case "raised":
		// The approver raised it; the rejecter learns that, with the order.
		okA = strings.Contains(approved.text, "Order raised: "+orderID) || strings.Contains(approved.text, "order "+orderID+" raised")
		okR = strings.Contains(rejected.text, orderID) && strings.Contains(rejected.text, "too late") &&
			!strings.Contains(rejected.text, "The order was rejected") && !strings.HasPrefix(rejected.text, "exit 0")
	case "rejected":
		okR = strings.HasPrefix(rejected.text, "Rejected |") || strings.HasPrefix(rejected.text, "exit 0: rejected "+id)
		okA = (strings.Contains(approved.text, "Already rejected") || strings.Contains(approved.text, "rejected by petr")) &&
			!strings.HasPrefix(approved.text, "exit 0")
	}
	if !okA || !okR {
		t.Errorf("round %d (%s): the ledger holds %s %s, but\n  the approver (%s) was told: %s\n  the rejecter (%s) was told: %s",
			round, id, state, orderID, approved.who, approved.text, rejected.who, rejected.text)
	}
}

func TestApproveRejectRaceAcrossProcesses(t *testing.T) {
	for _, backend := range []string{"sqlite", "postgres"} {
		t.Run(backend, func(t *testing.T) {
			rw := newRaceWorld(t, backend == "postgres")
			a, b := startConsoleProc(t, rw.envA), startConsoleProc(t, rw.envB)
			r := &raceRun{rw: rw, janaC: newConsoleClient(t, a.url), petrC: newConsoleClient(t, b.url), won: map[string]int{}, byPair: map[string]int{}}
			if code, _ := r.janaC.login("jana", rw.jana); code != http.StatusOK {
				t.Fatalf("jana's login at A: %d", code)
			}
			if code, _ := r.petrC.login("petr", rw.petr); code != http.StatusOK {
				t.Fatalf("petr's login at B: %d", code)
			}
			t.Run("console_console", r.consoleAgainstConsole)
			t.Run("console_cli", r.consoleAgainstCLI)

			t.Logf("%s: %d rounds, the ledger's outcomes %v", backend, r.rounds, r.byPair)
			if r.won["raised"]+r.won["rejected"] != r.rounds {
				t.Errorf("outcomes %v over %d rounds: every round must end raised or rejected", r.won, r.rounds)
			}
			// Each round's loser is an audit row saying what the winner did.
			if n := rw.lateRows(t); n != r.rounds {
				t.Errorf("%d audit rows of late decisions over %d rounds, want one per round", n, r.rounds)
			}
			rw.judge(t)
		})
	}
}

// raceRun is one backend's rounds: jana approves at replica A, petr rejects at B.
type raceRun struct {
	rw           *raceWorld
	janaC, petrC *consoleClient
	won          map[string]int // the ledger's outcomes
	byPair       map[string]int // the same, by pairing
	rounds       int
}

// open stages an order and opens its page in both consoles.
func (r *raceRun) open(t *testing.T) string {
	id := r.rw.stage(t)
	r.janaC.get("/orders/" + id)
	r.petrC.get("/orders/" + id)
	return id
}

// record counts round i's outcome under pair and checks it.
func (r *raceRun) record(t *testing.T, i int, id, pair string, approved, rejected told) {
	t.Helper()
	state, orderID := r.rw.state(t, id)
	r.won[state]++
	r.byPair[pair+state]++
	r.rounds++
	checkRound(t, i, id, state, orderID, approved, rejected)
}

func (r *raceRun) reject(id string) told {
	return decidePage(r.petrC, "/orders/"+id+"/reject", url.Values{"reason": {"Enough butter on the shelf."}})
}

func (r *raceRun) approve(id string) told {
	return decidePage(r.janaC, "/orders/"+id+"/approve", url.Values{})
}

// consoleAgainstConsole: both consoles decide at the same moment.
func (r *raceRun) consoleAgainstConsole(t *testing.T) {
	for i := range raceRounds {
		id := r.open(t)
		var approved, rejected told
		var wg sync.WaitGroup
		start := make(chan struct{})
		wg.Add(2)
		go func() { defer wg.Done(); <-start; approved = r.approve(id) }()
		go func() { defer wg.Done(); <-start; rejected = r.reject(id) }()
		close(start)
		wg.Wait()
		r.record(t, i, id, "console_console/", approved, rejected)
	}
}

// consoleAgainstCLI: the command takes some 300 ms before it decides, so the
// console's post is delayed 0 to 720 ms and each side wins some rounds.
func (r *raceRun) consoleAgainstCLI(t *testing.T) {
	rw := r.rw
	for i := range raceRounds {
		id := r.open(t)
		delay := time.Duration(i%10) * 80 * time.Millisecond
		var approved, rejected told
		var wg sync.WaitGroup
		wg.Add(2)
		if i%2 == 0 {
			go func() { defer wg.Done(); approved = decideCLI(t, rw.envA, rw.jana, "approve", id, "jana") }()
			go func() { defer wg.Done(); time.Sleep(delay); rejected = r.reject(id) }()
		} else {
			go func() { defer wg.Done(); rejected = decideCLI(t, rw.envB, rw.petr, "reject", id, "petr") }()
			go func() { defer wg.Done(); time.Sleep(delay); approved = r.approve(id) }()
		}
		wg.Wait()
		r.record(t, i, id, fmt.Sprintf("console_cli/cli_%s/", map[bool]string{true: "approves", false: "rejects"}[i%2 == 0]), approved, rejected)
	}
}
