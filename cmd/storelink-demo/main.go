// Command storelink-demo shows the StoreLink MCP server doing its main job.
//
//	storelink-demo                      run the butter scenario, print a readable transcript
//	storelink-demo --transcript FILE    the same run with a fixed clock, as Markdown with
//	                                    full requests and responses (docs/scenarios/)
//	storelink-demo eval                 run every evaluation scenario, print pass/fail
//	storelink-demo version              print the version (also --version)
//
// Each run builds storelink-mcp and drives it over stdio with the scripted
// agent of package eval; the evaluations run their own mock to inspect
// what reached StoreLink.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/korral/storelink/eval"
	"github.com/korral/storelink/mcpserver/buildinfo"
	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mockstorelink"
)

const usage = `storelink-demo: watch the StoreLink MCP server do its main job.

Usage:
  storelink-demo [--now TIME] [--server-bin FILE]
      Run the butter scenario against the embedded demo StoreLink and print a
      readable transcript.
  storelink-demo --transcript FILE [--server-bin FILE]
      The same run with the fixed clock, written as Markdown with full requests
      and responses (docs/scenarios/).
  storelink-demo eval [--run REGEXP] [--scenarios FILE] [--server-bin FILE]
      Run every evaluation scenario and print pass/fail ("eval --help" for more).
  storelink-demo version
      Print the version (also --version).`

const evalSynopsis = `Usage: storelink-demo eval [--run REGEXP] [--scenarios FILE] [--server-bin FILE]

Run the evaluation scenarios (scripted agents and negative controls) against a
mock StoreLink and print pass/fail.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storelink-demo:", err)
		var u usageError
		if errors.As(err, &u) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// usageError is a command-line mistake (exit status 2).
type usageError struct{ error }

// butterScenario is the scenario the demo and the transcript replay.
const butterScenario = "butter-restock"

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "eval" {
		return runEval(ctx, args[1:], stdout, stderr)
	}
	if len(args) > 0 && cliflag.IsVersion(args[0]) {
		_, err := fmt.Fprintln(stdout, buildinfo.Get().String("storelink-demo"))
		return err
	}
	if len(args) > 0 && args[0] == "help" {
		args = []string{"--help"}
	}
	fs := flag.NewFlagSet("storelink-demo", flag.ContinueOnError)
	transcript := fs.String("transcript", "", "write the Markdown transcript of a run with the fixed clock to `FILE`")
	now := fs.String("now", "", "pin the clock to this RFC 3339 time (default: real time; --transcript uses "+fixedNow()+")")
	serverBin := fs.String("server-bin", "", "use this storelink-mcp binary instead of building one")
	rest, err := cliflag.Parse(fs, args, usage, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageError{err}
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("unexpected argument %q (commands: eval, version; see --help)", rest[0])}
	}
	if *transcript != "" {
		if *now != "" && *now != fixedNow() {
			return usageError{errors.New("--transcript always uses the fixed clock; leave out --now")}
		}
		*now = fixedNow()
	}
	if *now != "" {
		if _, err := time.Parse(time.RFC3339, *now); err != nil {
			return usageError{fmt.Errorf("--now %q: want an RFC 3339 time such as %s", *now, fixedNow())}
		}
	}

	dir, err := os.MkdirTemp("", "storelink-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := serverBinary(ctx, *serverBin, dir, stderr)
	if err != nil {
		return err
	}
	d, err := runButter(ctx, bin, dir, *now)
	if err != nil {
		return err
	}
	if *transcript == "" {
		writeText(stdout, d)
		return d.verify()
	}
	if err := d.verify(); err != nil {
		return err
	}
	md := renderMarkdown(d)
	if err := os.WriteFile(*transcript, []byte(md), 0o644); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "wrote %s\n", *transcript)
	return nil
}

// fixedNow is the clock of the transcript: the mock's default instant, a
// Friday afternoon when every store is open.
func fixedNow() string { return mockstorelink.DefaultNow().Format(time.RFC3339) }

// serverBinary returns the given binary, or builds one into dir.
func serverBinary(ctx context.Context, given, dir string, stderr io.Writer) (string, error) {
	if given != "" {
		abs, err := filepath.Abs(given)
		if err != nil {
			return "", err
		}
		return abs, nil
	}
	fmt.Fprintln(stderr, "building storelink-mcp ...")
	bin, err := eval.BuildServer(ctx, dir)
	if err != nil {
		return "", fmt.Errorf("%w\n(run from inside the repository, or pass --server-bin)", err)
	}
	return bin, nil
}

// demoRun is one butter-scenario run and what it left behind.
type demoRun struct {
	scenario eval.Scenario
	model    *eval.ScriptedModel
	run      *eval.Run
	// fixedNow is the pinned clock, "" for real time.
	fixedNow string
	env      []string
	ledger   []eval.LedgerEntry
}

// runButter spawns the server against its embedded mock StoreLink and lets
// the scripted agent work through the butter scenario.
func runButter(ctx context.Context, bin, dir, now string) (*demoRun, error) {
	scenarios, err := eval.Scenarios()
	if err != nil {
		return nil, err
	}
	sc, ok := eval.Find(scenarios, butterScenario)
	if !ok {
		return nil, fmt.Errorf("scenario %s is missing from eval/scenarios.json", butterScenario)
	}
	d := &demoRun{scenario: sc, fixedNow: now}
	// Only what the demo needs: the scenario's settings (writes allowed),
	// a fresh state database, and the pinned clock if any. No
	// UPSTREAM_BASE_URL, so the server starts its embedded StoreLink.
	keys := make([]string, 0, len(sc.Env))
	for k := range sc.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		d.env = append(d.env, k+"="+sc.Env[k])
	}
	if now != "" {
		d.env = append(d.env, "STORELINK_MOCK_NOW="+now)
	}
	statePath := filepath.Join(dir, "state.db")
	env := append([]string{"STATE_DB_PATH=" + statePath, "HOME=" + dir, "LOG_LEVEL=warn"}, d.env...)

	srv, err := eval.StartServer(ctx, bin, env, "storelink-demo")
	if err != nil {
		return nil, err
	}
	d.model, err = eval.NewScriptedModel(sc.Trajectory)
	if err != nil {
		srv.Stop()
		return nil, err
	}
	agent := &eval.Agent{Session: srv.Session, Model: d.model, Replies: sc.BuyerReplies}
	d.run, err = agent.Run(ctx, sc.Request)
	srv.Stop()
	if err != nil {
		return nil, fmt.Errorf("%w\nserver log:\n%s", err, srv.Stderr())
	}
	entries, err := eval.ReadLedger(statePath)
	if err != nil {
		return nil, err
	}
	for _, e := range entries {
		d.ledger = append(d.ledger, e)
	}
	sort.Slice(d.ledger, func(i, j int) bool { return d.ledger[i].IdempotencyKey < d.ledger[j].IdempotencyKey })
	return d, nil
}

// verify fails the demo when the run did not do the job: a failed call, no
// answer, or orders other than the one expected for store 47.
func (d *demoRun) verify() error {
	var problems []string
	for i, s := range d.run.Steps {
		if s.Outcome != "ok" {
			problems = append(problems, fmt.Sprintf("call %d (%s) failed: %s", i+1, s.Call.Name, s.Outcome))
		}
	}
	if !d.run.Answered {
		problems = append(problems, "the agent gave no final answer")
	}
	var stores []string
	for _, e := range d.ledger {
		stores = append(stores, e.StoreID+":"+e.State)
	}
	if len(stores) != 1 || stores[0] != "47:raised" {
		problems = append(problems, fmt.Sprintf("want one raised order for store 47, the ledger holds %v", stores))
	}
	if len(problems) > 0 {
		return errors.New("the butter scenario did not go as it must:\n  " + strings.Join(problems, "\n  "))
	}
	return nil
}

// runEval runs the evaluation scenarios and prints the report.
func runEval(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("storelink-demo eval", flag.ContinueOnError)
	file := fs.String("scenarios", "", "read scenarios from `FILE` instead of the built-in eval/scenarios.json")
	match := fs.String("run", "", "run only scenarios whose name matches this `regexp`")
	serverBin := fs.String("server-bin", "", "use this storelink-mcp binary instead of building one")
	rest, err := cliflag.Parse(fs, args, evalSynopsis, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return usageError{err}
	}
	if len(rest) > 0 {
		return usageError{fmt.Errorf("eval: unexpected argument %q", rest[0])}
	}
	var scenarios []eval.Scenario
	if *file != "" {
		scenarios, err = eval.LoadScenarios(*file)
	} else {
		scenarios, err = eval.Scenarios()
	}
	if err != nil {
		return err
	}
	if *match != "" {
		re, err := regexp.Compile(*match)
		if err != nil {
			return usageError{fmt.Errorf("--run: %w", err)}
		}
		var kept []eval.Scenario
		for _, sc := range scenarios {
			if re.MatchString(sc.Name) {
				kept = append(kept, sc)
			}
		}
		scenarios = kept
	}
	if len(scenarios) == 0 {
		return usageError{errors.New("no scenario to run")}
	}
	dir, err := os.MkdirTemp("", "storelink-eval-bin-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	bin, err := serverBinary(ctx, *serverBin, dir, stderr)
	if err != nil {
		return err
	}
	results := eval.RunAll(ctx, scenarios, bin)
	if !eval.Report(stdout, results) {
		return errors.New("some scenarios did not end as they must (see above)")
	}
	return nil
}
