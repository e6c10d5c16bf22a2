package main

import (
	"fmt"

	"github.com/korral/storelink/mcpserver"
)

// seqP50Before is the single-caller p50 of `korral_check_stock_risk` over
// stdio before group commit (ADR 0026), from run seqP50BeforeRun.
const (
	seqP50Before    = 3.35
	seqP50BeforeRun = "`make bench` of 2026-12-01 12:16 UTC, load 2.19"
)

// targetsMarkdown renders the targets table: each target the runs measured,
// with its median and whether it was met.
func (r *report) targetsMarkdown(p func(string, ...any)) {
	cold := r.medianOf(func(x runResult) []float64 { return x.ColdStartMS })
	seqP50 := r.over(func(x runResult) (float64, bool) { return lOrZero(x.Seq).Latency.P50MS, x.Seq != nil })
	concRate := r.over(func(x runResult) (float64, bool) { return lOrZero(x.Conc).Latency.CallsPerSec, x.Conc != nil })
	idle := r.over(func(x runResult) (float64, bool) {
		if x.EmbeddedIdle == nil {
			return 0, false
		}
		return mb(x.EmbeddedIdle.RSSKB), true
	})
	growthAlone := r.growth(func(x runResult) *loadResult { return x.External })
	growthEmbedded := r.growth(func(x runResult) *loadResult { return x.Conc })
	fullVsPrism := r.mockRatio(mockFull, mockPrism)
	toolBytes := r.over(func(x runResult) (float64, bool) {
		if x.Tools == nil {
			return 0, false
		}
		return float64(x.Tools.ModelVisibleBytes), true
	})
	listBytes := r.over(func(x runResult) (float64, bool) {
		if x.Tools == nil {
			return 0, false
		}
		return float64(x.Tools.ToolsListBytes), true
	})
	p("## Targets")
	p("")
	p("| Target | Measured | Met |")
	p("|---|---|---|")
	target := func(s spread, text, value string, ok func(spread) bool) {
		if s.N > 0 {
			p("| %s | %s | %s |", text, value, met(ok(s)))
		}
	}
	target(cold, "Cold start to a completed `tools/list`: median under 50 ms", cold.format(1)+" ms", func(s spread) bool { return s.Median < 50 })
	if coldRel := r.medianOf(func(x runResult) []float64 { return x.ColdStartReleaseMS }); coldRel.N > 0 {
		// The target is on the binary that ships (ADR 0015); the default
		// build with UPSTREAM_BASE_URL set stays in the cold-start table.
		target(coldRel, "Same with `UPSTREAM_BASE_URL` set, release build (`-tags nodemo`, as archives and image ship): median at most 35 ms", coldRel.format(1)+" ms", func(s spread) bool { return s.Median <= 35 })
	} else {
		coldExt := r.medianOf(func(x runResult) []float64 { return x.ColdStartExternalMS })
		target(coldExt, "Same with `UPSTREAM_BASE_URL` set (no embedded mock): median at most 35 ms", coldExt.format(1)+" ms", func(s spread) bool { return s.Median <= 35 })
	}
	target(listBytes, fmt.Sprintf("Whole `tools/list` result (output schemas included) at most %d bytes (mcpserver.ToolsListBudgetBytes)", mcpserver.ToolsListBudgetBytes), listBytes.format(0)+" bytes", func(s spread) bool { return s.Max <= mcpserver.ToolsListBudgetBytes })
	target(seqP50, "`korral_check_stock_risk` over stdio, sequential: p50 under 2 ms", seqP50.format(2)+" ms", func(s spread) bool { return s.Median < 2 })
	target(seqP50, fmt.Sprintf("Same, single caller: p50 no worse than before group commit (issue 35): %.2f ms, %s", seqP50Before, seqP50BeforeRun),
		fmt.Sprintf("%s ms (%.2fx)", seqP50.format(2), seqP50.Median/seqP50Before), func(s spread) bool { return s.Median <= seqP50Before })
	target(concRate, fmt.Sprintf("Same, %v concurrent callers: over 1,000 calls/s", r.Config["callers"]), concRate.format(0)+" calls/s", func(s spread) bool { return s.Median > 1000 })
	target(fullVsPrism, "mockstorelink with full validation at least 5x Prism (same run)", fullVsPrism.format(1)+"x", func(s spread) bool { return s.Median >= 5 })
	target(idle, "Idle RSS of the server under 30 MB (embedded mock included)", idle.format(1)+" MiB", func(s spread) bool { return s.Median < 30 })
	target(growthAlone, fmt.Sprintf("No RSS growth over %v calls: server alone (external mock)", r.Config["concurrent_calls"]), growthAlone.format(1)+" MiB", func(s spread) bool { return s.Max < 1 })
	target(growthEmbedded, fmt.Sprintf("No RSS growth over %v calls: zero-config binary (embedded mock in the process)", r.Config["concurrent_calls"]), growthEmbedded.format(1)+" MiB", func(s spread) bool { return s.Max < 1 })
	target(toolBytes, fmt.Sprintf("Model-visible tool definitions within %d bytes", toolBudgetBytes), toolBytes.format(0)+" bytes", func(s spread) bool { return s.Max <= toolBudgetBytes })
	if sc, ok := r.firstScale(); ok {
		t := r.scaleTrivialRatio()
		target(t, fmt.Sprintf("%d HTTP clients, trivial call: at least %.1fx the bare go-sdk floor's calls/s (same run)", sc.Clients, scaleTrivialTarget),
			t.format(2)+"x", func(s spread) bool { return s.Median >= scaleTrivialTarget })
	}
	for _, d := range r.distanceRows() {
		if !d.available {
			p("| StoreLink %d ms away, %s, master data %s: %s | not available: %s | n/a |", distanceDelay.Milliseconds(), d.label, d.master, d.limit, d.note)
			continue
		}
		p("| StoreLink %d ms away, %s, master data %s: %s | %s | %s |", distanceDelay.Milliseconds(), d.label, d.master, d.limit, d.measured(), met(d.met()))
	}
	for _, row := range r.cpuTargetRows() {
		p("%s", row)
	}
	p("")
	if seqP50.N+concRate.N+idle.N+growthAlone.N+growthEmbedded.N > 0 {
		p("Growth is the resident-set change over the second half of the calls (RSS sampled after every tenth); \"no growth\" means under 1 MiB. The first half is left out because the heap target, connection pools and SQLite's page cache fill up there and then stay put; the memory table shows the whole course.")
		p("")
	}
}

// growth is the resident-set growth over the second half of one load.
func (r *report) growth(get func(runResult) *loadResult) spread {
	return r.overLoad(get, func(_ runResult, l *loadResult) (float64, bool) { g, ok := l.growth(); return mb(g), ok })
}

// overLoad collects one figure of one load from every run that had it.
func (r *report) overLoad(get func(runResult) *loadResult, f func(runResult, *loadResult) (float64, bool)) spread {
	return r.over(func(x runResult) (float64, bool) {
		if l := get(x); l != nil {
			return f(x, l)
		}
		return 0, false
	})
}
