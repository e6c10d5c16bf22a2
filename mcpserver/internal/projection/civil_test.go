package projection

import (
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"
)

// civil.String writes the date as fmt's %04d-%02d-%02d does, for every day
// of several years and the years at the edges of four digits.
func TestCivilStringIsTheISODate(t *testing.T) {
	for _, start := range []civil{{2024, time.January, 1}, {0, time.January, 1}, {9998, time.December, 1}} {
		for c, n := start, 0; n < 400; c, n = c.addDays(1), n+1 {
			if got, want := c.String(), fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d); got != want {
				t.Fatalf("civil%v.String() = %q, want %q", c, got, want)
			}
		}
	}
	for _, c := range []civil{{-1, time.March, 5}, {10000, time.March, 5}, {999, time.October, 31}} {
		if got, want := c.String(), fmt.Sprintf("%04d-%02d-%02d", c.y, c.m, c.d); got != want {
			t.Errorf("civil%v.String() = %q, want %q", c, got, want)
		}
	}
}

// dateStrings cuts the same dates civil.String writes, also when a year
// outside four digits makes one longer, and for more days than a window.
func TestDateStringsAreTheDaysDates(t *testing.T) {
	var days []day
	for _, c := range []civil{{2026, time.November, 1}, {-1, time.March, 5}, {10000, time.March, 5}, {999, time.October, 31}} {
		for n := range MaxLookbackDays + 3 {
			days = append(days, day{date: c.addDays(n)})
		}
	}
	for _, ds := range [][]day{days, days[:1], days[:0], days[MaxLookbackDays+3:]} {
		got := dateStrings(ds)
		if len(got) != len(ds) {
			t.Fatalf("%d dates for %d days", len(got), len(ds))
		}
		for i, d := range ds {
			if got[i] != d.date.String() {
				t.Errorf("date %d = %q, want %q", i, got[i], d.date.String())
			}
		}
	}
}

// dayNumber counts the days time.Time counts, across leap years, centuries
// and years before 1 and after 9999.
func TestDayNumberIsTheUnixDay(t *testing.T) {
	for _, start := range []civil{{1969, time.December, 1}, {1600, time.February, 1}, {2099, time.December, 1}, {-401, time.January, 1}, {0, time.February, 20}, {9999, time.December, 1}} {
		for c, n := start, 0; n < 800; c, n = c.addDays(1), n+1 {
			want := time.Date(c.y, c.m, c.d, 0, 0, 0, 0, time.UTC).Unix() / 86400
			if got := c.dayNumber(); int64(got) != want {
				t.Fatalf("civil%v.dayNumber() = %d, want %d", c, got, want)
			}
		}
	}
}

// velocityBasisByFmt is velocityBasis's sentence for a band as it was
// written with fmt before it was appended into one buffer (issue 44).
func velocityBasisByFmt(used int, from, to civil, stockouts int, bulkUnits int64) string {
	var b strings.Builder
	fmt.Fprintf(&b, "25th to 75th percentile of daily units per trading hour over %d trading days from %s to %s", used, from, to)
	var left []string
	if stockouts > 0 {
		left = append(left, fmt.Sprintf("%d possible stockout %s", stockouts, plural(stockouts, "day", "days")))
	}
	if bulkUnits > 0 {
		left = append(left, fmt.Sprintf("%d units in bulk transactions", bulkUnits))
	}
	if len(left) > 0 {
		b.WriteString(", leaving out " + strings.Join(left, " and "))
	}
	b.WriteString(".")
	return b.String()
}

func TestVelocityBasisIsTheSentenceFmtWrote(t *testing.T) {
	var days []day
	for i, c := 0, (civil{2026, time.November, 13}); i < 14; i, c = i+1, c.addDays(1) {
		days = append(days, day{date: c, open: i%7 != 6, noHistory: i < 2})
	}
	for _, stockouts := range []int{0, 1, 2} {
		for _, bulk := range []int64{0, 1, 30, math.MaxInt64} {
			got := velocityBasis(days, 14, false, map[Flag]bool{}, stockouts, bulk, nil)
			if want := velocityBasisByFmt(10-stockouts, days[2].date, days[13].date, stockouts, bulk); got != want {
				t.Errorf("velocityBasis = %q\nwant %q", got, want)
			}
		}
	}
}

// localDays gives the day number of the instant's local date, across DST
// changes (one at midnight in Santiago, half an hour at Lord Howe), zones
// older than the tables, and instants read out of order.
func TestLocalDaysAreTheLocalDates(t *testing.T) {
	for _, name := range []string{"Europe/Prague", "America/Santiago", "Australia/Lord_Howe", "Pacific/Chatham", "Asia/Tehran", "America/St_Johns", "UTC"} {
		loc := mustLoad(name)
		for _, loc := range []*time.Location{loc, time.FixedZone("X", -(9*3600 + 30*60))} {
			ordered := localDays{loc: loc}
			shuffled := localDays{loc: loc}
			for _, from := range []time.Time{time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1890, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(2040, 1, 1, 0, 0, 0, 0, time.UTC)} {
				for i := range 40000 {
					at := from.Add(time.Duration(i) * 13 * time.Minute)
					want := civilOf(at.In(loc)).dayNumber()
					if got := ordered.dayNumber(at); got != want {
						t.Fatalf("%s: day of %v = %d, want %d", loc, at, got, want)
					}
					odd := from.Add(time.Duration((i*7919)%40000) * 13 * time.Minute)
					if got, want := shuffled.dayNumber(odd), civilOf(odd.In(loc)).dayNumber(); got != want {
						t.Fatalf("%s: day of %v (out of order) = %d, want %d", loc, odd, got, want)
					}
				}
				// Each zone change, read from the zone before it.
				at := from
				for range 30 {
					_, end := at.In(loc).ZoneBounds()
					if end.IsZero() {
						break
					}
					for _, at := range []time.Time{end.Add(-time.Second), end, end.Add(time.Second)} {
						if got, want := ordered.dayNumber(at), civilOf(at.In(loc)).dayNumber(); got != want {
							t.Fatalf("%s: day of %v (a zone change) = %d, want %d", loc, at, got, want)
						}
					}
					at = end
				}
			}
		}
	}
}

// weekday counts from the day number what time.Time's Weekday gives, and
// the round table holds what math.Pow gives.
func TestWeekdayAndPowersAreTheLibrarys(t *testing.T) {
	for _, start := range []civil{{1969, time.December, 20}, {-1, time.February, 20}, {2026, time.February, 20}} {
		for c, n := start, 0; n < 400; c, n = c.addDays(1), n+1 {
			if got, want := c.weekday(), time.Date(c.y, c.m, c.d, 12, 0, 0, 0, time.UTC).Weekday(); got != want {
				t.Fatalf("civil%v.weekday() = %v, want %v", c, got, want)
			}
		}
	}
	for n, p := range pow10 {
		if want := math.Pow(10, float64(n)); p != want {
			t.Errorf("pow10[%d] = %v, want %v", n, p, want)
		}
	}
	for _, x := range []float64{1.23456, 2.5, -0.125, 13.999999, 1e9 / 7} {
		for n := range 7 {
			p := math.Pow(10, float64(n))
			if got, want := round(x, n), math.Round(x*p)/p; got != want {
				t.Errorf("round(%v, %d) = %v, want %v", x, n, got, want)
			}
		}
	}
}

// medianInPlace is the middle value, or the mean of the two middle values,
// of the unsorted input, which it leaves sorted; percentile leaves its
// input as it was.
func TestMedianInPlace(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{nil, 0}, {[]float64{4}, 4}, {[]float64{9, 1, 5}, 5}, {[]float64{9, 1, 4, 2}, 3}, {[]float64{3, 3, 10, 0, 1, 7}, 3}} {
		xs := slices.Clone(c.xs)
		if got := medianInPlace(xs); got != c.want || !slices.IsSorted(xs) {
			t.Errorf("medianInPlace(%v) = %v, leaving %v; want %v", c.xs, got, xs, c.want)
		}
		xs = slices.Clone(c.xs)
		if len(xs) > 0 && (percentile(xs, 0.5) != c.want || !slices.Equal(xs, c.xs)) {
			t.Errorf("percentile(%v, 0.5) = %v, leaving %v", c.xs, percentile(xs, 0.5), xs)
		}
	}
}
