package main

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"slices"
	"strconv"
	"strings"
)

// initTraceRuns is how many times the binary's package initialisation is
// traced per run; each package's figure is the median over them.
const initTraceRuns = 9

// initTrace runs `bin version` n times with GODEBUG=inittrace=1 and returns
// the median initialisation time of each package, in milliseconds.
func initTrace(ctx context.Context, bin string, n int, env []string) (map[string]float64, error) {
	times := map[string][]float64{}
	for range n {
		cmd := exec.CommandContext(ctx, bin, "version")
		cmd.Env = append(slices.Clone(env), "GODEBUG=inittrace=1")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			return nil, fmt.Errorf("%s version: %w: %s", bin, err, strings.TrimSpace(stderr.String()))
		}
		for pkg, ms := range parseInitTrace(stderr.String()) {
			times[pkg] = append(times[pkg], ms)
		}
	}
	out := make(map[string]float64, len(times))
	for pkg, v := range times {
		out[pkg] = median(v)
	}
	return out, nil
}

// parseInitTrace reads the runtime's inittrace lines,
//
//	init PACKAGE @START ms, CLOCK ms clock, BYTES bytes, ALLOCS allocs
//
// into each package's clock milliseconds; other lines are skipped.
func parseInitTrace(s string) map[string]float64 {
	out := map[string]float64{}
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 7 || f[0] != "init" || f[6] != "clock," {
			continue
		}
		ms, err := strconv.ParseFloat(f[4], 64)
		if err != nil {
			continue
		}
		out[f[1]] += ms
	}
	return out
}
