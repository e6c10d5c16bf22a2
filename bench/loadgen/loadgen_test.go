package main

import (
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func TestPercentileIsNearestRank(t *testing.T) {
	var d []time.Duration
	for i := 1; i <= 100; i++ {
		d = append(d, time.Duration(i)*time.Millisecond)
	}
	for _, c := range []struct {
		p    float64
		want time.Duration
	}{{50, 50 * time.Millisecond}, {95, 95 * time.Millisecond}, {99, 99 * time.Millisecond}, {100, 100 * time.Millisecond}, {0.1, time.Millisecond}} {
		if got := percentile(d, c.p); got != c.want {
			t.Errorf("p%v = %v, want %v", c.p, got, c.want)
		}
	}
	if got := percentile([]time.Duration{7}, 99); got != 7 {
		t.Errorf("one sample: %v", got)
	}
	if got := percentile(nil, 50); got != 0 {
		t.Errorf("no samples: %v", got)
	}
}

func TestSummariseDoesNotReorderTheCallersSlice(t *testing.T) {
	d := []time.Duration{3 * time.Millisecond, time.Millisecond, 2 * time.Millisecond}
	l := summarise(d, 1, time.Second)
	if l.P50MS != 2 || l.MaxMS != 3 || l.Calls != 3 || l.Errors != 1 || l.CallsPerSec != 3 {
		t.Fatalf("%+v", l)
	}
	if d[0] != 3*time.Millisecond {
		t.Fatal("summarise sorted its input in place")
	}
}

func TestSpread(t *testing.T) {
	if got := spreadOf([]float64{5, 1, 3}); got != (spread{Min: 1, Median: 3, Max: 5, N: 3}) {
		t.Errorf("odd: %+v", got)
	}
	if got := spreadOf([]float64{4, 1, 3, 2}); got.Median != 2.5 {
		t.Errorf("even: %+v", got)
	}
	if got := spreadOf([]float64{1.234, 2, 3}).format(1); got != "2.0 (1.2–3.0)" {
		t.Errorf("format: %q", got)
	}
	if got := spreadOf(nil).format(1); got != "n/a" {
		t.Errorf("empty: %q", got)
	}
}

// wrkOutput is wrk 4.x's report with --latency.
const wrkOutput = `Running 5s test @ http://127.0.0.1:41234/v1/stores/47/inventory?sku=8847291
  2 threads and 10 connections
  Thread Stats   Avg      Stdev     Max   +/- Stdev
    Latency   412.05us  601.33us  14.20ms   93.10%
    Req/Sec    12.11k     1.02k   14.50k    71.00%
  Latency Distribution
     50%  256.00us
     75%  401.00us
     90%  801.00us
     99%    3.10ms
  120533 requests in 5.00s, 28.51MB read
  Socket errors: connect 0, read 0, write 0, timeout 2
  Non-2xx or 3xx responses: 17
Requests/sec:  24106.60
Transfer/sec:      5.70MB
`

func TestParseWrk(t *testing.T) {
	got, err := parseWrk(wrkOutput)
	if err != nil {
		t.Fatal(err)
	}
	want := wrkResult{RequestsPerSec: 24106.60, P50MS: 0.256, P99MS: 3.10, Requests: 120533, Non2xx: 17, SocketErrors: "connect 0, read 0, write 0, timeout 2"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Error(diff)
	}
	if _, err := parseWrk("unable to connect to 127.0.0.1:1 Connection refused"); err == nil {
		t.Error("no error for output without a rate")
	}
}

const goBenchOutput = `goos: linux
goarch: amd64
pkg: github.com/korral/storelink/mcpserver/internal/keyring
cpu: AMD EPYC
BenchmarkResolve/chain-explicit-2         	21340153	        11.03 ns/op	       0 B/op	       0 allocs/op
BenchmarkResolve/chain-explicit-2         	21340153	        12.00 ns/op	       0 B/op	       0 allocs/op
PASS
ok  	github.com/korral/storelink/mcpserver/internal/keyring	1.392s
pkg: github.com/korral/storelink/mcpserver
BenchmarkToolsList-2   	     499	   4158796 ns/op	      4144 model-visible-bytes	 1460845 B/op	    7403 allocs/op
BenchmarkResolve/chain-explicit-2         	21340153	        99 ns/op
`

func TestParseGoBenchGroupsRunsPerPackage(t *testing.T) {
	got, err := parseGoBench(strings.NewReader(goBenchOutput))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 3 {
		t.Fatalf("want 3 benchmarks (same name in two packages stays apart), got %d", len(got))
	}
	r := got[0]
	if r.Name != "BenchmarkResolve/chain-explicit" || !strings.HasSuffix(r.Pkg, "/keyring") {
		t.Errorf("first: %s %s", r.Pkg, r.Name)
	}
	if diff := cmp.Diff([]float64{11.03, 12}, r.Values["ns/op"]); diff != "" {
		t.Error(diff)
	}
	l := got[1]
	if diff := cmp.Diff([]string{"model-visible-bytes"}, l.extraUnits()); diff != "" {
		t.Error(diff)
	}
	if l.Values["allocs/op"][0] != 7403 {
		t.Errorf("allocs: %v", l.Values["allocs/op"])
	}
}

func TestHumanUnits(t *testing.T) {
	for in, want := range map[float64]string{2.243: "2.2 ns", 32831: "32.8 µs", 4158796: "4.16 ms"} {
		if got := humanNS(in); got != want {
			t.Errorf("humanNS(%v) = %q, want %q", in, got, want)
		}
	}
	for in, want := range map[float64]string{976: "976 B", 13950: "13.6 KiB", 1460845: "1.39 MiB"} {
		if got := humanBytes(in); got != want {
			t.Errorf("humanBytes(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestGrowthIsOverTheSecondHalf(t *testing.T) {
	l := loadResult{}
	for i := 1; i <= 10; i++ {
		// Fills up over the first half, then flat but for one late blip.
		rss := int64(20000 + min(i, 5)*1000)
		l.Checkpoints = append(l.Checkpoints, checkpoint{Calls: i * 1000, memory: memory{RSSKB: rss}})
	}
	l.Checkpoints[9].RSSKB += 300
	if g, ok := l.growth(); !ok || g != 300 {
		t.Errorf("growth = %d, %v; want 300 (checkpoint 5 to 10)", g, ok)
	}
	if _, ok := (&loadResult{Checkpoints: l.Checkpoints[:1]}).growth(); ok {
		t.Error("growth from one checkpoint")
	}
}

func TestReadProcOfThisProcess(t *testing.T) {
	m, err := readMemory(os.Getpid())
	if err != nil || m.RSSKB <= 0 || m.HWMKB < m.RSSKB {
		t.Fatalf("%+v %v", m, err)
	}
	if _, err := cpuTime(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}

func TestParseInitTraceSumsEachPackagesClock(t *testing.T) {
	trace := `init internal/bytealg @0.007 ms, 0 ms clock, 0 bytes, 0 allocs
init github.com/santhosh-tekuri/jsonschema/v6 @38 ms, 9.5 ms clock, 4586912 bytes, 61077 allocs
storelink-mcp v0.0.0
init github.com/korral/storelink/mcpserver @61 ms, 0.006 ms clock, 5400 bytes, 46 allocs
init github.com/korral/storelink/mcpserver @62 ms, 0.004 ms clock, 10 bytes, 1 allocs
init broken @1 ms, x ms clock, 0 bytes, 0 allocs
`
	want := map[string]float64{
		"internal/bytealg":                         0,
		"github.com/santhosh-tekuri/jsonschema/v6": 9.5,
		"github.com/korral/storelink/mcpserver":    0.01,
	}
	got := parseInitTrace(trace)
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Fatalf("parseInitTrace (-want +got):\n%s", diff)
	}
}

func TestInitRowsPutTheTotalOursAndTheSlowestFirst(t *testing.T) {
	r := &report{Runs: []runResult{
		{InitMS: map[string]float64{"a": 1, "b": 10, ownModule + "x": 0.5}},
		{InitMS: map[string]float64{"a": 3, "b": 12, ownModule + "x": 0.5}},
	}}
	rows := r.initRows(2)
	var names []string
	for _, row := range rows {
		names = append(names, row.name)
	}
	if want := []string{"all packages", "this module's packages (`github.com/korral/storelink/...`)", "`b`", "`a`"}; !cmp.Equal(names, want) {
		t.Fatalf("rows %q, want %q", names, want)
	}
	if rows[0].ms.Median != 13.5 || rows[1].ms.Median != 0.5 || rows[2].ms.Max != 12 {
		t.Fatalf("figures %+v", rows)
	}
}

// TestSectionsAreEmptyWithoutTheirPhase: a run that measured nothing gives
// no section but the targets table's heading.
func TestSectionsAreEmptyWithoutTheirPhase(t *testing.T) {
	r := &report{Runs: []runResult{{}}}
	for name, section := range map[string]func(func(string, ...any)){
		"load": r.loadMarkdown, "writes": r.writesMarkdown,
		"telemetry": r.telemetryMarkdown, "scale": r.scaleMarkdown, "distance": r.distanceMarkdown, "cpu": r.cpuMarkdown,
		"cold start": r.coldStartMarkdown, "init": r.initMarkdown, "memory": r.memoryMarkdown,
		"mocks": r.mocksMarkdown, "tools": r.toolsMarkdown, "go benchmarks": r.goBenchMarkdown,
	} {
		var b strings.Builder
		section(func(f string, a ...any) { b.WriteString(fmtS(f, a...)) })
		if b.Len() != 0 {
			t.Errorf("%s without its phase: %q", name, b.String())
		}
	}
}
