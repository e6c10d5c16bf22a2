package main

import (
	"io"
	"strings"
	"testing"
)

// round is one round of a server: p50, calls/s, and the server's CPU in ms
// over 100 calls from 1 caller and 200 from 8.
func round(p50, rate, seqCPU, concCPU float64) cpuSample {
	return cpuSample{P50MS: p50, CallsPerSec: rate, SeqCalls: 100, ConcCalls: 200, SeqCPUMS: seqCPU, ConcCPUMS: concCPU}
}

func TestCPUSeriesSumsTheCPUOverTheRoundsAndTakesMediansOfTheRest(t *testing.T) {
	s := cpuSeries{round(0.4, 3000, 30, 60), round(0.5, 2000, 50, 40), round(0.9, 1000, 10, 10)}
	// (30+60+50+40+10+10) ms over 900 calls, not the median of the rounds'
	// 0.30, 0.30 and 0.07 ms.
	if got, ok := s.cpuPerCall(); !ok || !near(got, 200.0/900) {
		t.Errorf("cpuPerCall = %v, %v; want %v", got, ok, 200.0/900)
	}
	if got, _ := s.cpuOver(true, false); !near(got, 90.0/300) {
		t.Errorf("1-caller CPU = %v, want 0.3", got)
	}
	if got, _ := s.cpuOver(false, true); !near(got, 110.0/600) {
		t.Errorf("concurrent CPU = %v", got)
	}
	if s.p50() != 0.5 || s.rate() != 2000 {
		t.Errorf("p50 %v, rate %v; want the medians 0.5 and 2000", s.p50(), s.rate())
	}
	if _, ok := (cpuSeries{}).cpuPerCall(); ok {
		t.Error("CPU per call of no calls")
	}
}

func near(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 }

// cpuRunOf is one run: the echo's rounds at 0.25 ms of CPU a call, p50
// 0.4 ms, 3000 calls/s; the trivial call at trivialX times each; the risk
// check at riskCPU ms a call; cold starts and 20 stores at a distance.
func cpuRunOf(trivialX, riskCPU, coldEcho, coldServer, warm20MS float64) runResult {
	echo := cpuSeries{round(0.4, 3000, 25, 50), round(0.4, 3000, 25, 50)}
	var triv, risk, answer cpuSeries
	for _, x := range echo {
		triv = append(triv, round(x.P50MS*trivialX, x.CallsPerSec/trivialX, x.SeqCPUMS*trivialX, x.ConcCPUMS*trivialX))
		risk = append(risk, round(3, 400, 100*riskCPU, 200*riskCPU))
		// The echo of the trivial answer: p50 0.44 ms.
		answer = append(answer, round(0.44, 2800, 26, 52))
	}
	return runResult{CPU: &cpuResult{Rounds: 2, Echo: echo, Trivial: triv, Risk: risk, EchoAnswer: answer, AnswerBytes: 1401,
		RiskAnswer: "Lasts | past the close", ColdBuild: "release build",
		ColdEchoMS: []float64{8, 10, 9}, ColdServerMS: []float64{coldEcho * 2, coldServer, coldServer},
		Warm20: &distanceRow{Stores: 20, Master: "warm", Available: true, WallMS: []float64{warm20MS, warm20MS}, FloorMS: []float64{20},
			Received: &requestCounts{Stores: 20, InventoryMin: 1, InventoryMax: 1, POSMin: 1, POSMax: 1, Total: 40}}}}
}

func cpuReport(runs ...runResult) string {
	r := &report{Config: map[string]any{"cpu_rounds": 2, "cpu_calls": 100, "cold_starts_per_run": 3}, Runs: runs}
	var b strings.Builder
	r.cpuMarkdown(func(f string, a ...any) { b.WriteString(fmtS(f, a...) + "\n") })
	return b.String()
}

func TestCPUMarkdownReportsEachTargetWithItsRatioWithinEachRun(t *testing.T) {
	// Trivial call 1.1x, 1.3x and 1.15x the echo in its own run; cold
	// starts 9 ms for the echo; 20 stores at 60 ms (1.2 round trips).
	md := cpuReport(cpuRunOf(1.1, 0.5, 9, 18, 60), cpuRunOf(1.3, 0.7, 9, 27, 60), cpuRunOf(1.15, 0.55, 9, 22.5, 60))
	for _, want := range []string{
		"## CPU per answer (issue 44)",
		"then 2 rounds;", "100 calls from 1 caller (the p50), then 200 from 8 callers",
		"| bare go-sdk v1.8.0 echo server, `echo` | 0.400 | 1.00x | 3000 | 1.00x | 0.250 | 1.00x | 0.250 / 0.250 |",
		"| storelink-mcp, `korral_list_authorized_stores` | 0.460 (0.440–0.520) | 1.15 (1.10–1.30)x |",
		"| storelink-mcp, `korral_check_stock_risk` (butter at 47, warm) | 3.000 | 7.50x |",
		"at most 0.6 ms | 0.550 (0.500–0.700) ms (0.92x the target) | yes |",
		"server CPU per call: at most 1.2x the echo's (same run) | 1.15 (1.10–1.30)x (0.96x the target) | yes |",
		"p50 with 1 caller: at most 1.2x the echo's (same run) | 1.15 (1.10–1.30)x (0.96x the target) | yes |",
		"calls/s with 8 callers: at least 0.9x the echo's (same run) | 0.87 (0.77–0.91)x (0.97x the target) | **no** |",
		"release build: at most 2.5x the echo server's (same run) | 2.50 (2.00–3.00)x (1.00x the target) | yes |",
		"at most 1.3 round trips | 1.20 round trips (0.92x the target) | yes |",
		"| `korral_check_stock_risk`, butter | 60 | 1.20 | 20.0 | 0.80 | yes |",
		"Lasts / past the close", // a '|' of the headline would split the cell
		"| the same echo server's `answer`, for reference: storelink-mcp's trivial answer (1401 bytes of JSON) as its text and structured content | 0.440 | 1.10x | 2800 | 0.93x | 0.260 | 1.04x |",
		// 0.44, 0.52 and 0.46 ms over 0.44 ms.
		"the trivial call's p50 is 1.05 (1.00–1.18)x the echo server's when that server sends back the same answer",
		"allocation budgets", // placeholder for the other engineers' tests
	} {
		if !strings.Contains(strings.ToLower(md), strings.ToLower(want)) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	// The targets flip at their limits: a risk check at 0.61 ms and the
	// trivial call at 1.25x miss, 20 stores at 66 ms (1.32 round trips) too.
	md = cpuReport(cpuRunOf(1.25, 0.61, 9, 22.5, 66))
	for _, want := range []string{
		"0.610 ms (1.02x the target) | **no** |",
		"at most 1.2x the echo's (same run) | 1.25x (1.04x the target) | **no** |",
		"1.32 round trips (1.02x the target) | **no** |",
		"| 2.50x (1.00x the target) | yes |", // at most 2.5x: the limit itself is met
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
}

func TestCPUTargetsJoinTheTargetsTable(t *testing.T) {
	r := &report{Config: map[string]any{}, Runs: []runResult{cpuRunOf(1.1, 0.5, 9, 18, 60)}}
	var b strings.Builder
	r.targetsMarkdown(func(f string, a ...any) { b.WriteString(fmtS(f, a...) + "\n") })
	if n := strings.Count(b.String(), "(same run)"); n != 4 || !strings.Contains(b.String(), "warm one-store risk check") {
		t.Errorf("the Targets table has %d of the 4 same-run targets, or no risk-check CPU:\n%s", n, b.String())
	}
}

func TestRiskAnswerProblemTellsAnAnswerFromAnError(t *testing.T) {
	answer := `{"ok":true,"data":{"sku":"8847291","stores":[{"store_id":"47","risk":{"headline":"Lasts past the close.","data_quality_flags":["outside_trading_hours"]}}]}}`
	if got, problem := riskAnswerProblem(false, []byte(answer)); problem != "" || got != "Lasts past the close. (data quality flags: outside_trading_hours)" {
		t.Errorf("a real answer: %q, %q", got, problem)
	}
	for name, c := range map[string]struct {
		isError bool
		body    string
	}{
		"error answer":  {true, answer},
		"not ok":        {false, `{"ok":false,"error":{"code":"UPSTREAM_UNAVAILABLE"}}`},
		"no content":    {false, `null`},
		"store error":   {false, `{"ok":true,"data":{"sku":"8847291","stores":[{"store_id":"47","error":{"code":"UPSTREAM_TIMEOUT"}}]}}`},
		"another store": {false, strings.Replace(answer, `"47"`, `"102"`, 1)},
		"another SKU":   {false, strings.Replace(answer, `8847291`, `8847292`, 1)},
		"no headline":   {false, strings.Replace(answer, `"Lasts past the close."`, `""`, 1)},
		"two stores":    {false, strings.Replace(answer, `}}]}}`, `}},{"store_id":"102"}]}}`, 1)},
		// A history that stopped days before the server's now: the
		// clocks of mock and server disagree.
		"aged history": {false, strings.Replace(answer, `"outside_trading_hours"`, `"outside_trading_hours","possible_stockout_days"`, 1)},
		"aged count":   {false, strings.Replace(answer, `"outside_trading_hours"`, `"stale_on_hand_count"`, 1)},
	} {
		if _, problem := riskAnswerProblem(c.isError, []byte(c.body)); problem == "" {
			t.Errorf("%s: taken for a real answer", name)
		}
	}
}

func TestCPUPhaseFlags(t *testing.T) {
	c, err := parseFlags([]string{"--server", "s", "--mock", "m", "--only", "cpu", "--quick", "--cpu-calls", "50"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if !c.phase("cpu") || c.phase("distance") {
		t.Error("--only cpu selects other phases or not cpu")
	}
	if c.cpuRounds != 2 || c.cpuCalls != 50 {
		t.Errorf("--quick with --cpu-calls 50: %d rounds of %d calls, want 2 of 50", c.cpuRounds, c.cpuCalls)
	}
}
