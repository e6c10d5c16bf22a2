package main

import (
	"fmt"
	"strings"
	"testing"
)

func TestTelemetryMarkdownComparesWithOff(t *testing.T) {
	run := func(offP50, onP50, offRate, onRate float64) runResult {
		return runResult{Telemetry: []telemetryResult{
			{Setting: telemetrySettings[0].Name, P50MS: offP50, CallsPerSec: offRate},
			{Setting: telemetrySettings[1].Name, P50MS: onP50, CallsPerSec: onRate},
			{Setting: telemetrySettings[2].Name, P50MS: onP50, CallsPerSec: onRate},
		}}
	}
	r := &report{Config: map[string]any{"callers": 8}, Runs: []runResult{run(1, 1.1, 1000, 950), run(1, 1.1, 1000, 950)}}
	var b strings.Builder
	r.telemetryMarkdown(func(f string, a ...any) { fmt.Fprintf(&b, f+"\n", a...) })
	md := b.String()
	for _, want := range []string{"| off | 1.000 | 1000 |  |  |", "| +10.0% | +5.0% |", "8 sessions"} {
		if !strings.Contains(md, want) {
			t.Errorf("no %q in:\n%s", want, md)
		}
	}
}
