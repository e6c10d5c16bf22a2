package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// phaseNames are the phases --only may name, in the order a run takes them.
var phaseNames = []string{"cold", "stdio", "external", "http", "writes", "scale", "distance", "telemetry", "mocks", "cpu"}

// config is the command line.
type config struct {
	server    string
	release   string
	mock      string
	prism     string
	wrk       string
	spec      string
	out       string
	goBench   string
	runs      int
	cold      int
	seqCalls  int
	callers   int
	conCalls  int
	httpCalls int
	wrkDur    time.Duration
	httpArgs  string
	tokenEnv  string
	quick     bool
	serverEnv []string
	only      string
	phase     func(string) bool
	loadStart string

	// The write path: confirmed orders over HTTP, bounded by count and time;
	// databaseURL is the PostgreSQL the two-replica phase shares.
	writeOrders int
	writeDur    time.Duration
	databaseURL string

	// The remote deployment at scale (scale.go): scaleClients sessions
	// against scaleHTTPArgs, with echoServer over HTTP as the floor.
	echoServer    string
	scaleClients  int
	scaleCalls    int
	scaleHTTPArgs string

	// StoreLink at a distance (distance.go): distanceCalls measured calls
	// a row (the sweep half), the whole phase bounded by distanceDur.
	distanceCalls int
	distanceDur   time.Duration

	// The server's CPU per answer beside the echo server (cpu.go):
	// cpuRounds alternating rounds of cpuCalls calls from 1 caller and
	// twice as many from cpuCallers.
	cpuRounds int
	cpuCalls  int
}

// parseFlags reads the command line into a config.
func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("loadgen", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.server, "server", "", "storelink-mcp `binary` (required)")
	fs.StringVar(&c.release, "release-server", "", "storelink-mcp `binary` built as the release is (-tags nodemo, no embedded mock); empty skips its cold start")
	fs.StringVar(&c.mock, "mock", "", "mockstorelink `binary` (required)")
	fs.StringVar(&c.prism, "prism", "", "prism `binary`; empty skips the Prism comparison")
	fs.StringVar(&c.wrk, "wrk", "wrk", "wrk `binary`; empty skips the mock throughput comparison")
	fs.StringVar(&c.spec, "spec", "openapi/storelink.yaml", "the contract Prism serves")
	fs.StringVar(&c.out, "out", "bench/out", "`directory` for results.md and results.json")
	fs.StringVar(&c.goBench, "gobench", "", "`file` with go test -bench output to include")
	fs.IntVar(&c.runs, "runs", 3, "repetitions of every measurement")
	fs.IntVar(&c.cold, "cold", 30, "cold starts per run")
	fs.IntVar(&c.seqCalls, "seq-calls", 2000, "sequential stdio calls per run")
	fs.IntVar(&c.callers, "callers", 8, "concurrent callers")
	fs.IntVar(&c.conCalls, "concurrent-calls", 10000, "calls per run with concurrent callers (also the memory-growth window)")
	fs.IntVar(&c.httpCalls, "http-calls", 5000, "calls per run over HTTP")
	fs.IntVar(&c.writeOrders, "write-orders", 2000, "confirmed orders per write phase over HTTP")
	fs.DurationVar(&c.writeDur, "write-duration", 60*time.Second, "upper bound on each write phase's time")
	fs.StringVar(&c.databaseURL, "database-url", "", "PostgreSQL `URL` the two replicas of the write phase share; empty skips that phase")
	fs.DurationVar(&c.wrkDur, "wrk-duration", 5*time.Second, "how long wrk drives each mock")
	fs.StringVar(&c.httpArgs, "http-args", "serve --http {addr}", "server arguments for the HTTP transport ({addr} = listen address)")
	fs.StringVar(&c.tokenEnv, "http-token-env", "", "variable naming the bearer token file for HTTP; default: detected from the server's help")
	fs.StringVar(&c.echoServer, "echo-server", "", "the bare go-sdk echo server `binary` (bench/echoserver), the floor of the scale phase; empty skips that phase")
	fs.IntVar(&c.scaleClients, "scale-clients", 50, "concurrent MCP clients of the scale phase")
	fs.IntVar(&c.scaleCalls, "scale-calls", 10000, "calls per figure of the scale phase")
	fs.StringVar(&c.scaleHTTPArgs, "scale-http-args", "serve --http {addr} --stateless", "server arguments of the scale phase ({addr} = listen address)")
	fs.IntVar(&c.distanceCalls, "distance-calls", 20, "measured calls of each row of the distance phase (the sweep makes half)")
	fs.DurationVar(&c.distanceDur, "distance-duration", 4*time.Minute, "upper bound on the distance phase's time in each run (every row still makes 3 calls)")
	fs.IntVar(&c.cpuRounds, "cpu-rounds", 5, "alternating rounds of the cpu phase in each run")
	fs.IntVar(&c.cpuCalls, "cpu-calls", 300, "calls from 1 caller in each round of the cpu phase (twice as many follow from 8 callers)")
	fs.BoolVar(&c.quick, "quick", false, "one short run, for trying the driver out")
	fs.Var((*envList)(&c.serverEnv), "server-env", "extra `KEY=VALUE` for every server process (repeatable), e.g. PROFILE_DIR for bench/profiledmcp")
	fs.StringVar(&c.loadStart, "load-before", "", "load average when the whole benchmark began (default: when this driver starts)")
	fs.StringVar(&c.only, "only", "", "run only these comma-separated phases: cold, stdio, external, http, writes, scale, distance, telemetry, mocks, cpu (default all)")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.server == "" || c.mock == "" {
		return c, errors.New("--server and --mock are required")
	}
	phases := map[string]bool{}
	for _, ph := range strings.Split(c.only, ",") {
		if ph = strings.TrimSpace(ph); ph != "" {
			if !slices.Contains(phaseNames, ph) {
				return c, fmt.Errorf("--only: unknown phase %q", ph)
			}
			phases[ph] = true
		}
	}
	c.phase = func(name string) bool { return len(phases) == 0 || phases[name] }
	if c.quick {
		c.shorten(fs)
	}
	return c, nil
}

// shorten sizes --quick's one short run; an explicit size of the write,
// distance or cpu phase wins over it.
func (c *config) shorten(fs *flag.FlagSet) {
	orders, dur := c.writeOrders, c.writeDur
	dcalls, ddur := c.distanceCalls, c.distanceDur
	rounds, calls := c.cpuRounds, c.cpuCalls
	c.runs, c.cold, c.seqCalls, c.conCalls, c.httpCalls, c.wrkDur = 1, 5, 200, 1000, 500, 2*time.Second
	c.writeOrders, c.writeDur = 300, 30*time.Second
	c.scaleCalls = 1000
	c.distanceCalls, c.distanceDur = 6, 2*time.Minute
	c.cpuRounds, c.cpuCalls = 2, 100
	fs.Visit(func(f *flag.Flag) {
		switch f.Name {
		case "write-orders":
			c.writeOrders = orders
		case "write-duration":
			c.writeDur = dur
		case "distance-calls":
			c.distanceCalls = dcalls
		case "distance-duration":
			c.distanceDur = ddur
		case "cpu-rounds":
			c.cpuRounds = rounds
		case "cpu-calls":
			c.cpuCalls = calls
		}
	})
}

// envList is a repeatable KEY=VALUE flag.
type envList []string

func (e *envList) String() string { return strings.Join(*e, " ") }

func (e *envList) Set(v string) error {
	if !strings.Contains(v, "=") {
		return fmt.Errorf("%q: want KEY=VALUE", v)
	}
	*e = append(*e, v)
	return nil
}

// public is the configuration as the report shows it.
func (c config) public() map[string]any {
	return map[string]any{
		"runs": c.runs, "cold_starts_per_run": c.cold, "sequential_calls": c.seqCalls,
		"callers": c.callers, "concurrent_calls": c.conCalls, "http_calls": c.httpCalls,
		"write_orders": c.writeOrders, "write_duration": c.writeDur.String(),
		"wrk":         fmt.Sprintf("-t2 -c10 -d%s --latency", c.wrkDur),
		"scale_calls": c.scaleCalls, "scale_http_args": c.scaleHTTPArgs,
		"distance_calls": c.distanceCalls, "distance_duration": c.distanceDur.String(),
		"cpu_rounds": c.cpuRounds, "cpu_calls": c.cpuCalls,
	}
}
