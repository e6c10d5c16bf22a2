package projection

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// In Europe/Prague, 2026-03-29 02:00 CET jumps to 03:00 CEST (a 23-hour day)
// and 2026-10-25 03:00 CEST falls back to 02:00 CET (a 25-hour day).

func TestDSTTradingHours(t *testing.T) {
	roundTheClock := everyDay(0, 24*60)
	tests := []struct {
		name     string
		now      time.Time
		dstDay   string
		dstHours float64
		observed float64
	}{
		// Window Tue 24 to Mon 30 Mar: six 24-hour days and one of 23 h.
		{"spring forward", time.Date(2026, 3, 31, 12, 0, 0, 0, prague), "2026-03-29", 23, 6*24 + 23},
		// Window Tue 20 to Mon 26 Oct: six 24-hour days and one of 25 h.
		{"fall back", time.Date(2026, 10, 27, 12, 0, 0, 0, prague), "2026-10-25", 25, 6*24 + 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One unit per real hour, so every rate is exactly 1/h, DST day
			// included.
			var sales []Sale
			from := time.Date(tt.now.Year(), tt.now.Month(), tt.now.Day()-7, 0, 0, 0, 0, prague)
			to := time.Date(tt.now.Year(), tt.now.Month(), tt.now.Day(), 0, 0, 0, 0, prague)
			for at := from.Add(30 * time.Minute); at.Before(to); at = at.Add(time.Hour) {
				sales = append(sales, Sale{At: at, Units: 1})
			}
			got := Project(Input{
				Now: tt.now, Location: prague, Hours: roundTheClock, OnHand: 1000, CountedAt: tt.now,
				Sales: sales, LookbackDays: 7, LeadTimeDays: -1,
			})
			if got.TradingHoursObserved != tt.observed {
				t.Errorf("trading_hours_observed = %v, want %v", got.TradingHoursObserved, tt.observed)
			}
			if diff := cmp.Diff(&Band{1, 1}, got.UnitsPerTradingHour); diff != "" {
				t.Errorf("band (-want +got):\n%s", diff)
			}
			for _, r := range got.Evidence {
				wantHours := 24.0
				if r.Date == tt.dstDay {
					wantHours = tt.dstHours
				}
				if r.TradingHours != wantHours || r.UnitsSold != int64(wantHours) || !cmp.Equal(r.UnitsPerHour, fp(1)) {
					t.Errorf("%s: hours %v units %d rate %v; want %v, %v, 1", r.Date, r.TradingHours, r.UnitsSold, *r.UnitsPerHour, wantHours, wantHours)
				}
			}
			if len(got.Evidence) != 7 {
				t.Errorf("%d evidence rows, want 7", len(got.Evidence))
			}
		})
	}
}

func TestDSTWalkAcrossTheChange(t *testing.T) {
	// Open 08:00-20:00, 12 units a day -> band [1, 1]. 13 units at 19:00
	// Saturday run out Sunday 20:00 local, whatever the offset; adding 24 h
	// per day would land at 21:00 in spring and 19:00 in autumn.
	tests := []struct {
		name          string
		now           time.Time
		want, arrival string
	}{
		{"spring forward", time.Date(2026, 3, 28, 19, 0, 0, 0, prague), "2026-03-29T20:00:00+02:00", "2026-03-30T08:00:00+02:00"},
		{"fall back", time.Date(2026, 10, 24, 19, 0, 0, 0, prague), "2026-10-25T20:00:00+01:00", "2026-10-26T08:00:00+01:00"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			units := make([]int, 14)
			for i := range units {
				units[i] = 12
			}
			first := time.Date(tt.now.Year(), tt.now.Month(), tt.now.Day()-14, 0, 0, 0, 0, prague)
			in := Input{
				Now: tt.now, Location: prague, Hours: open8to20, OnHand: 13, CountedAt: tt.now.Add(-time.Hour),
				Sales: history(first, units), LookbackDays: 14, LeadTimeDays: 2,
			}
			got := Project(in)
			// Close Saturday 20:00 comes before the stockout -> false, short 0.
			// Lead 2 -> Monday 08:00, after the stockout -> false.
			want := outcome{sp(tt.want), sp(tt.want), No, i64(0), sp(tt.arrival), No, ConfidenceHigh, []Flag{}}
			if diff := cmp.Diff(want, outcomeOf(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.TradingHoursObserved != 14*12 {
				t.Errorf("trading_hours_observed = %v, want 168 (opening hours do not span the change)", got.TradingHoursObserved)
			}
		})
	}
}

func TestSalesAreBucketedByLocalDate(t *testing.T) {
	// A sale at 23:30 UTC on 9 Mar is 00:30 on 10 Mar in Prague.
	sales := history(feb25, alternating(14))
	sales = append(sales, Sale{At: time.Date(2026, 3, 9, 23, 30, 0, 0, time.UTC), Units: 1})
	in := base()
	in.Sales = sales
	got := Project(in)
	last := got.Evidence[len(got.Evidence)-1]
	if last.Date != "2026-03-10" || last.UnitsSold != 25 {
		t.Errorf("last row = %s with %d units, want 2026-03-10 with 24+1", last.Date, last.UnitsSold)
	}
}
