package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"regexp"
	"strconv"
	"strings"
)

// benchLine matches one result line of `go test -bench`, e.g.
// "BenchmarkResolve/chain-explicit-2   21340153   11.03 ns/op   0 B/op   0 allocs/op".
var benchLine = regexp.MustCompile(`^(Benchmark\S+?)(?:-\d+)?\s+(\d+)\s+(.+)$`)

// goBench is every run of one benchmark.
type goBench struct {
	Pkg  string
	Name string
	// Values holds, per unit ("ns/op", "B/op", "allocs/op" or a custom
	// metric), one value per run, in the order they appeared.
	Values map[string][]float64
	units  []string
}

// parseGoBench reads `go test -bench` output (possibly from several
// packages and several -count runs) and groups the runs by benchmark, in
// the order benchmarks first appear.
func parseGoBench(r io.Reader) ([]*goBench, error) {
	var out []*goBench
	byKey := map[string]*goBench{}
	pkg := ""
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		line := sc.Text()
		if p, ok := strings.CutPrefix(line, "pkg: "); ok {
			pkg = strings.TrimSpace(p)
			continue
		}
		m := benchLine.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		key := pkg + " " + m[1]
		b := byKey[key]
		if b == nil {
			b = &goBench{Pkg: pkg, Name: m[1], Values: map[string][]float64{}}
			byKey[key] = b
			out = append(out, b)
		}
		f := strings.Fields(m[3])
		for i := 0; i+1 < len(f); i += 2 {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				return nil, fmt.Errorf("benchmark %s: value %q: %w", m[1], f[i], err)
			}
			unit := f[i+1]
			if _, seen := b.Values[unit]; !seen {
				b.units = append(b.units, unit)
			}
			b.Values[unit] = append(b.Values[unit], v)
		}
	}
	return out, sc.Err()
}

// extraUnits are the custom metrics of a benchmark, beyond time and memory.
func (b *goBench) extraUnits() []string {
	var u []string
	for _, unit := range b.units {
		switch unit {
		case "ns/op", "B/op", "allocs/op", "MB/s":
		default:
			u = append(u, unit)
		}
	}
	return u
}

// humanNS renders nanoseconds in the unit that keeps the figure short.
func humanNS(ns float64) string {
	switch {
	case ns >= 1e6:
		return fmt.Sprintf("%.2f ms", ns/1e6)
	case ns >= 1e3:
		return fmt.Sprintf("%.1f µs", ns/1e3)
	default:
		return fmt.Sprintf("%.1f ns", ns)
	}
}

func humanBytes(b float64) string {
	switch {
	case b >= 1<<20:
		return fmt.Sprintf("%.2f MiB", b/(1<<20))
	case b >= 1<<10:
		return fmt.Sprintf("%.1f KiB", b/(1<<10))
	default:
		return fmt.Sprintf("%.0f B", b)
	}
}

// goBenchMarkdown renders the Go benchmarks, one row per benchmark.
func (r *report) goBenchMarkdown(p func(string, ...any)) {
	if len(r.goBench) == 0 {
		return
	}
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

// readGoBench parses the go test -bench output in file.
func readGoBench(file string) ([]*goBench, error) {
	f, err := os.Open(file)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return parseGoBench(f)
}
