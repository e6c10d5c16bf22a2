package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver"
)

// toolBudgetBytes is the server's own budget for its tool definitions.
const toolBudgetBytes = mcpserver.ToolBudgetBytes

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

// markdown renders the whole report, section by section; a section with no
// figures is left out.
func (r *report) markdown() string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	r.machineMarkdown(p)
	r.targetsMarkdown(p)
	r.loadMarkdown(p)
	r.writesMarkdown(p)
	r.telemetryMarkdown(p)
	r.scaleMarkdown(p)
	r.distanceMarkdown(p)
	r.cpuMarkdown(p)
	r.coldStartMarkdown(p)
	r.initMarkdown(p)
	r.memoryMarkdown(p)
	r.mocksMarkdown(p)
	r.toolsMarkdown(p)
	r.goBenchMarkdown(p)
	return b.String()
}

// medianOf and p90Of summarise one per-run list of figures over the runs;
// a run with an empty list is left out.
func (r *report) medianOf(get func(runResult) []float64) spread {
	return r.over(func(x runResult) (float64, bool) { v := get(x); return median(v), len(v) > 0 })
}

func (r *report) p90Of(get func(runResult) []float64) spread {
	return r.over(func(x runResult) (float64, bool) { v := get(x); return p90(v), len(v) > 0 })
}

// toolsMarkdown renders the size of the tool definitions against the budget.
func (r *report) toolsMarkdown(p func(string, ...any)) {
	if len(r.Runs) == 0 || r.Runs[0].Tools == nil {
		return
	}
	t := r.Runs[0].Tools
	p("## Tool definitions")
	p("")
	p("| Tools | Model-visible bytes | Budget | Share of budget | Whole `tools/list` result (with output schemas) |")
	p("|---|---|---|---|---|")
	p("| %d | %d | %d | %.0f%% | %d bytes |", t.Tools, t.ModelVisibleBytes, toolBudgetBytes, 100*float64(t.ModelVisibleBytes)/toolBudgetBytes, t.ToolsListBytes)
	p("")
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

// ownModule prefixes this repository's packages.
const ownModule = "github.com/korral/storelink/"
