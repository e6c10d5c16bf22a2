package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/internal/gcdefault"
	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The cpu phase (issue 44) measures the server's CPU per answer beside the
// bare go-sdk echo server (bench/echoserver), in the same run: the warm
// one-store risk check and the trivial call over stdio against a separate
// mockstorelink process, so the mock's CPU is not the server's, in rounds
// that alternate between the servers; cold starts of the release build
// alternating with the echo server's; and 20 stores warm at 50 ms, the way
// the distance phase measures them.

// cpuCallers is the number of concurrent callers of the throughput half of
// a round.
const cpuCallers = 8

// cpuWarmStores is the store count of the at-distance figure.
const cpuWarmStores = 20

// cpuSample is one round of one server: calls from 1 caller (the p50),
// then twice as many from cpuCallers callers on the same session (the
// rate), and the server's CPU time (user + system, /proc/PID/stat) over
// each half.
type cpuSample struct {
	P50MS       float64 `json:"p50_ms"`
	CallsPerSec float64 `json:"calls_per_sec"`
	SeqCalls    int     `json:"sequential_calls"`
	ConcCalls   int     `json:"concurrent_calls"`
	SeqCPUMS    float64 `json:"sequential_cpu_ms"`
	ConcCPUMS   float64 `json:"concurrent_cpu_ms"`
}

// cpuSeries is one server's rounds in one run.
type cpuSeries []cpuSample

// p50 is the median over the rounds of each round's 1-caller p50.
func (s cpuSeries) p50() float64 {
	return s.medianOf(func(x cpuSample) float64 { return x.P50MS })
}

// rate is the median over the rounds of each round's calls/s.
func (s cpuSeries) rate() float64 {
	return s.medianOf(func(x cpuSample) float64 { return x.CallsPerSec })
}

func (s cpuSeries) medianOf(f func(cpuSample) float64) float64 {
	v := make([]float64, len(s))
	for i, x := range s {
		v[i] = f(x)
	}
	return median(v)
}

// cpuPerCall is the server's CPU over every call of every round, divided by
// the calls, in ms: sums rather than a median, so the 10 ms ticks of
// /proc/PID/stat add up over the rounds before the division.
func (s cpuSeries) cpuPerCall() (float64, bool) { return s.cpuOver(true, true) }

// cpuOver is the server's CPU per call over the 1-caller halves of the
// rounds (seq), the concurrent halves (conc) or both.
func (s cpuSeries) cpuOver(seq, conc bool) (float64, bool) {
	var cpu float64
	var calls int
	for _, x := range s {
		if seq {
			cpu, calls = cpu+x.SeqCPUMS, calls+x.SeqCalls
		}
		if conc {
			cpu, calls = cpu+x.ConcCPUMS, calls+x.ConcCalls
		}
	}
	if calls == 0 {
		return 0, false
	}
	return cpu / float64(calls), true
}

// cpuResult is one run of the phase.
type cpuResult struct {
	Rounds int `json:"rounds"`
	// Echo is the echo server's `echo`, Trivial storelink-mcp's
	// korral_list_authorized_stores, Risk its korral_check_stock_risk for
	// the butter at store 47, each on its own process.
	Echo    cpuSeries `json:"echo"`
	Trivial cpuSeries `json:"trivial"`
	Risk    cpuSeries `json:"risk_check"`
	// EchoGC is the same echo server with storelink-mcp's default
	// collector setting (GOGC=400, ADR 0045), for reference: the targets
	// are taken against Echo, the echo server as the SDK ships it.
	EchoGC cpuSeries `json:"echo_gogc_400,omitempty"`
	// EchoAnswer is the same echo server's `answer` tool, which returns
	// the trivial call's answer (AnswerBytes of JSON) as its text and
	// structured content, for reference: the trivial call's p50 over it
	// is the server's share, the answer's own size and its decode by the
	// client left out.
	EchoAnswer  cpuSeries `json:"echo_answer,omitempty"`
	AnswerBytes int       `json:"answer_bytes,omitempty"`
	// RiskAnswer is the first risk answer's headline and data quality
	// flags: the proof that the measured call answers rather than fails.
	RiskAnswer string `json:"risk_answer"`
	// ColdEchoMS and ColdServerMS are alternating cold starts, exec to a
	// completed tools/list; ColdBuild says which storelink-mcp build.
	ColdEchoMS   []float64 `json:"cold_echo_ms"`
	ColdServerMS []float64 `json:"cold_server_ms"`
	ColdBuild    string    `json:"cold_build"`
	// Warm20 is 20 stores, master data warm, at distanceDelay.
	Warm20 *distanceRow `json:"warm20,omitempty"`
}

// cpuRun is the phase for one run: the cold starts first, on a quiet
// machine, then the rounds, then 20 stores at a distance.
func cpuRun(ctx context.Context, c config, dir string, log func(string, ...any)) (*cpuResult, error) {
	cdir := filepath.Join(dir, "cpu")
	if err := os.MkdirAll(cdir, 0o700); err != nil {
		return nil, err
	}
	mk, err := startMock(ctx, c.mock, cdir, false, "")
	if err != nil {
		return nil, fmt.Errorf("mockstorelink: %w", err)
	}
	defer mk.p.stop(5*time.Second, true)
	res := &cpuResult{Rounds: c.cpuRounds}
	if err := cpuCold(ctx, c, cdir, mk, res, log); err != nil {
		return nil, fmt.Errorf("cold starts: %w", err)
	}
	if err := cpuRoundsRun(ctx, c, cdir, mk, res, log); err != nil {
		return nil, err
	}
	log("  cpu: %d stores, master data warm, %d ms on every route", cpuWarmStores, distanceDelay.Milliseconds())
	if res.Warm20, err = cpuAtDistance(ctx, c, cdir); err != nil {
		return nil, fmt.Errorf("%d stores at a distance: %w", cpuWarmStores, err)
	}
	return res, nil
}

// upstreamEnv is a server's environment against the mock process mk.
func upstreamEnv(dir string, mk *mockProcess) []string {
	return serverEnv(dir, "UPSTREAM_BASE_URL="+mk.url, "STORELINK_KEYRING_FILE="+mk.keyring)
}

// cpuCold times c.cold starts of the echo server and of the release build
// of storelink-mcp (the default build when none is given) against mk, in
// turn, after one untimed start of each.
func cpuCold(ctx context.Context, c config, dir string, mk *mockProcess, res *cpuResult, log func(string, ...any)) error {
	bin, build := c.release, "release build (`-tags nodemo`)"
	if bin == "" {
		bin, build = c.server, "default build (no --release-server given)"
	}
	res.ColdBuild = build
	log("  cpu: %d cold starts each, the echo server and storelink-mcp's %s, in turn", c.cold, build)
	sdir := filepath.Join(dir, "cold")
	if err := os.MkdirAll(sdir, 0o700); err != nil {
		return err
	}
	echoEnv, srvEnv := serverEnv(sdir), upstreamEnv(sdir, mk)
	for i := -1; i < c.cold; i++ {
		echoFirst := i%2 == 0
		for k := range 2 {
			isEcho := (k == 0) == echoFirst
			b, env := bin, srvEnv
			if isEcho {
				b, env = c.echoServer, echoEnv
			}
			d, _, err := coldStart(ctx, b, sdir, env)
			if err != nil {
				return err
			}
			switch {
			case i < 0:
			case isEcho:
				res.ColdEchoMS = append(res.ColdEchoMS, msf(d))
			default:
				res.ColdServerMS = append(res.ColdServerMS, msf(d))
			}
		}
	}
	return nil
}

// echoGOGC is storelink-mcp's default GOGC, given to the reference row's
// echo server.
var echoGOGC = strconv.Itoa(gcdefault.Percent)

// cpuServer is one server of the rounds.
type cpuServer struct {
	name string
	s    *mcpServer
	out  *cpuSeries
}

// cpuRoundsRun starts the echo server (twice: as shipped, and at
// storelink-mcp's default GOGC for reference), two storelink-mcp processes
// (the trivial call's and the risk check's, so neither's CPU holds the
// other's background work) and, for reference, the echo server once more
// with storelink-mcp's trivial answer as its `answer` tool; checks the
// risk answer, warms each up and measures c.cpuRounds rounds, the order
// rotating from round to round.
func cpuRoundsRun(ctx context.Context, c config, dir string, mk *mockProcess, res *cpuResult, log func(string, ...any)) error {
	var servers []cpuServer
	defer func() {
		for _, sv := range servers {
			sv.s.close()
		}
	}()
	start := func(name, bin string, env []string, params func() *mcp.CallToolParams, out *cpuSeries) error {
		s, err := startStdio(ctx, bin, filepath.Join(dir, name), env)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.params = params
		servers = append(servers, cpuServer{name, s, out})
		if _, err := s.sessions[0].ListTools(ctx, nil); err != nil {
			return fmt.Errorf("%s: tools/list: %w%s", name, err, s.logTail())
		}
		return nil
	}
	for _, sp := range []struct {
		name   string
		bin    string
		env    func(string) []string
		params func() *mcp.CallToolParams
		out    *cpuSeries
	}{
		{"echo", c.echoServer, func(d string) []string { return serverEnv(d) }, echoParams, &res.Echo},
		{"echo-gogc-400", c.echoServer, func(d string) []string { return serverEnv(d, "GOGC="+echoGOGC) }, echoParams, &res.EchoGC},
		{"trivial", c.server, func(d string) []string { return upstreamEnv(d, mk) }, trivialParams, &res.Trivial},
		{"risk", c.server, func(d string) []string { return upstreamEnv(d, mk) }, butter, &res.Risk},
	} {
		sdir := filepath.Join(dir, sp.name)
		if err := os.MkdirAll(sdir, 0o700); err != nil {
			return err
		}
		if err := start(sp.name, sp.bin, sp.env(sdir), sp.params, sp.out); err != nil {
			return err
		}
	}
	answer, err := checkRiskAnswer(ctx, servers[3].s)
	if err != nil {
		return err
	}
	res.RiskAnswer = answer
	adir := filepath.Join(dir, "echo-answer")
	if res.AnswerBytes, err = saveTrivialAnswer(ctx, servers[2].s, adir); err != nil {
		return err
	}
	if err := start("echo-answer", c.echoServer, serverEnv(adir, "ECHO_ANSWER_FILE="+filepath.Join(adir, "answer.json")),
		answerParams, &res.EchoAnswer); err != nil {
		return err
	}
	for _, sv := range servers {
		if err := warmUp(ctx, sv.s, 50); err != nil {
			return fmt.Errorf("%s: %w", sv.name, err)
		}
	}
	log("  cpu: %d rounds of %d calls from 1 caller and %d from %d, echo, echo at GOGC=400, trivial call, risk check and the echo of the trivial answer in turn",
		c.cpuRounds, c.cpuCalls, 2*c.cpuCalls, cpuCallers)
	for r := range c.cpuRounds {
		for k := range servers {
			sv := servers[(k+r)%len(servers)]
			smp, err := cpuRound(ctx, sv.s, c.cpuCalls)
			if err != nil {
				return fmt.Errorf("%s, round %d: %w", sv.name, r+1, err)
			}
			*sv.out = append(*sv.out, smp)
		}
	}
	cpuLog(log, res, servers)
	return nil
}

// answerParams calls the echo server's `answer` tool.
func answerParams() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "answer", Arguments: map[string]any{}}
}

// saveTrivialAnswer makes one trivial call on s and writes its answer's
// text, the JSON of its structured content, to dir/answer.json for the
// echo server's `answer` tool; it returns the text's size in bytes.
func saveTrivialAnswer(ctx context.Context, s *mcpServer, dir string) (int, error) {
	res, err := s.sessions[0].CallTool(ctx, trivialParams())
	if err != nil {
		return 0, fmt.Errorf("trivial call: %w%s", err, s.logTail())
	}
	text := resultText(res)
	if res.IsError || res.StructuredContent == nil || !json.Valid([]byte(text)) {
		return 0, fmt.Errorf("trivial call: no structured answer: %s", text)
	}
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return 0, err
	}
	return len(text), os.WriteFile(filepath.Join(dir, "answer.json"), []byte(text), 0o600)
}

// cpuLog prints the run's figures as the driver goes, with each server's
// PID (bench/profiledmcp names its profiles by PID).
func cpuLog(log func(string, ...any), res *cpuResult, servers []cpuServer) {
	for i, x := range []struct {
		name string
		s    cpuSeries
	}{{"echo", res.Echo}, {"echo at GOGC=400", res.EchoGC}, {"trivial", res.Trivial}, {"risk", res.Risk},
		{"echo of the trivial answer", res.EchoAnswer}} {
		cpu, _ := x.s.cpuPerCall()
		log("  cpu: %s (PID %d): p50 %.3f ms, %.0f calls/s, server CPU %.3f ms a call",
			x.name, servers[i].s.proc.pid(), x.s.p50(), x.s.rate(), cpu)
	}
}

// cpuRound is one round of one server: calls from 1 caller, then 2×calls
// from cpuCallers callers. drive fails on any error answer.
func cpuRound(ctx context.Context, s *mcpServer, calls int) (cpuSample, error) {
	seq, err := drive(ctx, s, 1, calls)
	if err != nil {
		return cpuSample{}, err
	}
	conc, err := drive(ctx, s, cpuCallers, 2*calls)
	if err != nil {
		return cpuSample{}, err
	}
	return cpuSample{
		P50MS: seq.Latency.P50MS, CallsPerSec: conc.Latency.CallsPerSec,
		SeqCalls: calls, ConcCalls: 2 * calls,
		SeqCPUMS: seq.CPUPerCallMS * float64(calls), ConcCPUMS: conc.CPUPerCallMS * float64(2*calls),
	}, nil
}

// checkRiskAnswer makes one risk check and returns the store's headline,
// or fails unless it is a real answer (riskAnswerProblem): what tells a
// measured answer from a measured refusal, and an answer over fresh data
// from one over a history that has aged.
func checkRiskAnswer(ctx context.Context, s *mcpServer) (string, error) {
	res, err := s.sessions[0].CallTool(ctx, butter())
	if err != nil {
		return "", fmt.Errorf("risk check: %w%s", err, s.logTail())
	}
	raw, _ := json.Marshal(res.StructuredContent)
	headline, problem := riskAnswerProblem(res.IsError, raw)
	if problem != "" {
		return "", fmt.Errorf("risk check: %s: %s", problem, resultText(res))
	}
	return headline, nil
}

// agedFlags are the data quality flags of a risk answer over a sales
// history or stock count that stopped before the server's now: the sign of
// a mock and a server on different clocks, not of the butter at store 47.
var agedFlags = map[string]bool{"possible_stockout_days": true, "stale_on_hand_count": true, "no_history": true}

// riskAnswerProblem reads a one-store risk answer for the butter at store
// 47: its headline and data quality flags when it is a real answer, else
// what is wrong with it.
func riskAnswerProblem(isError bool, structured []byte) (answer, problem string) {
	var env struct {
		OK   bool `json:"ok"`
		Data struct {
			SKU    string `json:"sku"`
			Stores []struct {
				StoreID string `json:"store_id"`
				Risk    *struct {
					Headline string   `json:"headline"`
					Flags    []string `json:"data_quality_flags"`
				} `json:"risk"`
				Error json.RawMessage `json:"error"`
			} `json:"stores"`
		} `json:"data"`
	}
	v := &env.Data
	switch {
	case isError:
		return "", "an error answer"
	case json.Unmarshal(structured, &env) != nil || !env.OK || v.SKU == "":
		return "", "no structured risk answer with ok: true"
	case v.SKU != mockstorelink.SKUButter || len(v.Stores) != 1 || v.Stores[0].StoreID != "47":
		return "", "not the butter at store 47 alone"
	case len(v.Stores[0].Error) > 0 && string(v.Stores[0].Error) != "null":
		return "", "store 47 answered with an error"
	case v.Stores[0].Risk == nil || v.Stores[0].Risk.Headline == "":
		return "", "store 47 has no risk headline"
	}
	r := v.Stores[0].Risk
	for _, f := range r.Flags {
		if agedFlags[f] {
			return "", fmt.Sprintf("store 47's answer is flagged %s: the mock's sales history does not reach the server's now (are both on the real clock?)", f)
		}
	}
	flags := "none"
	if len(r.Flags) > 0 {
		flags = strings.Join(r.Flags, ", ")
	}
	return fmt.Sprintf("%s (data quality flags: %s)", r.Headline, flags), ""
}

// cpuAtDistance measures 20 stores with master data warm against a mock of
// the distance phase's world with distanceDelay on every route, the way
// measureDistance does: its first call, without latency, warms the master
// data.
func cpuAtDistance(ctx context.Context, c config, dir string) (*distanceRow, error) {
	ddir := filepath.Join(dir, "distance")
	if err := os.MkdirAll(ddir, 0o700); err != nil {
		return nil, err
	}
	mk, err := startMock(ctx, c.mock, ddir, false, mockAdminToken,
		"--stores", strconv.Itoa(distanceWorldStores), "--skus", strconv.Itoa(distanceWorldSKUs))
	if err != nil {
		return nil, fmt.Errorf("mockstorelink: %w", err)
	}
	defer mk.p.stop(5*time.Second, true)
	stores, err := keyringStores(mk.keyring)
	if err != nil {
		return nil, err
	}
	if len(stores) < cpuWarmStores {
		return nil, fmt.Errorf("the mock's keyring holds %d stores, fewer than %d", len(stores), cpuWarmStores)
	}
	s, err := startStdio(ctx, c.server, ddir, upstreamEnv(ddir, mk))
	if err != nil {
		return nil, err
	}
	defer s.close()
	admin := mockAdmin{url: mk.url, token: mockAdminToken}
	row, err := measureDistance(ctx, s.sessions[0], admin, riskArgs(stores, cpuWarmStores),
		planFor(cpuWarmStores, c.distanceCalls, time.Now().Add(c.distanceDur)))
	if err != nil {
		return nil, fmt.Errorf("%w%s", err, s.logTail())
	}
	row.Stores, row.Master = cpuWarmStores, "warm"
	return &row, nil
}
