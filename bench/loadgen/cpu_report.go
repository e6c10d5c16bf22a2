package main

import (
	"fmt"
	"strings"
)

// cpuTarget is one target of issue 44: a figure of one run, the limit, and
// whether the limit is a ceiling or a floor.
type cpuTarget struct {
	text     string
	limit    float64
	atLeast  bool
	unit     string
	decimals int
	figure   func(*cpuResult) (float64, bool)
}

// met says whether v is within the target.
func (t cpuTarget) met(v float64) bool {
	if t.atLeast {
		return v >= t.limit
	}
	return v <= t.limit
}

// cpuRatio is a figure of the server over the same figure of the echo
// server, within one run.
func cpuRatio(server, echo func(*cpuResult) (float64, bool)) func(*cpuResult) (float64, bool) {
	return func(x *cpuResult) (float64, bool) {
		a, okA := server(x)
		b, okB := echo(x)
		if !okA || !okB || b == 0 {
			return 0, false
		}
		return a / b, true
	}
}

// Each figure of a series, as cpuTarget.figure wants it.
var (
	cpuOfEcho    = func(x *cpuResult) (float64, bool) { return x.Echo.cpuPerCall() }
	cpuOfTrivial = func(x *cpuResult) (float64, bool) { return x.Trivial.cpuPerCall() }
	cpuOfRisk    = func(x *cpuResult) (float64, bool) { return x.Risk.cpuPerCall() }
	p50Of        = func(s func(*cpuResult) cpuSeries) func(*cpuResult) (float64, bool) {
		return func(x *cpuResult) (float64, bool) { return s(x).p50(), len(s(x)) > 0 }
	}
	rateOf = func(s func(*cpuResult) cpuSeries) func(*cpuResult) (float64, bool) {
		return func(x *cpuResult) (float64, bool) { return s(x).rate(), len(s(x)) > 0 }
	}
	echoSeries    = func(x *cpuResult) cpuSeries { return x.Echo }
	echoGCSeries  = func(x *cpuResult) cpuSeries { return x.EchoGC }
	cpuOfEchoGC   = func(x *cpuResult) (float64, bool) { return x.EchoGC.cpuPerCall() }
	answerSeries  = func(x *cpuResult) cpuSeries { return x.EchoAnswer }
	cpuOfAnswer   = func(x *cpuResult) (float64, bool) { return x.EchoAnswer.cpuPerCall() }
	trivialSeries = func(x *cpuResult) cpuSeries { return x.Trivial }
	riskSeries    = func(x *cpuResult) cpuSeries { return x.Risk }
	coldOfEcho    = func(x *cpuResult) (float64, bool) { return median(x.ColdEchoMS), len(x.ColdEchoMS) > 0 }
	coldOfServer  = func(x *cpuResult) (float64, bool) { return median(x.ColdServerMS), len(x.ColdServerMS) > 0 }
	warm20Trips   = func(x *cpuResult) (float64, bool) {
		if x.Warm20 == nil || len(x.Warm20.WallMS) == 0 {
			return 0, false
		}
		return roundTrips(median(x.Warm20.WallMS), distanceDelay), true
	}
)

// cpuTargets are the "Done when" of issue 44, in its order.
var cpuTargets = []cpuTarget{
	{"Server CPU per warm one-store risk check (butter at 47, separate mockstorelink): at most 0.6 ms", 0.6, false, " ms", 3, cpuOfRisk},
	{"Trivial call (`korral_list_authorized_stores`), server CPU per call: at most 1.2x the echo's (same run)", 1.2, false, "x", 2, cpuRatio(cpuOfTrivial, cpuOfEcho)},
	{"Trivial call, p50 with 1 caller: at most 1.2x the echo's (same run)", 1.2, false, "x", 2, cpuRatio(p50Of(trivialSeries), p50Of(echoSeries))},
	{fmt.Sprintf("Trivial call, calls/s with %d callers: at least 0.9x the echo's (same run)", cpuCallers), 0.9, true, "x", 2, cpuRatio(rateOf(trivialSeries), rateOf(echoSeries))},
	{"Cold start to a `tools/list` answer, release build: at most 2.5x the echo server's (same run)", 2.5, false, "x", 2, cpuRatio(coldOfServer, coldOfEcho)},
	{fmt.Sprintf("%d stores, master data warm, StoreLink %d ms away: at most 1.3 round trips", cpuWarmStores, distanceDelay.Milliseconds()), 1.3, false, " round trips", 2, warm20Trips},
}

// overCPU collects one figure of the cpu phase from every run that has it.
func (r *report) overCPU(f func(*cpuResult) (float64, bool)) spread {
	return r.over(func(x runResult) (float64, bool) {
		if x.CPU == nil {
			return 0, false
		}
		return f(x.CPU)
	})
}

// cpuTargetRows are the targets the runs measured, each as "| target |
// measured (× target) | met |", for the section's table and the Targets
// table. A target is judged on the median over the runs of its per-run
// figure.
func (r *report) cpuTargetRows() []string {
	var out []string
	for _, t := range cpuTargets {
		s := r.overCPU(t.figure)
		if s.N == 0 {
			continue
		}
		out = append(out, fmt.Sprintf("| %s | %s%s (%.2fx the target) | %s |", t.text, s.format(t.decimals), t.unit, s.Median/t.limit, met(t.met(s.Median))))
	}
	return out
}

// cpuMarkdown renders the cpu phase: the three servers side by side, the
// cold starts, 20 stores at a distance, and the targets.
func (r *report) cpuMarkdown(p func(string, ...any)) {
	first := r.firstCPU()
	if first == nil {
		return
	}
	p("## CPU per answer (issue 44): storelink-mcp beside the bare go-sdk echo server")
	p("")
	p("Over stdio, with the load driver's go-sdk client. The bare go-sdk v1.8.0 echo server (`bench/echoserver`, `echo`), storelink-mcp's trivial call (`korral_list_authorized_stores`) and its risk check (`korral_check_stock_risk` for the butter at store 47) each run on their own process (and, for reference, the same echo server at storelink-mcp's default GOGC=400), the two storelink-mcp ones against one separate `mockstorelink --no-response-validation` process (`UPSTREAM_BASE_URL`), so the mock's CPU is not the server's; both run on the real clock. Each run: 50 warm-up calls each, then %v rounds; a round is, for each server in turn (the order rotating from round to round, so drift in the machine's load hits all of them), %v calls from 1 caller (the p50), then %v from %d callers on the same session (calls/s). Server CPU is user + system time from /proc/PID/stat (10 ms ticks) over every call of every round, divided by the calls. p50 and calls/s are the medians over the rounds; every ratio is taken within one run, then summarised over the runs.",
		r.Config["cpu_rounds"], r.Config["cpu_calls"], 2*toInt(r.Config["cpu_calls"]), cpuCallers)
	p("")
	p("| Server, call | p50 ms, 1 caller | × echo | calls/s, %d callers | × echo | Server CPU ms/call | × echo | CPU ms/call: 1 caller / %d callers |", cpuCallers, cpuCallers)
	p("|---|---|---|---|---|---|---|---|")
	for _, row := range []struct {
		label string
		s     func(*cpuResult) cpuSeries
		cpu   func(*cpuResult) (float64, bool)
	}{
		{"bare go-sdk v1.8.0 echo server, `echo`", echoSeries, cpuOfEcho},
		{"the same echo server at GOGC=400 (storelink-mcp's default, ADR 0045), for reference", echoGCSeries, cpuOfEchoGC},
		{"storelink-mcp, `korral_list_authorized_stores`", trivialSeries, cpuOfTrivial},
		{"storelink-mcp, `korral_check_stock_risk` (butter at 47, warm)", riskSeries, cpuOfRisk},
		{fmt.Sprintf("the same echo server's `answer`, for reference: storelink-mcp's trivial answer (%d bytes of JSON) as its text and structured content", first.AnswerBytes), answerSeries, cpuOfAnswer},
	} {
		if r.overCPU(row.cpu).N == 0 {
			// A series the runs did not measure (an older results.json).
			continue
		}
		x := func(f func(func(*cpuResult) cpuSeries) func(*cpuResult) (float64, bool)) string {
			return r.overCPU(cpuRatio(f(row.s), f(echoSeries))).format(2) + "x"
		}
		cpuX := r.overCPU(cpuRatio(row.cpu, cpuOfEcho)).format(2) + "x"
		halves := fmt.Sprintf("%s / %s",
			r.overCPU(func(c *cpuResult) (float64, bool) { return row.s(c).cpuOver(true, false) }).format(3),
			r.overCPU(func(c *cpuResult) (float64, bool) { return row.s(c).cpuOver(false, true) }).format(3))
		p("| %s | %s | %s | %s | %s | %s | %s | %s |", row.label,
			r.overCPU(p50Of(row.s)).format(3), x(p50Of), r.overCPU(rateOf(row.s)).format(0), x(rateOf),
			r.overCPU(row.cpu).format(3), cpuX, halves)
	}
	p("")
	p("The risk answer each run counted, checked before the rounds (not an error, the butter at store 47 with a headline); the first run's: %s.", markdownCell(first.RiskAnswer))
	p("")
	r.cpuColdMarkdown(p, first)
	r.cpuWarm20Markdown(p)
	p("| Target | Measured | Met |")
	p("|---|---|---|")
	for _, row := range r.cpuTargetRows() {
		p("%s", row)
	}
	p("")
	if own := r.overCPU(cpuRatio(p50Of(trivialSeries), p50Of(answerSeries))); own.N > 0 {
		p("For reference, not a target: the trivial call's p50 is %sx the echo server's when that server sends back the same answer (`answer`, same run). "+
			"The rest of its p50 over the echo's is the answer's size: the client's decode of it and the bytes on the pipe.", own.format(2))
		p("")
	}
	p("Allocation budgets (issue 44, item 5): tests, not benchmarks; see `mcpserver/internal/tools/allocs_test.go` and storelinkclient's decode budget test.")
	p("")
}

// cpuColdMarkdown renders the phase's cold starts.
func (r *report) cpuColdMarkdown(p func(string, ...any), first *cpuResult) {
	if r.overCPU(coldOfEcho).N == 0 {
		return
	}
	p("| Cold start, exec to a completed `tools/list` (%v starts of each per run, in turn) | median ms | p90 ms | × echo |", r.Config["cold_starts_per_run"])
	p("|---|---|---|---|")
	p90Cold := func(get func(*cpuResult) []float64) spread {
		return r.overCPU(func(x *cpuResult) (float64, bool) { v := get(x); return p90(v), len(v) > 0 })
	}
	p("| bare go-sdk v1.8.0 echo server | %s | %s | 1.00x |", r.overCPU(coldOfEcho).format(1),
		p90Cold(func(x *cpuResult) []float64 { return x.ColdEchoMS }).format(1))
	p("| storelink-mcp, %s, `UPSTREAM_BASE_URL` at the mock | %s | %s | %sx |", first.ColdBuild, r.overCPU(coldOfServer).format(1),
		p90Cold(func(x *cpuResult) []float64 { return x.ColdServerMS }).format(1), r.overCPU(cpuRatio(coldOfServer, coldOfEcho)).format(2))
	p("")
}

// cpuWarm20Markdown renders 20 stores at a distance.
func (r *report) cpuWarm20Markdown(p func(string, ...any)) {
	if r.overCPU(warm20Trips).N == 0 {
		return
	}
	wall := r.overCPU(func(x *cpuResult) (float64, bool) {
		return median(x.Warm20.WallMS), x.Warm20 != nil && len(x.Warm20.WallMS) > 0
	})
	floor := r.overCPU(func(x *cpuResult) (float64, bool) {
		return median(x.Warm20.FloorMS), x.Warm20 != nil && len(x.Warm20.FloorMS) > 0
	})
	over := r.overCPU(func(x *cpuResult) (float64, bool) {
		if x.Warm20 == nil || len(x.Warm20.WallMS) == 0 || len(x.Warm20.FloorMS) == 0 {
			return 0, false
		}
		return roundTrips(median(x.Warm20.WallMS)-median(x.Warm20.FloorMS), distanceDelay), true
	})
	expected := true
	for _, run := range r.Runs {
		if run.CPU != nil && run.CPU.Warm20 != nil && run.CPU.Warm20.Received != nil {
			expected = expected && run.CPU.Warm20.Received.asExpected(cpuWarmStores)
		}
	}
	p("| %d stores, master data warm, %d ms on every route (as the distance phase: `mockstorelink --stores %d --skus %d`) | Median ms | Round trips | Floor median ms | Round trips over the floor | Mock received each store's inventory and POS once, nothing else |",
		cpuWarmStores, distanceDelay.Milliseconds(), distanceWorldStores, distanceWorldSKUs)
	p("|---|---|---|---|---|---|")
	p("| `korral_check_stock_risk`, butter | %s | %s | %s | %s | %s |", wall.format(0), r.overCPU(warm20Trips).format(2), floor.format(1), over.format(2), met(expected))
	p("")
}

// firstCPU is the first run's cpu result, if any run has one.
func (r *report) firstCPU() *cpuResult {
	for _, run := range r.Runs {
		if run.CPU != nil {
			return run.CPU
		}
	}
	return nil
}

// markdownCell makes text safe for one Markdown table cell or line.
func markdownCell(text string) string {
	return strings.NewReplacer("|", "/", "\n", " ", "\r", " ").Replace(text)
}

// toInt reads an integer of the report's configuration, which is a float
// once read back from results.json.
func toInt(v any) int {
	switch n := v.(type) {
	case int:
		return n
	case float64:
		return int(n)
	}
	return 0
}
