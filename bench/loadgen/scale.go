package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The scale phase: many MCP clients against `serve --http` (PostgreSQL or
// SQLite), with the echo server as the floor in the same run.

// scaleResult is one run of the scale phase.
type scaleResult struct {
	// State is "PostgreSQL" or "SQLite".
	State   string `json:"state"`
	Clients int    `json:"clients"`
	// Floor is the echo server's echo, Trivial storelink-mcp's
	// korral_list_authorized_stores, Risk its korral_check_stock_risk for
	// the butter at store 47, each with the same clients; End.RSSKB of each
	// is the process's resident set after its calls.
	Floor   loadResult `json:"floor_echo"`
	Trivial loadResult `json:"trivial"`
	Risk    loadResult `json:"risk_check"`
}

// scaleFigure names one of the phase's three measurements.
type scaleFigure struct {
	label string
	get   func(scaleResult) loadResult
}

var scaleFigures = []scaleFigure{
	{"bare go-sdk v1.8.0 echo server, `echo` (the floor)", func(s scaleResult) loadResult { return s.Floor }},
	{"storelink-mcp, `korral_list_authorized_stores`", func(s scaleResult) loadResult { return s.Trivial }},
	{"storelink-mcp, `korral_check_stock_risk` (butter at 47)", func(s scaleResult) loadResult { return s.Risk }},
}

// scaleTrivialTarget is the target: the trivial call at least this
// share of the floor's calls per second.
const scaleTrivialTarget = 0.8

func echoParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"message": "hello"}}
}

func trivialParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "korral_list_authorized_stores", Arguments: map[string]any{}}
}

// scaleRun measures the floor, then storelink-mcp's trivial call, then its
// risk check, each with c.scaleClients sessions and c.scaleCalls calls
// after a warm-up, reading each server's memory when its calls are done.
func scaleRun(ctx context.Context, c config, hopts *httpOptions, dir string, log func(string, ...any)) (*scaleResult, error) {
	res := &scaleResult{State: "SQLite", Clients: c.scaleClients}
	if c.databaseURL != "" {
		res.State = "PostgreSQL"
	}
	log("  HTTP at scale: %d clients, %d calls each of the floor's echo, the trivial call and the risk check (%s state)",
		c.scaleClients, c.scaleCalls, res.State)
	sdir := filepath.Join(dir, "scale")
	if err := os.MkdirAll(sdir, 0o700); err != nil {
		return nil, err
	}
	tokens := filepath.Join(sdir, "floor-tokens")
	if err := os.WriteFile(tokens, []byte("loadgen "+httpToken+"\n"), 0o600); err != nil {
		return nil, err
	}
	floor, err := startHTTP(ctx, c.echoServer, sdir, serverEnv(sdir),
		httpOptions{Args: []string{"--http", "{addr}", "--stateless", "--token-file", tokens}}, c.scaleClients)
	if err != nil {
		return nil, fmt.Errorf("echo server: %w", err)
	}
	floor.params = echoParams
	res.Floor, err = warmAndDrive(ctx, floor, c.scaleClients, c.scaleCalls)
	floor.close()
	if err != nil {
		return nil, fmt.Errorf("echo server: %w", err)
	}

	mk, err := startMock(ctx, c.mock, sdir, false, "")
	if err != nil {
		return nil, err
	}
	defer mk.p.stop(5*time.Second, true)
	env := serverEnv(sdir, "UPSTREAM_BASE_URL="+mk.url, "STORELINK_KEYRING_FILE="+mk.keyring)
	if c.databaseURL != "" {
		env = append(withoutVar(env, "STATE_DB_PATH"), "STATE_DATABASE_URL="+c.databaseURL)
	}
	ho := httpOptions{Args: strings.Fields(c.scaleHTTPArgs)}
	if hopts != nil {
		ho.TokenEnv = hopts.TokenEnv
	}
	s, err := startHTTP(ctx, c.server, sdir, env, ho, c.scaleClients)
	if err != nil {
		return nil, err
	}
	defer s.close()
	s.params = trivialParams
	if res.Trivial, err = warmAndDrive(ctx, s, c.scaleClients, c.scaleCalls); err != nil {
		return nil, fmt.Errorf("trivial call: %w", err)
	}
	s.params = butter
	if res.Risk, err = warmAndDrive(ctx, s, c.scaleClients, c.scaleCalls); err != nil {
		return nil, fmt.Errorf("risk check: %w", err)
	}
	return res, nil
}

// warmAndDrive sends each session a few unmeasured calls, then drives.
func warmAndDrive(ctx context.Context, s *mcpServer, clients, calls int) (loadResult, error) {
	if err := warmUp(ctx, s, 5); err != nil {
		return loadResult{}, err
	}
	return drive(ctx, s, clients, calls)
}

// scaleOf is a run's scale result, if it has one.
func scaleOf(run runResult) (scaleResult, bool) {
	if run.Scale == nil {
		return scaleResult{}, false
	}
	return *run.Scale, true
}

// firstScale is the first run's scale result, if any run has one.
func (r *report) firstScale() (scaleResult, bool) {
	for _, run := range r.Runs {
		if s, ok := scaleOf(run); ok {
			return s, true
		}
	}
	return scaleResult{}, false
}

// scaleTrivialRatio is the trivial call's calls/s over the floor's, within
// each run: the figure of the target scaleTrivialTarget.
func (r *report) scaleTrivialRatio() spread {
	return r.over(func(x runResult) (float64, bool) {
		s, ok := scaleOf(x)
		if !ok || s.Floor.Latency.CallsPerSec == 0 {
			return 0, false
		}
		return s.Trivial.Latency.CallsPerSec / s.Floor.Latency.CallsPerSec, true
	})
}

// scaleMarkdown renders the phase: each figure over the runs, beside the
// floor's and as a ratio to it within each run, and the target.
func (r *report) scaleMarkdown(p func(string, ...any)) {
	first, ok := r.firstScale()
	if !ok {
		return
	}
	over := func(f func(scaleResult) (float64, bool)) spread {
		return r.over(func(x runResult) (float64, bool) {
			s, ok := scaleOf(x)
			if !ok {
				return 0, false
			}
			return f(s)
		})
	}
	ratio := func(get func(scaleResult) loadResult, f func(loadResult) float64) spread {
		return over(func(s scaleResult) (float64, bool) {
			floor := f(s.Floor)
			if floor == 0 {
				return 0, false
			}
			return f(get(s)) / floor, true
		})
	}
	p("## The remote deployment at scale: %d MCP clients over Streamable HTTP", first.Clients)
	p("")
	p("Each client is a go-sdk client session with its own HTTP client and a bearer token. The floor is `bench/echoserver --http --stateless` (a bare go-sdk server, a token check in front); storelink-mcp runs `%s` with its state on %s, against a mockstorelink process (request validation only). Every figure is %v calls from %d clients after 5 warm-up calls per client, the floor first, in the same run; RSS is VmRSS from /proc/PID/status when the calls are done (for storelink-mcp, after the trivial calls and again after the risk checks). Ratios are within each run.",
		r.Config["scale_http_args"], first.State, r.Config["scale_calls"], first.Clients)
	p("")
	p("| Server, call | Calls/s | × floor | p50 ms | × floor | p99 ms | × floor | Server CPU ms/call | RSS after, MiB | Errors |")
	p("|---|---|---|---|---|---|---|---|---|---|")
	for i, fig := range scaleFigures {
		v := func(f func(loadResult) float64, d int) string {
			return over(func(s scaleResult) (float64, bool) { return f(fig.get(s)), true }).format(d)
		}
		x := func(f func(loadResult) float64) string {
			if i == 0 {
				return "1.00x"
			}
			return ratio(fig.get, f).format(2) + "x"
		}
		rate := func(l loadResult) float64 { return l.Latency.CallsPerSec }
		p50 := func(l loadResult) float64 { return l.Latency.P50MS }
		p99 := func(l loadResult) float64 { return l.Latency.P99MS }
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", fig.label,
			v(rate, 0), x(rate), v(p50, 2), x(p50), v(p99, 2), x(p99),
			v(func(l loadResult) float64 { return l.CPUPerCallMS }, 3),
			v(func(l loadResult) float64 { return mb(l.End.RSSKB) }, 1),
			v(func(l loadResult) float64 { return float64(l.Latency.Errors) }, 0))
	}
	t := r.scaleTrivialRatio()
	p("")
	p("| Target | Measured | Met |")
	p("|---|---|---|")
	p("| Trivial call with %d clients: at least %.1fx the floor's calls/s | %sx | %s |", first.Clients, scaleTrivialTarget, t.format(2), met(t.Median >= scaleTrivialTarget))
	p("")
}
