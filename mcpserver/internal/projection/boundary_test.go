package projection

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"
)

// One table per rule of ADR 0004, each threshold tried exactly at, just
// below and just above its value, on the base fixture (Prague, open
// 08:00-20:00, now Wed 11 Mar 14:00, 14 days alternating 12 and 24 units,
// 10 on hand counted at 07:00, lead time 2 days) unless a row says otherwise.

// row returns the evidence row of a date; it fails the test if there is none.
func row(t *testing.T, r Result, date string) DayEvidence {
	t.Helper()
	for _, e := range r.Evidence {
		if e.Date == date {
			return e
		}
	}
	t.Fatalf("no evidence row for %s", date)
	return DayEvidence{}
}

// at is a Prague wall-clock time in March 2026.
func at(day, hour, minute int) time.Time {
	return time.Date(2026, time.March, day, hour, minute, 0, 0, prague)
}

// BulkMinUnits: a transaction is bulk from 10 units, when the window's median
// transaction is small (here 1 unit, so 5 x median = 5 does not decide).
func TestBoundaryBulkMinUnits(t *testing.T) {
	for _, tt := range []struct {
		units    int64
		wantBulk int64
	}{{9, 0}, {10, 10}, {11, 11}} {
		in := base()
		// Tue 3 Mar sells 12 single units; the extra line is under half of
		// the day at every size here, so only bulk_units tells.
		in.Sales = append(in.Sales, Sale{At: at(3, 15, 0), Units: tt.units})
		if got := row(t, Project(in), "2026-03-03").BulkUnits; got != tt.wantBulk {
			t.Errorf("a %d-unit line: bulk_units %d, want %d", tt.units, got, tt.wantBulk)
		}
	}
}

// BulkMedianMultiple: with a median transaction of 3 units, bulk starts at
// 5 x 3 = 15 units, above BulkMinUnits.
func TestBoundaryBulkMedianMultiple(t *testing.T) {
	for _, tt := range []struct {
		units    int64
		wantBulk int64
	}{{14, 0}, {15, 15}, {16, 16}} {
		in := base()
		in.Sales = nil
		for d := range 14 {
			for j := range 4 { // 4 lines of 3 units a day
				in.Sales = append(in.Sales, Sale{At: feb25.AddDate(0, 0, d).Add(time.Duration(9+2*j) * time.Hour), Units: 3})
			}
		}
		in.Sales = append(in.Sales, Sale{At: at(3, 19, 0), Units: tt.units})
		if got := row(t, Project(in), "2026-03-03").BulkUnits; got != tt.wantBulk {
			t.Errorf("a %d-unit line against a 3-unit median: bulk_units %d, want %d", tt.units, got, tt.wantBulk)
		}
	}
}

// BulkDominantShare: a day is bulk-dominated when bulk units are at least
// half its units. Tue 3 Mar sells 12 ordinary units plus one bulk line.
func TestBoundaryBulkDominantShare(t *testing.T) {
	for _, tt := range []struct {
		name string
		bulk int64
		want bool
	}{
		{"11 of 23 is under half", 11, false},
		{"12 of 24 is exactly half", 12, true},
		{"13 of 25 is over half", 13, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.Sales = append(in.Sales, Sale{At: at(3, 15, 0), Units: tt.bulk})
			got := Project(in)
			r := row(t, got, "2026-03-03")
			if r.BulkUnits != tt.bulk {
				t.Fatalf("bulk_units %d, want %d (the line must be bulk for this test)", r.BulkUnits, tt.bulk)
			}
			if slices.Contains(r.Flags, DayBulkDominated) != tt.want || hasFlag(got, FlagBulkDominatesDay) != tt.want {
				t.Errorf("day flags %v, flags %v; want dominated %v", r.Flags, got.DataQualityFlags, tt.want)
			}
		})
	}
}

// StockoutExpectedUnits: a zero-sale trading day is a possible stockout when
// the window's median rate times its trading hours is at least 5 units.
// Every day sells at 0.25 units per trading hour; Saturdays trade from 02:00
// for about 20 hours, so Sat 28 Feb (no sales) expects 5 units give or take
// a minute's worth (0.004 units).
func TestBoundaryPossibleStockout(t *testing.T) {
	for _, tt := range []struct {
		name   string
		closes int
		want   bool
	}{
		{"4.996 expected units", 21*60 + 59, false},
		{"exactly 5 expected units", 22 * 60, true},
		{"5.004 expected units", 22*60 + 1, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.Hours[time.Saturday] = DayHours{Opens: 2 * 60, Closes: tt.closes}
			units := make([]int, 14)
			for i := range units {
				units[i] = 3 // 3 units in 12 hours
			}
			units[3] = 0  // Sat 28 Feb
			units[10] = 5 // Sat 7 Mar: 5 units in about 20 hours
			in.Sales = history(feb25, units)
			got := Project(in)
			r := row(t, got, "2026-02-28")
			if !slices.Contains(r.Flags, DayZeroSales) {
				t.Fatalf("Sat 28 Feb flags %v, want zero_sales", r.Flags)
			}
			if slices.Contains(r.Flags, DayPossibleStockout) != tt.want || hasFlag(got, FlagPossibleStockoutDays) != tt.want || r.UsedInBand == tt.want {
				t.Errorf("row %+v, flags %v; want possible stockout %v", r, got.DataQualityFlags, tt.want)
			}
		})
	}
}

// MinBasisDays: fewer than 5 usable trading days refuse.
func TestBoundaryInsufficientHistory(t *testing.T) {
	for _, tt := range []struct {
		days int
		want Confidence
	}{{4, ConfidenceNone}, {5, ConfidenceLow}, {6, ConfidenceLow}} {
		in := base()
		in.LookbackDays = tt.days
		got := Project(in)
		if got.Confidence != tt.want || hasFlag(got, FlagInsufficientHistory) != (tt.want == ConfidenceNone) ||
			(got.UnitsPerTradingHour == nil) != (tt.want == ConfidenceNone) {
			t.Errorf("%d basis days: confidence %s, flags %v, band %v; want %s", tt.days, got.Confidence, got.DataQualityFlags, got.UnitsPerTradingHour, tt.want)
		}
	}
}

// LowBasisDays and HighBasisDays: 5-6 basis days are low, 7-9 medium, 10 or
// more high, with nothing else wrong.
func TestBoundaryConfidenceByBasisDays(t *testing.T) {
	for _, tt := range []struct {
		days int
		want Confidence
	}{
		{6, ConfidenceLow}, {7, ConfidenceMedium}, {8, ConfidenceMedium},
		{9, ConfidenceMedium}, {10, ConfidenceHigh}, {11, ConfidenceHigh},
	} {
		in := base()
		in.LookbackDays = tt.days
		got := Project(in)
		if got.TradingDaysUsed != tt.days || got.Confidence != tt.want || len(got.DataQualityFlags) != 0 {
			t.Errorf("%d basis days: used %d, confidence %s, flags %v; want %s", tt.days, got.TradingDaysUsed, got.Confidence, got.DataQualityFlags, tt.want)
		}
	}
}

// MaxSteadyCV: alternating rates a and b have CV |a-b|/(a+b); 12 and 36
// units a day give exactly 0.5, which is not above the limit.
func TestBoundaryHighVariability(t *testing.T) {
	for _, tt := range []struct {
		heavy int
		want  bool
	}{{35, false}, {36, false}, {37, true}} { // CV 23/47, 1/2, 25/49
		in := base()
		units := make([]int, 14)
		for i := range units {
			units[i] = 12
			if i%2 == 1 {
				units[i] = tt.heavy
			}
		}
		withUnits(units)(&in)
		got := Project(in)
		if hasFlag(got, FlagHighVariability) != tt.want || (got.Confidence == ConfidenceLow) != tt.want {
			t.Errorf("12/%d a day: flags %v, confidence %s; want high variability %v", tt.heavy, got.DataQualityFlags, got.Confidence, tt.want)
		}
	}
}

// StaleCountHours: a count more than 24 h old is stale.
func TestBoundaryStaleCount(t *testing.T) {
	for _, tt := range []struct {
		age  time.Duration
		want bool
	}{{24*time.Hour - time.Minute, false}, {24 * time.Hour, false}, {24*time.Hour + time.Minute, true}} {
		in := base()
		in.CountedAt = in.Now.Add(-tt.age)
		in.OnHand = 100
		if got := Project(in); hasFlag(got, FlagStaleOnHandCount) != tt.want {
			t.Errorf("count %v old: flags %v, want stale %v", tt.age, got.DataQualityFlags, tt.want)
		}
	}
}

// negative_on_hand: StoreLink's figure below 0.
func TestBoundaryNegativeOnHand(t *testing.T) {
	for _, tt := range []struct {
		onHand int64
		want   bool
	}{{-1, true}, {0, false}, {1, false}} {
		in := base()
		in.OnHand = tt.onHand
		if got := Project(in); hasFlag(got, FlagNegativeOnHand) != tt.want {
			t.Errorf("on hand %d: flags %v, want negative %v", tt.onHand, got.DataQualityFlags, tt.want)
		}
	}
}

// Trading time is [opens, closes): open from the opening minute, closed from
// the closing minute.
func TestBoundaryTradingHours(t *testing.T) {
	for _, tt := range []struct {
		now     time.Time
		open    bool
		outside bool
	}{
		{at(11, 7, 59), false, true},
		{at(11, 8, 0), true, false},
		{at(11, 8, 1), true, false},
		{at(11, 19, 59), true, false},
		{at(11, 20, 0), false, true},
		{at(11, 20, 1), false, true},
	} {
		in := base()
		in.Now = tt.now
		in.CountedAt = tt.now.Add(-time.Hour)
		got := Project(in)
		if got.StoreOpenNow != tt.open || hasFlag(got, FlagOutsideTradingHours) != tt.outside {
			t.Errorf("%s: open %v, flags %v; want open %v", tt.now.Format("15:04"), got.StoreOpenNow, got.DataQualityFlags, tt.open)
		}
	}
}

// The supplier's cut-off: reached at the cut-off minute itself, and an
// order then counts from tomorrow (lead 2: Sat 14 Mar instead of Fri 13).
func TestBoundaryOrderCutoff(t *testing.T) {
	for _, tt := range []struct {
		cutoff  int
		passed  bool
		arrival string
	}{
		{14*60 + 1, false, "2026-03-13T08:00:00+01:00"},
		{14 * 60, true, "2026-03-14T08:00:00+01:00"},
		{14*60 - 1, true, "2026-03-14T08:00:00+01:00"},
	} {
		in := base()
		in.OrderCutoff = ip(tt.cutoff)
		got := Project(in)
		if got.OrderCutoffPassed != tt.passed || got.EarliestReplenishmentArrival == nil || *got.EarliestReplenishmentArrival != tt.arrival {
			t.Errorf("cut-off %02d:%02d at 14:00: passed %v, arrival %v; want %v, %s",
				tt.cutoff/60, tt.cutoff%60, got.OrderCutoffPassed, got.EarliestReplenishmentArrival, tt.passed, tt.arrival)
		}
	}
}

// will_stockout_before_close_today, band [1, 2], 6 trading hours left until
// 20:00: true when the latest stockout is before the close, false when the
// earliest is at or after it, unknown when the close lies between.
func TestBoundaryStockoutBeforeClose(t *testing.T) {
	for _, tt := range []struct {
		name   string
		onHand int64
		want   Answer
	}{
		{"latest one hour before close", 5, Yes},
		{"latest exactly at close", 6, Unknown},
		{"latest one hour after close", 7, Unknown},
		{"earliest half an hour before close", 11, Unknown},
		{"earliest exactly at close", 12, No},
		{"earliest half an hour after close", 13, No},
		{"nothing left", 0, Yes},
		{"one unit left", 1, Yes},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.OnHand = tt.onHand
			got := Project(in)
			if got.WillStockoutBeforeCloseToday != tt.want {
				t.Errorf("on hand %d: %s (window %v .. %v), want %s", tt.onHand, got.WillStockoutBeforeCloseToday,
					deref(got.ProjectedStockoutWindow.Earliest), deref(got.ProjectedStockoutWindow.Latest), tt.want)
			}
		})
	}
}

// An estimate at or below zero means out already: the answer is yes and the
// window is now, even after closing time (21:00), when nothing more can sell
// today. One unit left lasts until tomorrow.
func TestBoundaryAlreadyOut(t *testing.T) {
	for _, tt := range []struct {
		onHand int64
		out    bool
	}{{-1, true}, {0, true}, {1, false}} {
		in := base()
		in.Now = at(11, 21, 0)
		in.OnHand = tt.onHand
		got := Project(in)
		w := got.ProjectedStockoutWindow
		isNow := w.Earliest != nil && w.Latest != nil && *w.Earliest == got.AsOf && *w.Latest == got.AsOf
		if isNow != tt.out || (got.WillStockoutBeforeCloseToday == Yes) != tt.out {
			t.Errorf("on hand %d: window %v .. %v, today %s; want out now %v", tt.onHand, deref(w.Earliest), deref(w.Latest), got.WillStockoutBeforeCloseToday, tt.out)
		}
	}
}

// units_short_by_close = ceil(high rate x hours left - estimate), at least 0.
// High rate 7.5 an hour (90 units in 12 hours) and 4 h 08 min left from
// 15:52: exactly 31 units of demand, which floating point makes
// 31.000000000000004; 31 on hand must not read as one unit short.
func TestBoundaryUnitsShortByClose(t *testing.T) {
	for _, tt := range []struct{ onHand, want int64 }{{30, 1}, {31, 0}, {32, 0}} {
		in := base()
		u := make([]int, 14)
		for i := range u {
			u[i] = 45 + 45*(i%2)
		}
		withUnits(u)(&in)
		in.Now = at(11, 15, 52)
		in.OnHand = tt.onHand
		got := Project(in)
		if b := got.UnitsPerTradingHour; b == nil || b.High != 7.5 || got.TradingHoursLeftToday != 4.13 {
			t.Fatalf("band %v, hours left %v", b, got.TradingHoursLeftToday)
		}
		if got.UnitsShortByClose == nil || *got.UnitsShortByClose != tt.want {
			t.Errorf("on hand %d: short %v, want %d", tt.onHand, got.UnitsShortByClose, tt.want)
		}
	}
}

// arrival_beats_stockout: true when the delivery lands at or before the
// earliest stockout, false after the latest, unknown between. The store
// trades round the clock so that an arrival (Fri 13 Mar 00:00, lead 2) and a
// stockout can fall on the same instant; from Wed 14:00 that is 34 trading
// hours, and the band is [0.5, 1] a trading hour.
func TestBoundaryArrivalBeatsStockout(t *testing.T) {
	for _, tt := range []struct {
		name   string
		onHand int64
		want   Answer
	}{
		{"earliest an hour before arrival", 33, Unknown},
		{"earliest exactly at arrival", 34, Yes},
		{"earliest an hour after arrival", 35, Yes},
		{"latest an hour before arrival", 16, No},
		{"latest exactly at arrival", 17, Unknown},
		{"latest an hour after arrival", 18, Unknown},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.Hours = everyDay(0, 24*60)
			in.OnHand = tt.onHand
			got := Project(in)
			if b := got.UnitsPerTradingHour; b == nil || *b != (Band{0.5, 1}) {
				t.Fatalf("band %v, want [0.5, 1]", b)
			}
			if a := deref(got.EarliestReplenishmentArrival); a != "2026-03-13T00:00:00+01:00" {
				t.Fatalf("arrival %s", a)
			}
			if got.ArrivalBeatsStockout != tt.want {
				t.Errorf("window %s .. %s: arrival beats %s, want %s", deref(got.ProjectedStockoutWindow.Earliest),
					deref(got.ProjectedStockoutWindow.Latest), got.ArrivalBeatsStockout, tt.want)
			}
		})
	}
}

// HorizonDays: a stockout exactly 14 days of round-the-clock trading away is
// within the horizon; one hour later is not. High rate 1 unit an hour.
func TestBoundaryHorizon(t *testing.T) {
	const horizon = 14 * 24
	for _, tt := range []struct {
		onHand int64
		within bool
	}{{horizon - 1, true}, {horizon, true}, {horizon + 1, false}} {
		in := base()
		in.Hours = everyDay(0, 24*60)
		in.OnHand = tt.onHand
		if got := Project(in); (got.ProjectedStockoutWindow.Earliest != nil) != tt.within {
			t.Errorf("on hand %d: earliest %s, want within the horizon %v", tt.onHand, deref(got.ProjectedStockoutWindow.Earliest), tt.within)
		}
	}
}

// LookbackDays is clamped to 1..28, with 14 when not positive.
func TestBoundaryLookbackClamp(t *testing.T) {
	for _, tt := range []struct{ lookback, want int }{
		{-1, 14}, {0, 14}, {1, 1}, {2, 2}, {27, 27}, {28, 28}, {29, 28},
	} {
		in := base()
		in.LookbackDays = tt.lookback
		if got := Project(in); got.ObservationDays != tt.want || len(got.Evidence) != tt.want {
			t.Errorf("lookback %d: %d days, %d rows; want %d", tt.lookback, got.ObservationDays, len(got.Evidence), tt.want)
		}
	}
}

// HistoryStart: a trading day counts only if StoreLink's history began by
// its opening. The window's oldest day, Wed 25 Feb, opens at 08:00.
func TestBoundaryHistoryStart(t *testing.T) {
	opens := time.Date(2026, 2, 25, 8, 0, 0, 0, prague)
	for _, tt := range []struct {
		name  string
		start time.Time
		known bool
	}{
		{"history from a minute before opening", opens.Add(-time.Minute), true},
		{"history from the opening minute", opens, true},
		{"history from a minute after opening", opens.Add(time.Minute), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.HistoryStart = tt.start
			// Only what StoreLink still holds, as a client would see it.
			in.Sales = slices.DeleteFunc(in.Sales, func(s Sale) bool { return s.At.Before(tt.start) })
			in.SalesFrom = tt.start
			got := Project(in)
			r := row(t, got, "2026-02-25")
			if noHistory := slices.Equal(r.Flags, []DayFlag{DayNoHistory}); noHistory == tt.known || r.UsedInBand != tt.known || (r.UnitsPerHour != nil) != tt.known {
				t.Errorf("oldest row %+v, want known %v", r, tt.known)
			}
			want := 13
			if tt.known {
				want = 14
			}
			if got.TradingDaysUsed != want || hasFlag(got, FlagPossibleStockoutDays) {
				t.Errorf("trading_days_used %d, flags %v; want %d and no stockout", got.TradingDaysUsed, got.DataQualityFlags, want)
			}
		})
	}
}

// The first recorded sale: the days before its local date are not evidence,
// its own date is. The SKU first sells on Mon 2 Mar (12 and 24 units a day
// from then on); midnight is the edge between two dates.
func TestBoundaryFirstSale(t *testing.T) {
	for _, tt := range []struct {
		name  string
		first time.Time
		used  int    // basis days
		from  string // first day that is evidence
	}{
		{"first sale a minute before midnight", time.Date(2026, 3, 1, 23, 59, 0, 0, prague), 10, "2026-03-01"},
		{"first sale at midnight", time.Date(2026, 3, 2, 0, 0, 0, 0, prague), 9, "2026-03-02"},
		{"first sale a minute after midnight", time.Date(2026, 3, 2, 0, 1, 0, 0, prague), 9, "2026-03-02"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.Sales = append(history(time.Date(2026, 3, 2, 0, 0, 0, 0, prague), alternating(9)), Sale{At: tt.first, Units: 1})
			got := Project(in)
			for _, r := range got.Evidence {
				before := r.Date < tt.from
				if before != slices.Equal(r.Flags, []DayFlag{DayNoHistory}) || before == r.UsedInBand {
					t.Errorf("%s: flags %v used %v, want no history %v", r.Date, r.Flags, r.UsedInBand, before)
				}
			}
			if got.TradingDaysUsed != tt.used || hasFlag(got, FlagPossibleStockoutDays) {
				t.Errorf("trading_days_used %d, flags %v; want %d", got.TradingDaysUsed, got.DataQualityFlags, tt.used)
			}
			if want := fmt.Sprintf("over %d trading days from %s to 2026-03-10.", tt.used, tt.from); !strings.HasSuffix(got.VelocityBasis, want) {
				t.Errorf("velocity_basis %q, want it to end %q", got.VelocityBasis, want)
			}
		})
	}
}

// SalesFrom: the earliest sale given is the SKU's first only when the sales
// reach back to the start of the history. Otherwise leading days without
// sales are ordinary zero-sale days (here: possible stockouts of a steady
// seller).
func TestBoundarySalesFrom(t *testing.T) {
	start := time.Date(2026, 2, 1, 14, 0, 0, 0, prague)
	for _, tt := range []struct {
		name      string
		salesFrom time.Time
		knowFirst bool
	}{
		{"sales from before the history", start.Add(-time.Minute), true},
		{"sales from the history's start", start, true},
		{"sales from a minute later", start.Add(time.Minute), false},
		{"sales from the window only", time.Date(2026, 2, 24, 14, 0, 0, 0, prague), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.HistoryStart = start
			in.SalesFrom = tt.salesFrom
			u := alternating(14)
			u[0], u[1] = 0, 0 // the first sale is on Fri 27 Feb
			withUnits(u)(&in)
			got := Project(in)
			first := row(t, got, "2026-02-25")
			if noHistory := slices.Equal(first.Flags, []DayFlag{DayNoHistory}); noHistory != tt.knowFirst {
				t.Errorf("Wed 25 Feb flags %v, want no history %v", first.Flags, tt.knowFirst)
			}
			if hasFlag(got, FlagPossibleStockoutDays) == tt.knowFirst {
				t.Errorf("flags %v", got.DataQualityFlags)
			}
		})
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
