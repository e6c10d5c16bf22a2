package main

import (
	"fmt"
	"sort"
	"strings"
)

// hasLoad tells whether any run drove load through the MCP server.
func (r *report) hasLoad() bool {
	return r.over(func(x runResult) (float64, bool) {
		return 0, x.Seq != nil || x.Conc != nil || x.External != nil || x.HTTP != nil
	}).N > 0
}

// loadMarkdown renders the latency and throughput of each transport.
func (r *report) loadMarkdown(p func(string, ...any)) {
	hasLoad := r.hasLoad()
	if hasLoad {
		p("## storelink-mcp, `korral_check_stock_risk` for the butter at store 47")
		p("")
		p("| Transport and load | Calls/run | p50 ms | p95 ms | p99 ms | Calls/s | Server CPU ms/call | Errors |")
		p("|---|---|---|---|---|---|---|---|")
	}
	row := func(name string, get func(runResult) *loadResult) {
		s := func(f func(latencies) float64, d int) string {
			return r.overLoad(get, func(_ runResult, l *loadResult) (float64, bool) { return f(l.Latency), true }).format(d)
		}
		calls := r.overLoad(get, func(_ runResult, l *loadResult) (float64, bool) { return float64(l.Latency.Calls), true })
		if calls.N == 0 {
			return
		}
		cpu := r.overLoad(get, func(_ runResult, l *loadResult) (float64, bool) { return l.CPUPerCallMS, true })
		p("| %s | %.0f | %s | %s | %s | %s | %s | %s |", name, calls.Median,
			s(func(l latencies) float64 { return l.P50MS }, 2),
			s(func(l latencies) float64 { return l.P95MS }, 2),
			s(func(l latencies) float64 { return l.P99MS }, 2),
			s(func(l latencies) float64 { return l.CallsPerSec }, 0),
			cpu.format(2),
			s(func(l latencies) float64 { return float64(l.Errors) }, 0))
	}
	row("stdio, embedded mock, 1 caller", func(x runResult) *loadResult { return x.Seq })
	row(fmt.Sprintf("stdio, embedded mock, %v callers on one session", r.Config["callers"]), func(x runResult) *loadResult { return x.Conc })
	row(fmt.Sprintf("stdio, external mockstorelink process, %v callers", r.Config["callers"]), func(x runResult) *loadResult { return x.External })
	row(fmt.Sprintf("Streamable HTTP, embedded mock, %v sessions", r.Config["callers"]), func(x runResult) *loadResult { return x.HTTP })
	if hasLoad {
		p("")
		p("HTTP transport: %s.", r.HTTPNote)
		p("")
	}
}

// coldStartMarkdown renders the cold starts of the three builds.
func (r *report) coldStartMarkdown(p func(string, ...any)) {
	cold := r.medianOf(func(x runResult) []float64 { return x.ColdStartMS })
	if cold.N == 0 {
		return
	}
	coldP90 := r.p90Of(func(x runResult) []float64 { return x.ColdStartMS })
	p("| Cold start: exec to a completed `tools/list` (%v starts per run) | median ms | p90 ms |", r.Config["cold_starts_per_run"])
	p("|---|---|---|")
	p("| zero configuration: embedded mock StoreLink built at start | %s | %s |", cold.format(1), coldP90.format(1))
	if coldExt := r.medianOf(func(x runResult) []float64 { return x.ColdStartExternalMS }); coldExt.N > 0 {
		coldExtP90 := r.p90Of(func(x runResult) []float64 { return x.ColdStartExternalMS })
		p("| `UPSTREAM_BASE_URL` set, default build: no embedded mock started, its packages still linked | %s | %s |", coldExt.format(1), coldExtP90.format(1))
	}
	if coldRel := r.medianOf(func(x runResult) []float64 { return x.ColdStartReleaseMS }); coldRel.N > 0 {
		coldRelP90 := r.p90Of(func(x runResult) []float64 { return x.ColdStartReleaseMS })
		p("| `UPSTREAM_BASE_URL` set, release build (`-tags nodemo`): embedded mock not linked | %s | %s |", coldRel.format(1), coldRelP90.format(1))
	}
	p("")
}

// initMarkdown renders the package initialisation before main.
func (r *report) initMarkdown(p func(string, ...any)) {
	inits := r.initRows(8)
	if len(inits) == 0 {
		return
	}
	p("| Package initialisation before `main` (`GODEBUG=inittrace=1 storelink-mcp version`, median of %d per run) | ms |", initTraceRuns)
	p("|---|---|")
	for _, row := range inits {
		p("| %s | %s |", row.name, row.ms.format(2))
	}
	relInit := r.over(func(x runResult) (float64, bool) {
		t := 0.0
		for _, ms := range x.InitReleaseMS {
			t += ms
		}
		return t, len(x.InitReleaseMS) > 0
	})
	if relInit.N > 0 {
		p("| all packages, release build (`-tags nodemo`) | %s |", relInit.format(2))
	}
	p("")
}

type initRow struct {
	name string
	ms   spread
}

// initRows are the whole package initialisation, this module's share of it,
// and the top packages by their median time over the runs.
func (r *report) initRows(top int) []initRow {
	sum := func(keep func(string) bool) spread {
		return r.over(func(x runResult) (float64, bool) {
			t := 0.0
			for pkg, ms := range x.InitMS {
				if keep(pkg) {
					t += ms
				}
			}
			return t, len(x.InitMS) > 0
		})
	}
	total := sum(func(string) bool { return true })
	if total.N == 0 {
		return nil
	}
	rows := []initRow{
		{"all packages", total},
		{"this module's packages (`github.com/korral/storelink/...`)", sum(func(p string) bool { return strings.HasPrefix(p, ownModule) })},
	}
	seen := map[string]bool{}
	for _, x := range r.Runs {
		for pkg := range x.InitMS {
			seen[pkg] = true
		}
	}
	var pkgs []initRow
	for pkg := range seen {
		pkgs = append(pkgs, initRow{"`" + pkg + "`", r.over(func(x runResult) (float64, bool) { ms, ok := x.InitMS[pkg]; return ms, ok })})
	}
	sort.Slice(pkgs, func(i, j int) bool {
		if pkgs[i].ms.Median != pkgs[j].ms.Median {
			return pkgs[i].ms.Median > pkgs[j].ms.Median
		}
		return pkgs[i].name < pkgs[j].name
	})
	return append(rows, pkgs[:min(top, len(pkgs))]...)
}

// memoryMarkdown renders the server's resident memory over each load.
func (r *report) memoryMarkdown(p func(string, ...any)) {
	hasLoad := r.hasLoad()
	if hasLoad {
		p("## Memory of the server process (from /proc/PID/status)")
		p("")
		p("| Process | Idle | Load start | Half-way | End | Peak (VmHWM) | Second-half growth |")
		p("|---|---|---|---|---|---|---|")
	}
	memRow := func(name string, get func(runResult) *loadResult, idleOf func(runResult) memory) {
		f := func(g func(runResult, *loadResult) (int64, bool)) string {
			return r.overLoad(get, func(x runResult, l *loadResult) (float64, bool) { v, ok := g(x, l); return mb(v), ok }).format(1)
		}
		if r.over(func(x runResult) (float64, bool) { return 0, get(x) != nil }).N == 0 {
			return
		}
		half := func(_ runResult, l *loadResult) (int64, bool) {
			if len(l.Checkpoints) < 2 {
				return 0, false
			}
			return l.Checkpoints[len(l.Checkpoints)/2-1].RSSKB, true
		}
		p("| %s | %s | %s | %s | %s | %s | %s |", name,
			f(func(x runResult, _ *loadResult) (int64, bool) { return idleOf(x).RSSKB, true }),
			f(func(_ runResult, l *loadResult) (int64, bool) { return l.Idle.RSSKB, true }),
			f(half),
			f(func(_ runResult, l *loadResult) (int64, bool) { return l.End.RSSKB, true }),
			f(func(_ runResult, l *loadResult) (int64, bool) { return l.End.HWMKB, true }),
			f(func(_ runResult, l *loadResult) (int64, bool) { return l.growth() }))
	}
	memRow(fmt.Sprintf("storelink-mcp + embedded mock, %v calls with %v callers", r.Config["concurrent_calls"], r.Config["callers"]),
		func(x runResult) *loadResult { return x.Conc }, func(x runResult) memory { return *x.EmbeddedIdle })
	memRow(fmt.Sprintf("storelink-mcp alone (external mock), %v calls with %v callers", r.Config["concurrent_calls"], r.Config["callers"]),
		func(x runResult) *loadResult { return x.External }, func(x runResult) memory { return x.External.Idle })
	memRow(fmt.Sprintf("storelink-mcp over HTTP + embedded mock, %v calls", r.Config["http_calls"]),
		func(x runResult) *loadResult { return x.HTTP }, func(x runResult) memory { return x.HTTP.Idle })
	if hasLoad {
		p("")
		p("All figures are MiB of resident memory (VmRSS). Idle is a fresh process after the handshake and `tools/list`; the load starts after 200 warm-up calls (for the embedded run, also after the sequential calls).")
		p("")
	}
}
