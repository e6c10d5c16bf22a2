package console

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestViewDrawsTheSameChart: the MCP Apps stock risk view draws this chart
// in the browser (mcpserver/internal/views/risk.js, ADR 0020) from a risk
// check's evidence rows. Its geometry is a copy of this file's: the same
// size, margins, days ahead and flagged days, which this test holds
// together.
func TestViewDrawsTheSameChart(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "internal", "views", "risk.js"))
	if err != nil {
		t.Fatal(err)
	}
	js := string(b)
	m := regexp.MustCompile(`var W = (\d+), H = (\d+), LEFT = (\d+), RIGHT = W - (\d+), TOP = (\d+), BOTTOM = H - (\d+), MAX_AHEAD = (\d+)`).FindStringSubmatch(js)
	if m == nil {
		t.Fatal("risk.js: the chart's geometry line is not where this test reads it")
	}
	var got []int
	for _, s := range m[1:] {
		n, _ := strconv.Atoi(s)
		got = append(got, n)
	}
	want := []int{chartWidth, chartHeight, marginLeft, marginRight, marginTop, marginBot, maxAheadDays}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("risk.js's geometry differs from chart.go's (-chart.go +risk.js):\n%s", diff)
	}
	f := regexp.MustCompile(`var FLAGGED = \[([^\]]*)\]`).FindStringSubmatch(js)
	if f == nil {
		t.Fatal("risk.js: no FLAGGED list")
	}
	var flags []string
	for _, s := range strings.Split(f[1], ",") {
		flags = append(flags, strings.Trim(strings.TrimSpace(s), `"`))
	}
	if diff := cmp.Diff(flaggedDay, flags); diff != "" {
		t.Errorf("risk.js flags other days than chart.go (-chart.go +risk.js):\n%s", diff)
	}
}
