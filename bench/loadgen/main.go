// Command loadgen runs the storelink-mcp and mockstorelink binaries and
// writes the benchmark tables of docs/benchmarks.md. Its processes listen
// on 127.0.0.1 only and are ended by PID. Targets are reported, never
// asserted.
package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	killAll()
	if err != nil {
		fmt.Fprintln(os.Stderr, "loadgen:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parseFlags(args, stderr)
	if err != nil {
		return err
	}
	extraServerEnv = c.serverEnv
	if err := os.MkdirAll(c.out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "storelink-bench-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)

	rep := &report{Machine: describeMachine(), Config: c.public(), Started: time.Now().UTC()}
	if c.loadStart != "" {
		rep.Machine.LoadBefore = c.loadStart
	}
	log := func(format string, a ...any) { fmt.Fprintf(stderr, "loadgen: "+format+"\n", a...) }
	log("1-minute load average at the start: %s", load1(rep.Machine.LoadBefore))

	hopts, httpNote := detectHTTP(c)
	rep.HTTPNote = httpNote
	log("HTTP transport: %s", httpNote)

	for i := range c.runs {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		log("run %d of %d", i+1, c.runs)
		dir := filepath.Join(work, fmt.Sprintf("run%d", i+1))
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return err
		}
		r, err := oneRun(ctx, c, hopts, dir, log)
		if err != nil {
			return fmt.Errorf("run %d: %w", i+1, err)
		}
		rep.Runs = append(rep.Runs, r)
	}
	if c.goBench != "" {
		if rep.goBench, err = readGoBench(c.goBench); err != nil {
			return err
		}
	}
	rep.Machine.LoadAfter = loadavg()
	rep.Finished = time.Now().UTC()
	log("1-minute load average at the end: %s", load1(rep.Machine.LoadAfter))
	return writeReport(rep, c.out, stdout)
}

// writeReport writes results.md and results.json to out, and the markdown
// to stdout.
func writeReport(rep *report, out string, stdout io.Writer) error {
	md := rep.markdown()
	if err := os.WriteFile(filepath.Join(out, "results.md"), []byte(md), 0o644); err != nil {
		return err
	}
	raw, _ := json.MarshalIndent(rep, "", "  ")
	if err := os.WriteFile(filepath.Join(out, "results.json"), append(raw, '\n'), 0o644); err != nil {
		return err
	}
	_, err := io.WriteString(stdout, md)
	return err
}

// runResult is everything measured in one repetition.
type runResult struct {
	ColdStartMS []float64 `json:"cold_start_ms,omitempty"`
	// ColdStartExternalMS is the same with UPSTREAM_BASE_URL set.
	ColdStartExternalMS []float64 `json:"cold_start_external_ms,omitempty"`
	// ColdStartReleaseMS is the same for the release binary (-tags nodemo).
	ColdStartReleaseMS []float64 `json:"cold_start_release_ms,omitempty"`
	// InitMS is each package's initialisation clock time (median of
	// GODEBUG=inittrace=1 over initTraceRuns starts of `version`).
	InitMS map[string]float64 `json:"init_ms,omitempty"`
	// InitReleaseMS is the same for the release binary.
	InitReleaseMS map[string]float64 `json:"init_release_ms,omitempty"`
	Tools         *toolsInfo         `json:"tools,omitempty"`
	// Embedded is the binary with its embedded mock: Seq sequential, Conc
	// concurrent.
	EmbeddedIdle *memory     `json:"embedded_idle,omitempty"`
	Seq          *loadResult `json:"stdio_sequential,omitempty"`
	Conc         *loadResult `json:"stdio_concurrent,omitempty"`
	// External is the server against a separate mockstorelink process.
	External *loadResult `json:"stdio_external_mock,omitempty"`
	HTTP     *loadResult `json:"http,omitempty"`
	// Writes is the write phase over HTTP.
	Writes []writeResult `json:"http_writes,omitempty"`
	// Scale is the remote deployment at scale, beside the echo floor.
	Scale *scaleResult `json:"http_scale,omitempty"`
	// Mocks maps a mock's name to its wrk result.
	Mocks map[string]wrkResult `json:"mocks,omitempty"`
	// Telemetry is the cost of metrics and tracing (telemetry.go).
	Telemetry []telemetryResult `json:"telemetry,omitempty"`
	// Distance is the distance phase (distance.go).
	Distance *distanceResult `json:"distance,omitempty"`
	// CPU is the cpu phase (cpu.go).
	CPU *cpuResult `json:"cpu,omitempty"`
}

const (
	mockFull   = "mockstorelink (request + response validation)"
	mockNoResp = "mockstorelink (request validation only)"
	mockPrism  = "Prism 5.16.0 (-v error)"
)

// oneRun takes one repetition of every phase the command line selects.
func oneRun(ctx context.Context, c config, hopts *httpOptions, dir string, log func(string, ...any)) (runResult, error) {
	var r runResult
	if c.phase("cold") {
		if err := coldRun(ctx, c, dir, &r, log); err != nil {
			return r, err
		}
	}
	if c.phase("stdio") {
		if err := embeddedRun(ctx, c, dir, &r, log); err != nil {
			return r, err
		}
	}
	if c.phase("external") {
		log("  stdio, external mock: %d calls with %d callers", c.conCalls, c.callers)
		ext, err := externalRun(ctx, c, dir)
		if err != nil {
			return r, fmt.Errorf("stdio with external mock: %w", err)
		}
		r.External = &ext
	}
	if hopts != nil && c.phase("http") {
		log("  HTTP: %d calls over %d sessions", c.httpCalls, c.callers)
		h, err := httpRun(ctx, c, *hopts, dir)
		if err != nil {
			return r, fmt.Errorf("http: %w", err)
		}
		r.HTTP = &h
	}
	if c.phase("writes") {
		if err := writesRun(ctx, c, hopts, dir, &r, log); err != nil {
			return r, err
		}
	}
	var err error
	if c.echoServer != "" && hopts != nil && c.phase("scale") {
		if r.Scale, err = scaleRun(ctx, c, hopts, dir, log); err != nil {
			return r, fmt.Errorf("scale: %w", err)
		}
	}
	if c.phase("distance") {
		if r.Distance, err = distanceRun(ctx, c, dir, log); err != nil {
			return r, fmt.Errorf("distance: %w", err)
		}
	}
	if hopts != nil && c.phase("telemetry") {
		if r.Telemetry, err = telemetryRun(ctx, c, *hopts, dir, log); err != nil {
			return r, err
		}
	}
	if c.wrk != "" && c.phase("mocks") {
		if r.Mocks, err = mocksRun(ctx, c, dir, log); err != nil {
			return r, err
		}
	}
	if c.phase("cpu") {
		if c.echoServer == "" {
			log("  cpu: skipped, no --echo-server")
		} else if r.CPU, err = cpuRun(ctx, c, dir, log); err != nil {
			return r, fmt.Errorf("cpu: %w", err)
		}
	}
	return r, nil
}

// coldRun times cold starts of each build, and the package initialisation.
func coldRun(ctx context.Context, c config, dir string, r *runResult, log func(string, ...any)) error {
	log("  cold start x%d, embedded mock", c.cold)
	durs, info, err := coldStarts(ctx, c.server, dir, c.cold, serverEnv(dir))
	if err != nil {
		return fmt.Errorf("cold start: %w", err)
	}
	r.Tools = &info
	for _, d := range durs {
		r.ColdStartMS = append(r.ColdStartMS, msf(d))
	}
	log("  cold start x%d, external mock", c.cold)
	if r.ColdStartExternalMS, err = coldStartsExternal(ctx, c, c.server, dir); err != nil {
		return fmt.Errorf("cold start with external mock: %w", err)
	}
	if c.release != "" {
		log("  cold start x%d, release build, external mock", c.cold)
		if r.ColdStartReleaseMS, err = coldStartsExternal(ctx, c, c.release, dir); err != nil {
			return fmt.Errorf("cold start of the release build: %w", err)
		}
	}
	log("  package initialisation x%d (GODEBUG=inittrace=1)", initTraceRuns)
	if r.InitMS, err = initTrace(ctx, c.server, initTraceRuns, serverEnv(dir)); err != nil {
		return fmt.Errorf("init trace: %w", err)
	}
	if c.release != "" {
		if r.InitReleaseMS, err = initTrace(ctx, c.release, initTraceRuns, serverEnv(dir)); err != nil {
			return fmt.Errorf("init trace of the release build: %w", err)
		}
	}
	return nil
}

// httpRun drives the server over Streamable HTTP.
func httpRun(ctx context.Context, c config, hopts httpOptions, dir string) (loadResult, error) {
	h, err := startHTTP(ctx, c.server, dir, serverEnv(dir), hopts, c.callers)
	if err != nil {
		return loadResult{}, err
	}
	defer h.close()
	if err := warmUp(ctx, h, 25); err != nil {
		return loadResult{}, err
	}
	return drive(ctx, h, c.callers, c.httpCalls)
}

// mocksRun drives each mock (and Prism, when given) with wrk.
func mocksRun(ctx context.Context, c config, dir string, log func(string, ...any)) (map[string]wrkResult, error) {
	targets := []mockTarget{
		{mockFull, goMock(c.mock, true)},
		{mockNoResp, goMock(c.mock, false)},
	}
	if c.prism != "" {
		targets = append(targets, mockTarget{mockPrism, prismMock(c.prism, c.spec)})
	}
	out := map[string]wrkResult{}
	for _, t := range targets {
		log("  wrk %s for %s", c.wrkDur, t.name)
		res, err := runWrk(ctx, c.wrk, t, dir, 2, 10, c.wrkDur)
		if err != nil {
			return out, err
		}
		out[t.name] = res
	}
	return out, nil
}

// embeddedRun measures the binary with its embedded mock.
func embeddedRun(ctx context.Context, c config, dir string, r *runResult, log func(string, ...any)) error {
	log("  stdio, embedded mock: %d sequential calls, then %d with %d callers", c.seqCalls, c.conCalls, c.callers)
	s, idle, err := startIdle(ctx, c.server, dir, serverEnv(dir))
	if err != nil {
		return err
	}
	defer s.close()
	r.EmbeddedIdle = &idle
	if err := warmUp(ctx, s, 200); err != nil {
		return err
	}
	seq, err := drive(ctx, s, 1, c.seqCalls)
	if err != nil {
		return fmt.Errorf("stdio sequential: %w", err)
	}
	conc, err := drive(ctx, s, c.callers, c.conCalls)
	if err != nil {
		return fmt.Errorf("stdio concurrent: %w", err)
	}
	r.Seq, r.Conc = &seq, &conc
	return nil
}

// startIdle starts the server over stdio, lists its tools and reads its
// idle memory.
func startIdle(ctx context.Context, bin, dir string, env []string) (*mcpServer, memory, error) {
	s, err := startStdio(ctx, bin, dir, env)
	if err != nil {
		return nil, memory{}, err
	}
	if _, err := s.sessions[0].ListTools(ctx, nil); err != nil {
		s.close()
		return nil, memory{}, err
	}
	time.Sleep(200 * time.Millisecond) // let start-up garbage settle before reading idle memory
	idle, err := readMemory(s.proc.pid())
	if err != nil {
		s.close()
		return nil, memory{}, err
	}
	return s, idle, nil
}

// coldStartsExternal times cold starts of bin against a mockstorelink
// process, so the server builds no embedded StoreLink.
func coldStartsExternal(ctx context.Context, c config, bin, dir string) ([]float64, error) {
	mk, err := startMock(ctx, c.mock, dir, true, "")
	if err != nil {
		return nil, err
	}
	defer mk.p.stop(5*time.Second, true)
	durs, _, err := coldStarts(ctx, bin, dir, c.cold, serverEnv(dir, "UPSTREAM_BASE_URL="+mk.url, "STORELINK_KEYRING_FILE="+mk.keyring))
	var out []float64
	for _, d := range durs {
		out = append(out, msf(d))
	}
	return out, err
}

// externalRun measures the server against a separate mockstorelink process.
func externalRun(ctx context.Context, c config, dir string) (loadResult, error) {
	mk, err := startMock(ctx, c.mock, dir, true, "")
	if err != nil {
		return loadResult{}, err
	}
	defer mk.p.stop(5*time.Second, true)
	// STORELINK_MOCK_NOW applies only to the embedded mock.
	s, idle, err := startIdle(ctx, c.server, dir, serverEnv(dir, "UPSTREAM_BASE_URL="+mk.url, "STORELINK_KEYRING_FILE="+mk.keyring))
	if err != nil {
		return loadResult{}, err
	}
	defer s.close()
	if err := warmUp(ctx, s, 200); err != nil {
		return loadResult{}, err
	}
	res, err := drive(ctx, s, c.callers, c.conCalls)
	res.Idle = idle
	return res, err
}

// detectHTTP reads the server's help to see whether it serves HTTP, and
// which variable names its bearer token file.
func detectHTTP(c config) (*httpOptions, string) {
	out, _ := exec.Command(c.server, "help").CombinedOutput()
	serveHelp, _ := exec.Command(c.server, "serve", "--help").CombinedOutput()
	help := string(out) + "\n" + string(serveHelp)
	if !strings.Contains(help, "--http") {
		return nil, "not measured: this build of storelink-mcp has no HTTP transport (`storelink-mcp help` lists no --http)"
	}
	h := &httpOptions{Args: strings.Fields(c.httpArgs), TokenEnv: c.tokenEnv}
	if h.TokenEnv == "" {
		for _, f := range strings.FieldsFunc(help, func(r rune) bool {
			return !(r == '_' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9')
		}) {
			if strings.Contains(f, "TOKEN") && strings.HasSuffix(f, "_FILE") {
				h.TokenEnv = f
				break
			}
		}
	}
	note := "`storelink-mcp " + c.httpArgs + "`"
	if h.TokenEnv != "" {
		note += " with a bearer token file in " + h.TokenEnv
	}
	return h, note
}
