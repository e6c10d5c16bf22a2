package main

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mockstorelink"
)

// toolBudgetBytes is the server's own budget for its tool definitions.
const toolBudgetBytes = mcpserver.ToolBudgetBytes

// machine is where the figures were taken.
type machine struct {
	CPUs       int    `json:"cpus"`
	CPUModel   string `json:"cpu_model"`
	MemTotal   string `json:"mem_total"`
	Kernel     string `json:"kernel"`
	GoVersion  string `json:"go_version"`
	LoadBefore string `json:"loadavg_before"`
	LoadAfter  string `json:"loadavg_after"`
}

func describeMachine() machine {
	m := machine{CPUs: runtime.NumCPU(), LoadBefore: loadavg()}
	m.CPUModel = procField("/proc/cpuinfo", "model name")
	m.MemTotal = procField("/proc/meminfo", "MemTotal")
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		m.Kernel = strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("go", "version").Output(); err == nil {
		m.GoVersion = strings.TrimPrefix(strings.TrimSpace(string(out)), "go version ")
	} else {
		m.GoVersion = runtime.Version()
	}
	return m
}

func procField(path, key string) string {
	f, err := os.Open(path)
	if err != nil {
		return "unknown"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

// load1 is the 1-minute figure of a "1 5 15" load average.
func load1(avg string) string {
	if f := strings.Fields(avg); len(f) > 0 {
		return f[0]
	}
	return "unknown"
}

func loadavg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}

// report is the whole benchmark run.
type report struct {
	Machine  machine        `json:"machine"`
	Config   map[string]any `json:"config"`
	Started  time.Time      `json:"started"`
	Finished time.Time      `json:"finished"`
	HTTPNote string         `json:"http"`
	Runs     []runResult    `json:"runs"`
	goBench  []*goBench
}

// over collects one figure from every run.
func (r *report) over(f func(runResult) (float64, bool)) spread {
	var v []float64
	for _, run := range r.Runs {
		if x, ok := f(run); ok {
			v = append(v, x)
		}
	}
	return spreadOf(v)
}

func median(v []float64) float64 { return spreadOf(v).Median }

// mockRatio is a / b within each run, the only fair way to compare two
// servers on a shared machine.
func (r *report) mockRatio(a, b string) spread {
	return r.over(func(run runResult) (float64, bool) {
		x, okA := run.Mocks[a]
		y, okB := run.Mocks[b]
		if !okA || !okB || y.RequestsPerSec == 0 {
			return 0, false
		}
		return x.RequestsPerSec / y.RequestsPerSec, true
	})
}

func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	m := r.Machine
	p("# Benchmark results")
	p("")
	p("Taken %s (load driver: %.0f s). Figures are `median (min–max)` over %d runs; latency percentiles are per run, then summarised the same way.",
		r.Started.Format("2006-01-02 15:04 MST"), r.Finished.Sub(r.Started).Seconds(), len(r.Runs))
	p("")
	p("| Machine | |")
	p("|---|---|")
	p("| CPUs (nproc) | %d |", m.CPUs)
	p("| CPU model | %s |", m.CPUModel)
	p("| Memory | %s |", m.MemTotal)
	p("| Kernel | %s |", m.Kernel)
	p("| Go | %s |", m.GoVersion)
	p("| Load average (1, 5, 15 min) when `make bench` began / at the end | %s / %s |", m.LoadBefore, m.LoadAfter)
	p("")
	p("1-minute load average: %s at the start, %s at the end (2 cores: above about 1, other work shares the machine and latencies are pessimistic; the same-run ratios hold better).", load1(m.LoadBefore), load1(m.LoadAfter))
	p("")

	cold := r.over(func(x runResult) (float64, bool) { return median(x.ColdStartMS), len(x.ColdStartMS) > 0 })
	coldP90 := r.over(func(x runResult) (float64, bool) { return p90(x.ColdStartMS), len(x.ColdStartMS) > 0 })
	seqP50 := r.over(func(x runResult) (float64, bool) { return lOrZero(x.Seq).Latency.P50MS, x.Seq != nil })
	concRate := r.over(func(x runResult) (float64, bool) { return lOrZero(x.Conc).Latency.CallsPerSec, x.Conc != nil })
	idle := r.over(func(x runResult) (float64, bool) {
		if x.EmbeddedIdle == nil {
			return 0, false
		}
		return mb(x.EmbeddedIdle.RSSKB), true
	})
	growthOf := func(get func(runResult) *loadResult) spread {
		return r.over(func(x runResult) (float64, bool) {
			l := get(x)
			if l == nil {
				return 0, false
			}
			g, ok := l.growth()
			return mb(g), ok
		})
	}
	growthAlone := growthOf(func(x runResult) *loadResult { return x.External })
	growthEmbedded := growthOf(func(x runResult) *loadResult { return x.Conc })
	fullVsPrism := r.mockRatio(mockFull, mockPrism)
	toolBytes := r.over(func(x runResult) (float64, bool) {
		if x.Tools == nil {
			return 0, false
		}
		return float64(x.Tools.ModelVisibleBytes), true
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
	coldExtMedian := r.over(func(x runResult) (float64, bool) {
		return median(x.ColdStartExternalMS), len(x.ColdStartExternalMS) > 0
	})
	coldRelMedian := r.over(func(x runResult) (float64, bool) {
		return median(x.ColdStartReleaseMS), len(x.ColdStartReleaseMS) > 0
	})
	if coldRelMedian.N > 0 {
		// The target is on the binary that ships (ADR 0015); the default
		// build with UPSTREAM_BASE_URL set stays in the cold-start table.
		target(coldRelMedian, "Same with `UPSTREAM_BASE_URL` set, release build (`-tags nodemo`, as archives and image ship): median at most 35 ms", coldRelMedian.format(1)+" ms", func(s spread) bool { return s.Median <= 35 })
	} else {
		target(coldExtMedian, "Same with `UPSTREAM_BASE_URL` set (no embedded mock): median at most 35 ms", coldExtMedian.format(1)+" ms", func(s spread) bool { return s.Median <= 35 })
	}
	listBytes := r.over(func(x runResult) (float64, bool) {
		if x.Tools == nil {
			return 0, false
		}
		return float64(x.Tools.ToolsListBytes), true
	})
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
	p("")
	if seqP50.N+concRate.N+idle.N+growthAlone.N+growthEmbedded.N > 0 {
		p("Growth is the resident-set change over the second half of the calls (RSS sampled after every tenth); \"no growth\" means under 1 MiB. The first half is left out because the heap target, connection pools and SQLite's page cache fill up there and then stay put; the memory table shows the whole course.")
		p("")
	}

	hasLoad := r.over(func(x runResult) (float64, bool) {
		return 0, x.Seq != nil || x.Conc != nil || x.External != nil || x.HTTP != nil
	}).N > 0
	if hasLoad {
		p("## storelink-mcp, `korral_check_stock_risk` for the butter at store 47")
		p("")
		p("| Transport and load | Calls/run | p50 ms | p95 ms | p99 ms | Calls/s | Server CPU ms/call | Errors |")
		p("|---|---|---|---|---|---|---|---|")
	}
	row := func(name string, get func(runResult) *loadResult) {
		s := func(f func(latencies) float64, d int) string {
			return r.over(func(x runResult) (float64, bool) {
				l := get(x)
				if l == nil {
					return 0, false
				}
				return f(l.Latency), true
			}).format(d)
		}
		calls := r.over(func(x runResult) (float64, bool) {
			l := get(x)
			return float64(lOrZero(l).Latency.Calls), l != nil
		})
		if calls.N == 0 {
			return
		}
		cpu := r.over(func(x runResult) (float64, bool) {
			l := get(x)
			return lOrZero(l).CPUPerCallMS, l != nil
		})
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
	r.writesMarkdown(p)
	r.telemetryMarkdown(p)
	r.scaleMarkdown(p)
	r.distanceMarkdown(p)
	if cold.N > 0 {
		coldExt := r.over(func(x runResult) (float64, bool) {
			return median(x.ColdStartExternalMS), len(x.ColdStartExternalMS) > 0
		})
		coldExtP90 := r.over(func(x runResult) (float64, bool) { return p90(x.ColdStartExternalMS), len(x.ColdStartExternalMS) > 0 })
		p("| Cold start: exec to a completed `tools/list` (%v starts per run) | median ms | p90 ms |", r.Config["cold_starts_per_run"])
		p("|---|---|---|")
		p("| zero configuration: embedded mock StoreLink built at start | %s | %s |", cold.format(1), coldP90.format(1))
		if coldExt.N > 0 {
			p("| `UPSTREAM_BASE_URL` set, default build: no embedded mock started, its packages still linked | %s | %s |", coldExt.format(1), coldExtP90.format(1))
		}
		coldRel := r.over(func(x runResult) (float64, bool) { return median(x.ColdStartReleaseMS), len(x.ColdStartReleaseMS) > 0 })
		coldRelP90 := r.over(func(x runResult) (float64, bool) { return p90(x.ColdStartReleaseMS), len(x.ColdStartReleaseMS) > 0 })
		if coldRel.N > 0 {
			p("| `UPSTREAM_BASE_URL` set, release build (`-tags nodemo`): embedded mock not linked | %s | %s |", coldRel.format(1), coldRelP90.format(1))
		}
		p("")
	}
	if inits := r.initRows(8); len(inits) > 0 {
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

	if hasLoad {
		p("## Memory of the server process (from /proc/PID/status)")
		p("")
		p("| Process | Idle | Load start | Half-way | End | Peak (VmHWM) | Second-half growth |")
		p("|---|---|---|---|---|---|---|")
	}
	memRow := func(name string, get func(runResult) *loadResult, idleOf func(runResult) memory) {
		f := func(g func(runResult, *loadResult) (int64, bool)) string {
			return r.over(func(x runResult) (float64, bool) {
				l := get(x)
				if l == nil {
					return 0, false
				}
				v, ok := g(x, l)
				return mb(v), ok
			}).format(1)
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

	if len(r.Runs) > 0 && len(r.Runs[0].Mocks) > 0 {
		p("## Mock StoreLink throughput (wrk %v, `GET %s` with the store key)", r.Config["wrk"], inventoryPath)
		p("")
		p("| Server | Requests/s | p50 ms | p99 ms | Non-2xx | Peak RSS MiB |")
		p("|---|---|---|---|---|---|")
		for _, name := range []string{mockFull, mockNoResp, mockPrism} {
			get := func(f func(wrkResult) float64) spread {
				return r.over(func(x runResult) (float64, bool) {
					w, ok := x.Mocks[name]
					return f(w), ok
				})
			}
			rps := get(func(w wrkResult) float64 { return w.RequestsPerSec })
			if rps.N == 0 {
				continue
			}
			p("| %s | %s | %s | %s | %s | %s |", name, rps.format(0),
				get(func(w wrkResult) float64 { return w.P50MS }).format(2),
				get(func(w wrkResult) float64 { return w.P99MS }).format(2),
				get(func(w wrkResult) float64 { return float64(w.Non2xx) }).format(0),
				get(func(w wrkResult) float64 { return mb(w.Peak.HWMKB) }).format(1))
		}
		p("")
		p("| Ratio (within each run) | |")
		p("|---|---|")
		if fullVsPrism.N > 0 {
			p("| mockstorelink full validation / Prism | %sx |", fullVsPrism.format(1))
			p("| mockstorelink request validation only / Prism | %sx |", r.mockRatio(mockNoResp, mockPrism).format(1))
		}
		p("| mockstorelink request only / full validation | %sx |", r.mockRatio(mockNoResp, mockFull).format(2))
		p("")
	}

	if len(r.Runs) > 0 && r.Runs[0].Tools != nil {
		t := r.Runs[0].Tools
		p("## Tool definitions")
		p("")
		p("| Tools | Model-visible bytes | Budget | Share of budget | Whole `tools/list` result (with output schemas) |")
		p("|---|---|---|---|---|")
		p("| %d | %d | %d | %.0f%% | %d bytes |", t.Tools, t.ModelVisibleBytes, toolBudgetBytes, 100*float64(t.ModelVisibleBytes)/toolBudgetBytes, t.ToolsListBytes)
		p("")
	}

	if len(r.goBench) > 0 {
		p("## Go benchmarks (`go test -bench -benchmem`)")
		p("")
		p("| Package | Benchmark | Time/op median (min–max) | Bytes/op | Allocs/op | Other |")
		p("|---|---|---|---|---|---|")
		for _, gb := range r.goBench {
			ns := spreadOf(gb.Values["ns/op"])
			timeCol := humanNS(ns.Median)
			if ns.N > 1 {
				timeCol = fmt.Sprintf("%s (%s–%s)", humanNS(ns.Median), humanNS(ns.Min), humanNS(ns.Max))
			}
			var other []string
			for _, u := range gb.extraUnits() {
				other = append(other, fmt.Sprintf("%.0f %s", median(gb.Values[u]), u))
			}
			p("| %s | %s | %s | %s | %s | %s |", shortPkg(gb.Pkg), strings.TrimPrefix(gb.Name, "Benchmark"), timeCol,
				humanBytes(median(gb.Values["B/op"])), fmt.Sprintf("%.0f", median(gb.Values["allocs/op"])), strings.Join(other, ", "))
		}
		p("")
	}
	return b.String()
}

func lOrZero(l *loadResult) loadResult {
	if l == nil {
		return loadResult{}
	}
	return *l
}

func p90(v []float64) float64 {
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s) == 0 {
		return 0
	}
	i := (len(s)*9+9)/10 - 1
	return s[min(max(i, 0), len(s)-1)]
}

func met(ok bool) string {
	if ok {
		return "yes"
	}
	return "**no**"
}

func shortPkg(p string) string {
	return strings.TrimPrefix(p, "github.com/korral/storelink/")
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

// seqP50Before is the single-caller p50 of `korral_check_stock_risk` over
// stdio before group commit (ADR 0026), the figure issue 35 asks not to
// worsen, from the run seqP50BeforeRun (docs/benchmarks-history.md). It is
// another run's figure: read it with both runs' load averages.
const (
	seqP50Before    = 3.35
	seqP50BeforeRun = "`make bench` of 2026-12-01 12:16 UTC, load 2.19"
)

// distanceFigures is one row of the distance phase over the runs.
type distanceFigures struct {
	label, master, note string
	stores              int
	limit               distanceLimit
	available           bool
	// calls, wall, p90 and floor are per run: the calls measured, the
	// median and p90 wall at distance, and the floor's median wall.
	calls, wall, p90, floor spread
	// ratio is the median wall against the limit within each run,
	// overFloor the round trips less the floor.
	ratio, roundTrips, overFloor spread
	received                     []requestCounts
}

func (d distanceFigures) met() bool { return d.limit.met(d.ratio.Median) }

// measured is the figure the limit is about, with its ratio to the limit.
func (d distanceFigures) measured() string {
	if d.limit.RoundTrips > 0 {
		return fmt.Sprintf("%s round trips, %sx the limit", d.roundTrips.format(2), d.ratio.format(2))
	}
	return fmt.Sprintf("%s ms, %sx the limit", d.wall.format(0), d.ratio.format(2))
}

// distanceRows gathers the distance phase's rows over the runs, in the
// order the phase measures them. A row is available when any run made it.
func (r *report) distanceRows() []distanceFigures {
	var out []distanceFigures
	world := 0
	for _, run := range r.Runs {
		if run.Distance != nil {
			world = run.Distance.WorldStores
			break
		}
	}
	if world == 0 {
		return nil
	}
	for _, master := range distanceMasters {
		for _, n := range distanceCases {
			key := distanceRow{Stores: n, Master: master}.key()
			var rows []distanceRow
			for _, run := range r.Runs {
				if run.Distance == nil {
					continue
				}
				for _, row := range run.Distance.Rows {
					if row.key() == key {
						rows = append(rows, row)
					}
				}
			}
			if len(rows) == 0 {
				continue
			}
			f := distanceFigures{label: storesLabel(n, world), master: master, stores: n, limit: limitFor(n, master)}
			var calls, wall, p9, floor, ratio, rt, over []float64
			for _, row := range rows {
				if !row.Available || len(row.WallMS) == 0 {
					if f.note == "" {
						f.note = row.Note
					}
					continue
				}
				f.available = true
				med := median(row.WallMS)
				calls = append(calls, float64(len(row.WallMS)))
				wall = append(wall, med)
				p9 = append(p9, p90(row.WallMS))
				ratio = append(ratio, f.limit.ratio(med, distanceDelay))
				rt = append(rt, roundTrips(med, distanceDelay))
				if len(row.FloorMS) > 0 {
					fl := median(row.FloorMS)
					floor = append(floor, fl)
					over = append(over, roundTrips(med-fl, distanceDelay))
				}
				if row.Received != nil {
					f.received = append(f.received, *row.Received)
				}
			}
			f.calls, f.wall, f.p90, f.floor = spreadOf(calls), spreadOf(wall), spreadOf(p9), spreadOf(floor)
			f.ratio, f.roundTrips, f.overFloor = spreadOf(ratio), spreadOf(rt), spreadOf(over)
			out = append(out, f)
		}
	}
	return out
}

// distanceMarkdown renders the distance phase: walls, round trips, limits
// and ratios, the floor, and what the mock received.
func (r *report) distanceMarkdown(p func(string, ...any)) {
	rows := r.distanceRows()
	if len(rows) == 0 {
		return
	}
	p("## StoreLink at a distance: %d ms on every route, a world of %d stores and %d SKUs", distanceDelay.Milliseconds(), distanceWorldStores, distanceWorldSKUs)
	p("")
	p("`korral_check_stock_risk` for the butter (SKU %s) over stdio against `mockstorelink --stores %d --skus %d` with its latency fault on every route and a key for every store; store 47 first, then by id. Master data cold is `MASTER_DATA_TTL=0` (every call reads the stores, the SKU and its supplier again), warm the default TTL after one call. The sweep is `store_ids: [\"all\"]`. Round trips are the median wall over %d ms: the critical path in StoreLink round trips. The floor is the same call with no latency, in the same run: the local work, which a loaded machine inflates; round trips over the floor leave it out. Up to %v calls a row (the sweep half), each run's figures summarised over the runs.",
		mockstorelink.SKUButter, distanceWorldStores, distanceWorldSKUs, distanceDelay.Milliseconds(), r.Config["distance_calls"])
	p("")
	p("| Stores | Master data | Calls | Median ms | p90 ms | Round trips | Limit | × limit | Met | Floor median ms | Round trips over the floor |")
	p("|---|---|---|---|---|---|---|---|---|---|---|")
	for _, d := range rows {
		if !d.available {
			p("| %s | %s | 0 | not available: %s | | | %s | | n/a | | |", d.label, d.master, d.note, d.limit)
			continue
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %sx | %s | %s | %s |", d.label, d.master, d.calls.format(0), d.wall.format(0), d.p90.format(0),
			d.roundTrips.format(2), d.limit, d.ratio.format(2), met(d.met()), d.floor.format(1), d.overFloor.format(2))
	}
	p("")
	p("What the mock received for one call at distance (`/_admin/requests`; per store: the fewest–most of any store asked). Expected: each store's inventory and POS once, the SKU and its supplier at most once (none when warm), nothing else.")
	p("")
	p("| Stores | Master data | Stores asked | Inventory per store | POS per store | Store reads | SKU reads | Supplier reads | Other | As expected |")
	p("|---|---|---|---|---|---|---|---|---|---|")
	for _, d := range rows {
		if len(d.received) == 0 {
			continue
		}
		each := func(f func(requestCounts) int) spread {
			var v []float64
			for _, c := range d.received {
				v = append(v, float64(f(c)))
			}
			return spreadOf(v)
		}
		perStore := func(lo, hi func(requestCounts) int) string {
			a, b := each(lo), each(hi)
			if a.Min == b.Max {
				return a.format(0)
			}
			return fmt.Sprintf("%.0f–%.0f", a.Min, b.Max)
		}
		want := d.stores
		if want == 0 {
			want = distanceWorldStores
		}
		ok := true
		for _, c := range d.received {
			ok = ok && c.asExpected(want)
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", d.label, d.master,
			each(func(c requestCounts) int { return c.Stores }).format(0),
			perStore(func(c requestCounts) int { return c.InventoryMin }, func(c requestCounts) int { return c.InventoryMax }),
			perStore(func(c requestCounts) int { return c.POSMin }, func(c requestCounts) int { return c.POSMax }),
			each(func(c requestCounts) int { return c.StoreReads }).format(0),
			each(func(c requestCounts) int { return c.SKUReads }).format(0),
			each(func(c requestCounts) int { return c.SupplierReads }).format(0),
			each(func(c requestCounts) int { return c.Other }).format(0),
			met(ok))
	}
	p("")
}

// ownModule prefixes this repository's packages.
const ownModule = "github.com/korral/storelink/"
