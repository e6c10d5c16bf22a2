package projection

import (
	"math"
	"slices"
)

// percentile is the linearly interpolated p-quantile of xs (p in [0,1]), the
// "type 7" definition most spreadsheets use, so a buyer can reproduce it.
// xs must not be empty; it is not modified.
func percentile(xs []float64, p float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return sortedPercentile(s, p)
}

// sortedPercentile is percentile of s, which is sorted.
func sortedPercentile(s []float64, p float64) float64 {
	pos := p * float64(len(s)-1)
	lo := int(math.Floor(pos))
	if lo >= len(s)-1 {
		return s[len(s)-1]
	}
	frac := pos - float64(lo)
	return s[lo] + frac*(s[lo+1]-s[lo])
}

// medianInPlace is the median of xs (0 when empty), sorting xs rather
// than a copy: the projection builds these slices for one median.
func medianInPlace(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	slices.Sort(xs)
	return sortedPercentile(xs, 0.5)
}

// coefficientOfVariation is the population standard deviation over the mean;
// 0 when the mean is not positive.
func coefficientOfVariation(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	var sum float64
	for _, x := range xs {
		sum += x
	}
	mean := sum / float64(len(xs))
	if mean <= 0 {
		return 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return math.Sqrt(ss/float64(len(xs))) / mean
}

// pow10 are math.Pow(10, n) for the decimals round is asked for, which
// it computes exactly; a table saves the call on every evidence row.
var pow10 = [...]float64{1, 10, 100, 1000, 10000}

func round(x float64, decimals int) float64 {
	p := 0.0
	if decimals >= 0 && decimals < len(pow10) {
		p = pow10[decimals]
	} else {
		p = math.Pow(10, float64(decimals))
	}
	return math.Round(x*p) / p
}

// addSat adds without wrapping: StoreLink bounds units, but the projection
// must stay sane whatever it is fed.
func addSat(a, b int64) int64 {
	c := a + b
	if (c > a) == (b > 0) {
		return c
	}
	if b > 0 {
		return math.MaxInt64
	}
	return math.MinInt64
}

// toInt64 converts a finite float to int64, saturating at the ends.
func toInt64(x float64) int64 {
	switch {
	case x >= math.MaxInt64:
		return math.MaxInt64
	case x <= math.MinInt64:
		return math.MinInt64
	}
	return int64(x)
}
