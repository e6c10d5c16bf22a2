package main

import (
	"strings"
	"testing"
)

func scaleRunOf(floorRate, trivialRate, floorP50, trivialP50 float64) runResult {
	lr := func(rate, p50 float64) loadResult {
		return loadResult{Latency: latencies{Calls: 100, CallsPerSec: rate, P50MS: p50, P99MS: 2 * p50}, End: memory{RSSKB: 30 * 1024}}
	}
	return runResult{Scale: &scaleResult{State: "PostgreSQL", Clients: 50,
		Floor: lr(floorRate, floorP50), Trivial: lr(trivialRate, trivialP50), Risk: lr(trivialRate/4, 4*trivialP50)}}
}

func TestScaleMarkdownComparesEachRunWithItsOwnFloor(t *testing.T) {
	// Run 1 on a quiet machine, run 2 on a busy one: within each run the
	// trivial call is 0.75x and 0.85x the floor. Medians of the absolute
	// figures would give 1500/1500 = 1.00x, a ratio no run measured.
	r := &report{Config: map[string]any{"scale_calls": 100, "scale_http_args": "serve --http {addr} --stateless"},
		Runs: []runResult{scaleRunOf(2000, 1500, 10, 12), scaleRunOf(1000, 850, 20, 22), scaleRunOf(1500, 1200, 15, 16)}}
	var b strings.Builder
	r.scaleMarkdown(func(f string, a ...any) { b.WriteString(fmtS(f, a...) + "\n") })
	md := b.String()
	for _, want := range []string{
		"## The remote deployment at scale: 50 MCP clients",
		"with its state on PostgreSQL",
		"| storelink-mcp, `korral_list_authorized_stores` | 1200 (850–1500) | 0.80 (0.75–0.85)x |",
		"| bare go-sdk v1.8.0 echo server, `echo` (the floor) | 1500 (1000–2000) | 1.00x |",
		"at least 0.8x the floor's calls/s | 0.80 (0.75–0.85)x | yes |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	r.Runs[2] = scaleRunOf(1500, 1100, 15, 16) // 0.73x: the median run is below the target now
	b.Reset()
	r.scaleMarkdown(func(f string, a ...any) { b.WriteString(fmtS(f, a...) + "\n") })
	if !strings.Contains(b.String(), "| 0.75 (0.73–0.85)x | **no** |") {
		t.Errorf("a median ratio under the target is not reported as unmet:\n%s", b.String())
	}
}

func TestMCPServerCallsButterUnlessToldOtherwise(t *testing.T) {
	s := &mcpServer{}
	if got := s.call().Name; got != "korral_check_stock_risk" {
		t.Errorf("default call: %s", got)
	}
	s.params = trivialParams
	if got := s.call().Name; got != "korral_list_authorized_stores" {
		t.Errorf("trivial call: %s", got)
	}
}
