package main

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// percentile returns the p-th percentile (0 < p <= 100) of sorted by the
// nearest-rank method, so the figure is a latency that was actually observed.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	rank = min(max(rank, 1), len(sorted))
	return sorted[rank-1]
}

// latencies summarises one load phase.
type latencies struct {
	Calls       int     `json:"calls"`
	Errors      int     `json:"errors"`
	P50MS       float64 `json:"p50_ms"`
	P95MS       float64 `json:"p95_ms"`
	P99MS       float64 `json:"p99_ms"`
	MaxMS       float64 `json:"max_ms"`
	CallsPerSec float64 `json:"calls_per_sec"`
}

func summarise(d []time.Duration, errors int, wall time.Duration) latencies {
	s := slices.Clone(d)
	slices.Sort(s)
	l := latencies{Calls: len(d), Errors: errors}
	if len(s) == 0 {
		return l
	}
	l.P50MS = msf(percentile(s, 50))
	l.P95MS = msf(percentile(s, 95))
	l.P99MS = msf(percentile(s, 99))
	l.MaxMS = msf(s[len(s)-1])
	if wall > 0 {
		l.CallsPerSec = float64(len(d)) / wall.Seconds()
	}
	return l
}

func msf(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e6 }

// spread is the minimum, median and maximum of one figure over several runs.
type spread struct {
	Min, Median, Max float64
	N                int
}

func spreadOf(v []float64) spread {
	if len(v) == 0 {
		return spread{}
	}
	s := slices.Clone(v)
	slices.Sort(s)
	med := s[len(s)/2]
	if len(s)%2 == 0 {
		med = (s[len(s)/2-1] + s[len(s)/2]) / 2
	}
	return spread{Min: s[0], Median: med, Max: s[len(s)-1], N: len(s)}
}

// format renders "median (min–max)" with the given number of decimals, or
// just the value for a single run.
func (s spread) format(decimals int) string {
	if s.N == 0 {
		return "n/a"
	}
	f := func(x float64) string { return fmt.Sprintf("%.*f", decimals, x) }
	if s.N == 1 || s.Min == s.Max {
		return f(s.Median)
	}
	return fmt.Sprintf("%s (%s–%s)", f(s.Median), f(s.Min), f(s.Max))
}
