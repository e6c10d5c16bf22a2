package projection

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// withUnits replaces the history with units per day, the window's last
// len(units) days ending yesterday (Tue 10 Mar).
func withUnits(units []int) func(*Input) {
	return func(in *Input) {
		first := time.Date(2026, 3, 11-len(units), 0, 0, 0, 0, prague)
		in.Sales = history(first, units)
		in.LookbackDays = len(units)
	}
}

// flagWant is what a flag case checks of the result.
type flagWant struct {
	confidence Confidence
	flags      []Flag
	band       *Band
	used       int
	caveat     string // a phrase the caveat must contain
}

// closedOn is open8to20 with one weekday closed.
func closedOn(d time.Weekday) WeeklyHours {
	h := open8to20
	h[d] = DayHours{Closed: true}
	return h
}

var flagCases = []struct {
	name   string
	modify func(*Input)
	want   flagWant
}{
	{"clean history is high", func(*Input) {},
		flagWant{ConfidenceHigh, []Flag{}, &Band{1, 2}, 14, "assumes recent trading-hour sales continue"}},
	// 4 trading days < 5 -> refuse.
	{"insufficient history refuses", func(in *Input) { in.LookbackDays = 4 },
		flagWant{ConfidenceNone, []Flag{FlagInsufficientHistory}, nil, 4, "too few trading days"}},
	// Fri 6 to Tue 10 Mar is 5 days, but Sunday is closed: 4 trading days.
	{"closed days do not count as history", func(in *Input) { in.LookbackDays = 5; in.Hours = closedOn(time.Sunday) },
		flagWant{ConfidenceNone, []Flag{FlagInsufficientHistory}, nil, 4, "too few trading days"}},
	{"no sales refuses", func(in *Input) { in.Sales = nil },
		flagWant{ConfidenceNone, []Flag{FlagNoSalesInWindow}, nil, 14, "No sales were recorded"}},
	{"thin and empty refuses with both flags", func(in *Input) { in.Sales = nil; in.LookbackDays = 3 },
		flagWant{ConfidenceNone, []Flag{FlagInsufficientHistory, FlagNoSalesInWindow}, nil, 3, "No sales were recorded"}},
	{
		// Day 6 (Tue 3 Mar, 12 baskets of 1) also has one 30-unit sale.
		// Median transaction 1 -> bulk from max(10, 5*1) = 10 units; 30 >= 10.
		// 30 of 42 units >= 50% -> dominated. Rate without it 12/12 = 1, so
		// the band stays [1, 2]; bulk alone -> medium.
		name: "bulk transaction dominating a day",
		modify: func(in *Input) {
			in.Sales = append(in.Sales, Sale{At: time.Date(2026, 3, 3, 15, 0, 0, 0, prague), Units: 30})
		},
		want: flagWant{ConfidenceMedium, []Flag{FlagBulkDominatesDay}, &Band{1, 2}, 14, "Bulk transactions were left out"},
	},
	{
		// Day 1 (Thu 26 Feb, 24 baskets) gains a 12-unit sale: bulk (>= 10)
		// but 12 of 36 < 50% -> not dominated: excluded from the rate, no
		// flag, still high.
		name: "bulk transaction not dominating",
		modify: func(in *Input) {
			in.Sales = append(in.Sales, Sale{At: time.Date(2026, 2, 26, 15, 0, 0, 0, prague), Units: 12})
		},
		want: flagWant{ConfidenceHigh, []Flag{}, &Band{1, 2}, 14, "assumes recent"},
	},
	{
		// Day 3 (Sat 28 Feb) sells nothing. Rates over 14 trading days:
		// [0, 1 x7, 2 x6]; median at 6.5 -> 1; expected 1 * 12 = 12 >= 5 ->
		// possible stockout, left out. Band over 13 days [1 x7, 2 x6]:
		// P25 at 3 -> 1, P75 at 9 -> 2. CV: mean 19/13, variance
		// 31/13 - (19/13)^2 = 42/169, sd 0.4985 -> 0.34. Medium.
		name: "zero-sale day amid steady sales",
		modify: func(in *Input) {
			u := alternating(14)
			u[3] = 0
			withUnits(u)(in)
		},
		want: flagWant{ConfidenceMedium, []Flag{FlagPossibleStockoutDays}, &Band{1, 2}, 13, "look like the shelf was empty"},
	},
	// Intermittent seller: 8 zero days, 6 days of 12. Median of 14 rates
	// [0 x8, 1 x6] at 6.5 -> 0, so no zero day is a stockout. Band:
	// P25 at 3.25 -> 0, P75 at 9.75 -> 1. CV: mean 6/14 = 0.4286,
	// variance 0.4286 - 0.1837 = 0.2449, sd 0.4949 -> 1.15 > 0.5. The
	// first day sells, so no day precedes the first recorded sale.
	{"intermittent seller is variable, not out of stock", withUnits([]int{12, 0, 12, 0, 12, 0, 12, 0, 12, 0, 12, 0, 0, 0}),
		flagWant{ConfidenceLow, []Flag{FlagHighVariability}, &Band{0, 1}, 14, "vary widely"}},
	// Rates 0.5 and 2.5 alternating: CV = |a-b|/(a+b) = 2/3 > 0.5.
	// P25 at 3.25 -> 0.5, P75 at 9.75 -> 2.5.
	{"high variability", withUnits([]int{6, 30, 6, 30, 6, 30, 6, 30, 6, 30, 6, 30, 6, 30}),
		flagWant{ConfidenceLow, []Flag{FlagHighVariability}, &Band{0.5, 2.5}, 14, "vary widely"}},
	// Rates 1 and 1.5 alternating: CV = 0.5/2.5 = 0.2, under 0.5.
	{"moderate variability is not flagged", withUnits([]int{12, 18, 12, 18, 12, 18, 12, 18, 12, 18, 12, 18, 12, 18}),
		flagWant{ConfidenceHigh, []Flag{}, &Band{1, 1.5}, 14, "assumes recent"}},
	// Counted 24 h 1 min ago. Tue 10 Mar sold 24 units, one every 30 min
	// from 08:00; 12 of them (14:00..19:30) came after the count, so a
	// count of 22 leaves the baseline's 10.
	{"stale count", func(in *Input) { in.CountedAt = time.Date(2026, 3, 10, 13, 59, 0, 0, prague); in.OnHand = 22 },
		flagWant{ConfidenceLow, []Flag{FlagStaleOnHandCount}, &Band{1, 2}, 14, "more than 24 hours old"}},
	// Exactly 24 h is not "older than 24 h".
	// The 14:00 sale is not after the count: 11 sold since, 21 - 11 = 10.
	{"count exactly a day old is fresh", func(in *Input) { in.CountedAt = time.Date(2026, 3, 10, 14, 0, 0, 0, prague); in.OnHand = 21 },
		flagWant{ConfidenceHigh, []Flag{}, &Band{1, 2}, 14, "assumes recent"}},
	{"unknown count time is stale", func(in *Input) { in.CountedAt = time.Time{} },
		flagWant{ConfidenceLow, []Flag{FlagStaleOnHandCount}, &Band{1, 2}, 14, "more than 24 hours old"}},
	{"negative on-hand", func(in *Input) { in.OnHand = -3 },
		flagWant{ConfidenceLow, []Flag{FlagNegativeOnHand}, &Band{1, 2}, 14, "on-hand figure is negative"}},
	// Wednesdays closed: Feb 25 (12 units) and Mar 4 (24 units) drop out,
	// leaving 6 days at 1 and 6 at 2: P25 at 2.75 -> 1, P75 at 8.25 -> 2.
	{"store closed today", func(in *Input) { in.Hours = closedOn(time.Wednesday) },
		flagWant{ConfidenceHigh, []Flag{FlagStoreClosedToday}, &Band{1, 2}, 12, "does not open today"}},
	{"after closing", func(in *Input) { in.Now = time.Date(2026, 3, 11, 21, 0, 0, 0, prague) },
		flagWant{ConfidenceHigh, []Flag{FlagOutsideTradingHours}, &Band{1, 2}, 14, "not trading right now"}},
	// 8 trading days: enough to project, too few for high.
	{"8 days is medium", withUnits(alternating(8)),
		flagWant{ConfidenceMedium, []Flag{}, &Band{1, 2}, 8, "assumes recent"}},
	{"10 days is high", withUnits(alternating(10)),
		flagWant{ConfidenceHigh, []Flag{}, &Band{1, 2}, 10, "assumes recent"}},
	// 6 trading days: P25 at 1.25 -> 1, P75 at 3.75 -> 2; low.
	{"6 days is low", withUnits(alternating(6)),
		flagWant{ConfidenceLow, []Flag{}, &Band{1, 2}, 6, "assumes recent"}},
	// Rates 2.5, 1, 3.5, 2, 3, 1.5 -> sorted [1, 1.5, 2, 2.5, 3, 3.5].
	// P25 at 0.25*5 = 1.25 -> 1.5 + 0.25*0.5 = 1.625;
	// P75 at 3.75 -> 2.5 + 0.75*0.5 = 2.875. CV: mean 2.25, squared
	// deviations 2*(0.0625+0.5625+1.5625) = 4.375, sd sqrt(4.375/6) =
	// 0.854 -> 0.38. Six days -> low.
	{"interpolated quartiles", withUnits([]int{30, 12, 42, 24, 36, 18}),
		flagWant{ConfidenceLow, []Flag{}, &Band{1.625, 2.875}, 6, "assumes recent"}},
	// 5 trading days [1,2,1,2,1]: P25 at 1 -> 1, P75 at 3 -> 2; low.
	{"5 days is the minimum", withUnits(alternating(5)),
		flagWant{ConfidenceLow, []Flag{}, &Band{1, 2}, 5, "assumes recent"}},
	{
		// Both medium-level flags together make low.
		name: "bulk and possible stockout together are low",
		modify: func(in *Input) {
			u := alternating(14)
			u[3] = 0
			withUnits(u)(in)
			in.Sales = append(in.Sales, Sale{At: time.Date(2026, 3, 3, 15, 0, 0, 0, prague), Units: 30})
		},
		want: flagWant{ConfidenceLow, []Flag{FlagBulkDominatesDay, FlagPossibleStockoutDays}, &Band{1, 2}, 13, "Bulk transactions"},
	},
	{"lookback above the cap is clamped to 28", func(in *Input) { withUnits(alternating(28))(in); in.LookbackDays = 40 },
		flagWant{ConfidenceHigh, []Flag{}, &Band{1, 2}, 28, "assumes recent"}},
}

func TestProjectFlagsAndConfidence(t *testing.T) {
	for _, tt := range flagCases {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			tt.modify(&in)
			got := Project(in)
			if got.Confidence != tt.want.confidence {
				t.Errorf("confidence = %s, want %s", got.Confidence, tt.want.confidence)
			}
			if diff := cmp.Diff(tt.want.flags, got.DataQualityFlags); diff != "" {
				t.Errorf("flags (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.want.band, got.UnitsPerTradingHour); diff != "" {
				t.Errorf("band (-want +got):\n%s", diff)
			}
			if got.TradingDaysUsed != tt.want.used {
				t.Errorf("trading_days_used = %d, want %d", got.TradingDaysUsed, tt.want.used)
			}
			if !strings.Contains(got.Caveat, tt.want.caveat) {
				t.Errorf("caveat %q lacks %q", got.Caveat, tt.want.caveat)
			}
			checkInvariants(t, in, got)
			if tt.want.confidence == ConfidenceNone {
				refused := outcome{Will: Unknown, Beats: Unknown, Confidence: ConfidenceNone, Flags: tt.want.flags,
					Arrival: got.EarliestReplenishmentArrival}
				if diff := cmp.Diff(refused, outcomeOf(got)); diff != "" {
					t.Errorf("a refusal still guessed (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestEvidenceRowFlags(t *testing.T) {
	in := base()
	in.Hours[time.Sunday] = DayHours{Closed: true}
	u := alternating(14)
	u[3] = 0 // Sat 28 Feb: possible stockout
	u[9] = 0 // Fri 6 Mar: possible stockout
	withUnits(u)(&in)
	in.Sales = append(in.Sales, Sale{At: time.Date(2026, 3, 3, 15, 0, 0, 0, prague), Units: 30})
	got := Project(in)
	rows := map[string]DayEvidence{}
	for _, r := range got.Evidence {
		rows[r.Date] = r
	}
	tests := []struct {
		date  string
		flags []DayFlag
		used  bool
		hours float64
		rate  *float64
		bulk  int64
	}{
		{"2026-03-01", []DayFlag{DayClosed}, false, 0, nil, 0}, // Sunday: its 12 recorded sales do not make it a trading day
		{"2026-02-28", []DayFlag{DayZeroSales, DayPossibleStockout}, false, 12, fp(0), 0},
		{"2026-03-03", []DayFlag{DayBulkDominated}, true, 12, fp(1), 30},
		{"2026-03-02", []DayFlag{}, true, 12, fp(2), 0},
	}
	for _, tt := range tests {
		r := rows[tt.date]
		if diff := cmp.Diff(tt.flags, r.Flags); diff != "" {
			t.Errorf("%s flags (-want +got):\n%s", tt.date, diff)
		}
		if r.UsedInBand != tt.used || r.TradingHours != tt.hours || r.BulkUnits != tt.bulk || !cmp.Equal(r.UnitsPerHour, tt.rate) {
			t.Errorf("%s = %+v", tt.date, r)
		}
	}
	if want := "25th to 75th percentile of daily units per trading hour over 10 trading days from 2026-02-25 to 2026-03-10, leaving out 2 possible stockout days and 30 units in bulk transactions."; got.VelocityBasis != want {
		t.Errorf("velocity_basis = %q\nwant %q", got.VelocityBasis, want)
	}
}

func TestStoreClosedTodayAnswers(t *testing.T) {
	in := base()
	in.Hours[time.Wednesday] = DayHours{Closed: true}
	got := Project(in)
	// Band [1, 2], 10 units from Thu 08:00: 5 h -> 13:00, 10 h -> 18:00.
	// No trading left today -> false, nothing short. Lead 2 -> Fri 08:00.
	want := outcome{sp("2026-03-12T13:00:00+01:00"), sp("2026-03-12T18:00:00+01:00"), No, i64(0),
		sp("2026-03-13T08:00:00+01:00"), No, ConfidenceHigh, []Flag{FlagStoreClosedToday}}
	if diff := cmp.Diff(want, outcomeOf(got)); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	if got.StoreOpenNow || got.OpensAtToday != nil || got.ClosesAtToday != nil || got.TradingHoursLeftToday != 0 {
		t.Errorf("closed today reported as trading: %+v", got)
	}
	// 6 days of 12 h a week: 72/7 = 10.285... -> 10.29.
	if got.TradingHoursPerDay != 10.29 {
		t.Errorf("trading_hours_per_day = %v, want 10.29", got.TradingHoursPerDay)
	}
}

func TestOutsideTradingHours(t *testing.T) {
	tests := []struct {
		name string
		now  time.Time
		want outcome
		left float64
	}{
		{
			// 07:00, before opening: 12 h left. 10 units: 5 h -> 13:00,
			// 10 h -> 18:00, both before 20:00 -> true; short 2*12 - 10 = 14.
			name: "before opening",
			now:  time.Date(2026, 3, 11, 7, 0, 0, 0, prague),
			want: outcome{sp("2026-03-11T13:00:00+01:00"), sp("2026-03-11T18:00:00+01:00"), Yes, i64(14),
				sp("2026-03-13T08:00:00+01:00"), No, ConfidenceHigh, []Flag{FlagOutsideTradingHours}},
			left: 12,
		},
		{
			// 21:00, after closing: nothing sells today -> false. From Thu 08:00
			// 13:00 and 18:00.
			name: "after closing",
			now:  time.Date(2026, 3, 11, 21, 0, 0, 0, prague),
			want: outcome{sp("2026-03-12T13:00:00+01:00"), sp("2026-03-12T18:00:00+01:00"), No, i64(0),
				sp("2026-03-13T08:00:00+01:00"), No, ConfidenceHigh, []Flag{FlagOutsideTradingHours}},
		},
		{
			// 20:00 exactly is closed: the trading span is half-open.
			name: "at closing time",
			now:  time.Date(2026, 3, 11, 20, 0, 0, 0, prague),
			want: outcome{sp("2026-03-12T13:00:00+01:00"), sp("2026-03-12T18:00:00+01:00"), No, i64(0),
				sp("2026-03-13T08:00:00+01:00"), No, ConfidenceHigh, []Flag{FlagOutsideTradingHours}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			in.Now = tt.now
			got := Project(in)
			if diff := cmp.Diff(tt.want, outcomeOf(got)); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if got.StoreOpenNow || got.TradingHoursLeftToday != tt.left {
				t.Errorf("store_open_now = %v, hours left = %v", got.StoreOpenNow, got.TradingHoursLeftToday)
			}
		})
	}
}

func TestFlagsClosedSet(t *testing.T) {
	want := []Flag{"insufficient_history", "no_sales_in_window", "bulk_transaction_dominates_day",
		"possible_stockout_days", "high_variability", "stale_on_hand_count", "negative_on_hand",
		"store_closed_today", "outside_trading_hours"}
	if diff := cmp.Diff(want, Flags()); diff != "" {
		t.Errorf("Flags() (-want +got):\n%s", diff)
	}
}

func TestDaysOfCover(t *testing.T) {
	r := Project(base()) // band [1, 2] per hour, 12 trading hours every day
	// 48 units: at 2/h * 12 h = 24 a day -> 2 days; at 1/h -> 4 days.
	low, high, ok := r.DaysOfCover(48)
	if !ok || low != 2 || high != 4 {
		t.Errorf("DaysOfCover(48) = %v, %v, %v; want 2, 4, true", low, high, ok)
	}
	if low, high, ok := r.DaysOfCover(-5); !ok || low != 0 || high != 0 {
		t.Errorf("DaysOfCover(-5) = %v, %v, %v; want 0, 0, true", low, high, ok)
	}
	in := base()
	in.Sales = nil
	if _, _, ok := Project(in).DaysOfCover(48); ok {
		t.Error("DaysOfCover without a band is ok")
	}
	zeroLow := Result{UnitsPerTradingHour: &Band{0, 1}, TradingHoursPerDay: 12}
	if _, _, ok := zeroLow.DaysOfCover(48); ok {
		t.Error("DaysOfCover with a zero low rate is ok (unbounded cover)")
	}
}

func TestParseClock(t *testing.T) {
	for in, want := range map[string]int{"00:00": 0, "07:30": 450, "23:59": 1439} {
		if got, err := ParseClock(in); err != nil || got != want {
			t.Errorf("ParseClock(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "7:30", "24:00", "12:60", "12-00", "ab:cd", "07:300"} {
		if _, err := ParseClock(in); err == nil {
			t.Errorf("ParseClock(%q) succeeded", in)
		}
	}
}

func TestInvalidHoursCountAsClosed(t *testing.T) {
	in := base()
	in.Hours[time.Wednesday] = DayHours{Opens: 20 * 60, Closes: 8 * 60} // reversed
	got := Project(in)
	if got.OpensAtToday != nil || !cmp.Equal(got.DataQualityFlags, []Flag{FlagStoreClosedToday}) {
		t.Errorf("reversed hours treated as open: flags %v", got.DataQualityFlags)
	}
}

func TestPercentile(t *testing.T) {
	xs := []float64{4, 1, 3, 2} // sorted 1 2 3 4
	tests := []struct{ p, want float64 }{
		{0, 1}, {0.25, 1.75}, {0.5, 2.5}, {0.75, 3.25}, {1, 4},
	}
	for _, tt := range tests {
		if got := percentile(xs, tt.p); got != tt.want {
			t.Errorf("percentile(%v) = %v, want %v", tt.p, got, tt.want)
		}
	}
	if xs[0] != 4 {
		t.Error("percentile sorted its input in place")
	}
	if got := percentile([]float64{7}, 0.75); got != 7 {
		t.Errorf("single value percentile = %v", got)
	}
}
