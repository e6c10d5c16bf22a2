package eval

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/korral/storelink/mockstorelink"
)

// Finding is the verdict of one check.
type Finding struct {
	Check  string
	Pass   bool
	Detail string
}

// Result is one scenario's run and verdicts.
type Result struct {
	Scenario Scenario
	Run      *Run
	// Err is a harness failure (the world or the server did not start, the
	// script broke); the scenario then fails.
	Err           error
	Findings      []Finding
	NewOrders     []mockstorelink.Order
	LedgerChanges []LedgerEntry
	// ServerLog is the server's stderr, for diagnosing a failure.
	ServerLog string
}

// Passed reports whether every check passed.
func (r *Result) Passed() bool {
	if r.Err != nil {
		return false
	}
	for _, f := range r.Findings {
		if !f.Pass {
			return false
		}
	}
	return true
}

// AsExpected reports whether the scenario ended as it must: a normal
// scenario passes, a negative control fails its checks (not the harness).
func (r *Result) AsExpected() bool {
	if !r.Scenario.NegativeControl {
		return r.Passed()
	}
	if r.Err != nil {
		return false
	}
	failed := map[string]bool{}
	for _, f := range r.Findings {
		if !f.Pass {
			failed[f.Check] = true
		}
	}
	for _, name := range r.Scenario.MustFail {
		if !failed[name] {
			return false
		}
	}
	return true
}

// Failures are the failed checks, one line each.
func (r *Result) Failures() []string {
	var out []string
	if r.Err != nil {
		out = append(out, "harness: "+r.Err.Error())
	}
	for _, f := range r.Findings {
		if !f.Pass {
			out = append(out, f.Check+": "+f.Detail)
		}
	}
	return out
}

// RunScenario runs one scenario against a fresh mock StoreLink, a fresh state
// database and a fresh server process spawned from bin, then checks it.
func RunScenario(ctx context.Context, sc Scenario, bin string) *Result {
	res := &Result{Scenario: sc}
	dir, err := os.MkdirTemp("", "storelink-eval-")
	if err != nil {
		res.Err = err
		return res
	}
	defer os.RemoveAll(dir)
	world, err := NewWorld(dir)
	if err != nil {
		res.Err = err
		return res
	}
	defer world.Close()

	env := world.Env()
	if sc.Approval {
		env = append(env, world.ApprovalEnv()...)
	}
	keys := make([]string, 0, len(sc.Env))
	for k := range sc.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		env = append(env, k+"="+sc.Env[k])
	}

	ordersBefore := world.Mock.Server.Orders()
	ledgerBefore, err := ReadLedger(world.StatePath)
	if err != nil {
		res.Err = err
		return res
	}
	srv, err := StartServer(ctx, bin, env, "storelink-eval")
	if err != nil {
		res.Err = err
		return res
	}
	model, err := NewScriptedModel(sc.Trajectory)
	if err != nil {
		srv.Stop()
		res.Err = err
		return res
	}
	agent := &Agent{Session: srv.Session, Model: model, Replies: sc.BuyerReplies, BeforeCall: func(_ context.Context, n int, _ ToolCall) error {
		for _, e := range sc.Events {
			if e.BeforeCall == n+1 {
				applyEvent(world.Mock.Server, e)
			}
		}
		return nil
	}}
	res.Run, res.Err = agent.Run(ctx, sc.Request)
	// The ledger is read once the server has exited, so every write it
	// made is on disk.
	srv.Stop()
	res.ServerLog = srv.Stderr()
	if res.Err != nil {
		return res
	}
	res.NewOrders = newOrders(ordersBefore, world.Mock.Server.Orders())
	ledgerAfter, err := ReadLedger(world.StatePath)
	if err != nil {
		res.Err = err
		return res
	}
	res.LedgerChanges = ledgerChanges(ledgerBefore, ledgerAfter)
	res.Findings = check(sc.Expect, res, world.Mock.Server)
	return res
}

func applyEvent(s *mockstorelink.Server, e Event) {
	if e.RotateKey != "" {
		s.RotateKey(e.RotateKey)
	}
	if e.ClearFaults {
		s.ClearFaults()
	}
	if len(e.Faults) > 0 {
		s.SetFaults(e.Faults...)
	}
}

func newOrders(before, after []mockstorelink.Order) []mockstorelink.Order {
	seen := map[string]bool{}
	for _, o := range before {
		seen[o.OrderID] = true
	}
	var out []mockstorelink.Order
	for _, o := range after {
		if !seen[o.OrderID] {
			out = append(out, o)
		}
	}
	return out
}

// check applies the expectations to what happened.
func check(x Expect, res *Result, mock *mockstorelink.Server) []Finding {
	var out []Finding
	add := func(name string, pass bool, format string, args ...any) {
		out = append(out, Finding{Check: name, Pass: pass, Detail: fmt.Sprintf(format, args...)})
	}
	run := res.Run
	called := map[string]int{}
	seen := map[string]bool{}
	for _, s := range run.Steps {
		called[s.Call.Name]++
		seen[s.Call.Name+":"+s.Outcome] = true
	}

	add("final answer", run.Answered, "the agent stopped without a final answer")
	for _, t := range x.MustCall {
		add("must call "+t, called[t] > 0, "never called")
	}
	for _, t := range x.MustNotCall {
		add("must not call "+t, called[t] == 0, "called %d time(s)", called[t])
	}
	for _, o := range x.Outcomes {
		add("outcome "+o, seen[o], "did not occur; got %s", strings.Join(outcomeList(run), ", "))
	}
	var surprises []string
	for _, s := range run.Steps {
		o := s.Call.Name + ":" + s.Outcome
		if s.Outcome != "ok" && !slices.Contains(x.Outcomes, o) && !slices.Contains(surprises, o) {
			surprises = append(surprises, o)
		}
	}
	add("no unexpected errors", len(surprises) == 0, "%s", strings.Join(surprises, ", "))

	var gotOrders []string
	for _, o := range res.NewOrders {
		gotOrders = append(gotOrders, fmt.Sprintf("store %s sku %s %d units", o.StoreID, o.SKU, o.QuantityUnits))
	}
	var wantOrders []string
	for _, o := range x.Orders {
		wantOrders = append(wantOrders, fmt.Sprintf("store %s sku %s %d units", o.StoreID, o.SKU, o.QuantityUnits))
	}
	add("orders at StoreLink", sameSet(gotOrders, wantOrders), "want [%s], got [%s]", strings.Join(wantOrders, "; "), strings.Join(gotOrders, "; "))

	var gotLedger, wantLedger []string
	for _, e := range res.LedgerChanges {
		gotLedger = append(gotLedger, fmt.Sprintf("store %s sku %s %d units %s", e.StoreID, e.SKU, e.QuantityUnits, e.State))
	}
	for _, e := range x.Ledger {
		wantLedger = append(wantLedger, fmt.Sprintf("store %s sku %s %d units %s", e.StoreID, e.SKU, e.QuantityUnits, e.State))
	}
	add("ledger", sameSet(gotLedger, wantLedger), "want [%s], got [%s]", strings.Join(wantLedger, "; "), strings.Join(gotLedger, "; "))

	wantPosts := len(x.Orders)
	if x.UpstreamPosts != nil {
		wantPosts = *x.UpstreamPosts
	}
	posts := mock.RequestCount(func(r mockstorelink.RequestRecord) bool {
		return r.OperationID == mockstorelink.OpCreateReplenishmentOrder
	})
	add("order POSTs", posts == wantPosts, "want %d, got %d", wantPosts, posts)

	if x.MaxUpstreamRequests != nil {
		n := mock.RequestCount(func(mockstorelink.RequestRecord) bool { return true })
		add("upstream requests", n <= *x.MaxUpstreamRequests, "want at most %d, got %d", *x.MaxUpstreamRequests, n)
	}
	for _, id := range x.UntouchedStores {
		n := mock.RequestCount(func(r mockstorelink.RequestRecord) bool { return r.StoreID == id })
		add("no request for store "+id, n == 0, "%d request(s) reached StoreLink", n)
	}

	answer := strings.ToLower(run.Answer)
	for _, m := range x.AnswerMentions {
		add("answer mentions "+m, strings.Contains(answer, strings.ToLower(m)), "answer: %q", run.Answer)
	}
	for _, m := range x.AnswerOmits {
		add("answer omits "+m, !strings.Contains(answer, strings.ToLower(m)), "answer: %q", run.Answer)
	}
	return out
}

func outcomeList(run *Run) []string {
	out := []string{}
	for _, s := range run.Steps {
		out = append(out, s.Call.Name+":"+s.Outcome)
	}
	return out
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// RunAll runs the scenarios one after another.
func RunAll(ctx context.Context, scenarios []Scenario, bin string) []*Result {
	out := make([]*Result, 0, len(scenarios))
	for _, sc := range scenarios {
		out = append(out, RunScenario(ctx, sc, bin))
	}
	return out
}

// Report writes the pass/fail table, failure reasons and outcome counts,
// and returns whether every scenario ended as it must.
func Report(w io.Writer, results []*Result) bool {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "SCENARIO\tKIND\tCHECKS\tRESULT\tVERDICT")
	allGood := true
	normal, normalPass, controls, controlsFail := 0, 0, 0, 0
	for _, r := range results {
		kind, result, verdict := "scenario", "pass", "ok"
		if r.Scenario.NegativeControl {
			kind = "control"
			controls++
		} else {
			normal++
		}
		if !r.Passed() {
			result = "FAIL"
		}
		if r.Err != nil {
			result = "ERROR"
		}
		switch {
		case r.AsExpected() && r.Scenario.NegativeControl:
			controlsFail++
			verdict = "ok (must fail)"
		case r.AsExpected():
			normalPass++
		default:
			verdict = "WRONG"
			allGood = false
		}
		passed := 0
		for _, f := range r.Findings {
			if f.Pass {
				passed++
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s\n", r.Scenario.Name, kind, passed, len(r.Findings), result, verdict)
	}
	tw.Flush()

	for _, r := range results {
		if f := r.Failures(); len(f) > 0 {
			label := "failed"
			if r.AsExpected() {
				label = "failed, as a negative control must"
			}
			fmt.Fprintf(w, "\n%s (%s):\n", r.Scenario.Name, label)
			for _, line := range f {
				fmt.Fprintf(w, "  - %s\n", line)
			}
		}
	}

	fmt.Fprintln(w)
	writeOutcomeTable(w, results)
	fmt.Fprintf(w, "\n%d/%d scenarios pass; %d/%d negative controls fail as they must.\n", normalPass, normal, controlsFail, controls)
	return allGood
}

// writeOutcomeTable counts, per tool, the calls and each outcome across all
// runs.
func writeOutcomeTable(w io.Writer, results []*Result) {
	calls := map[string]int{}
	outcomes := map[string]map[string]int{}
	for _, r := range results {
		if r.Run == nil {
			continue
		}
		for _, s := range r.Run.Steps {
			calls[s.Call.Name]++
			if outcomes[s.Call.Name] == nil {
				outcomes[s.Call.Name] = map[string]int{}
			}
			outcomes[s.Call.Name][s.Outcome]++
		}
	}
	tools := make([]string, 0, len(calls))
	for t := range calls {
		tools = append(tools, t)
	}
	sort.Strings(tools)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "TOOL\tCALLS\tOK\tERRORS")
	for _, t := range tools {
		var errs []string
		codes := make([]string, 0, len(outcomes[t]))
		for c := range outcomes[t] {
			if c != "ok" {
				codes = append(codes, c)
			}
		}
		sort.Strings(codes)
		for _, c := range codes {
			errs = append(errs, fmt.Sprintf("%s %d", c, outcomes[t][c]))
		}
		e := strings.Join(errs, ", ")
		if e == "" {
			e = "-"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%s\n", t, calls[t], outcomes[t]["ok"], e)
	}
	tw.Flush()
}
