package projection

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Fixtures: a Prague store open 08:00-20:00 every day, now Wed 2026-03-11
// 14:00 (+01:00). The default 14-day window is Wed 25 Feb to Tue 10 Mar.

var prague = mustLoad("Europe/Prague")

func mustLoad(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

func everyDay(opens, closes int) WeeklyHours {
	var h WeeklyHours
	for i := range h {
		h[i] = DayHours{Opens: opens, Closes: closes}
	}
	return h
}

var (
	open8to20 = everyDay(8*60, 20*60)
	wedNow    = time.Date(2026, 3, 11, 14, 0, 0, 0, prague)
)

// daySales spreads units, one per transaction, evenly over 08:00-20:00.
func daySales(y int, m time.Month, d int, units int) []Sale {
	start := time.Date(y, m, d, 8, 0, 0, 0, prague)
	var out []Sale
	for j := 0; j < units; j++ {
		out = append(out, Sale{At: start.Add(time.Duration(j) * 12 * time.Hour / time.Duration(units)), Units: 1})
	}
	return out
}

// history builds sales for consecutive days from first, units[i] on day i.
func history(first time.Time, units []int) []Sale {
	var out []Sale
	for i, u := range units {
		y, m, d := first.AddDate(0, 0, i).Date()
		out = append(out, daySales(y, m, d, u)...)
	}
	return out
}

// alternating is 12, 24, 12, 24, ... for n days: rates 1 and 2 per hour.
func alternating(n int) []int {
	u := make([]int, n)
	for i := range u {
		u[i] = 12
		if i%2 == 1 {
			u[i] = 24
		}
	}
	return u
}

var feb25 = time.Date(2026, 2, 25, 0, 0, 0, 0, prague)

// base: 14 days of alternating 12/24 units, 10 on hand counted at 07:00
// today, no sales since, lead time 2 days.
func base() Input {
	return Input{
		Now:          wedNow,
		Location:     prague,
		Hours:        open8to20,
		OnHand:       10,
		CountedAt:    time.Date(2026, 3, 11, 7, 0, 0, 0, prague),
		Sales:        history(feb25, alternating(14)),
		LookbackDays: 14,
		LeadTimeDays: 2,
	}
}

func sp(s string) *string { return &s }
func ip(i int) *int       { return &i }
func i64(i int64) *int64  { return &i }
func fp(f float64) *float64 {
	return &f
}

func TestProjectBaseline(t *testing.T) {
	// Rates: seven days at 12/12 = 1.0 and seven at 24/12 = 2.0 units per
	// trading hour. Sorted, 14 values: positions 0-6 are 1, 7-13 are 2.
	//   P25 at 0.25*13 = 3.25 -> between s[3]=1 and s[4]=1 -> 1
	//   P75 at 0.75*13 = 9.75 -> between s[9]=2 and s[10]=2 -> 2
	// CV: mean 1.5, population sd 0.5 -> 0.33 <= 0.5, not high variability.
	// On-hand 10 from 14:00, store closes 20:00 (6 h left):
	//   earliest at 2/h: 10/2 = 5 h -> 19:00 today
	//   latest at 1/h: 10 h = 6 h today + 4 h from 08:00 tomorrow -> 12:00 Thu
	// Close 20:00 lies between them -> unknown. Short by close at 2/h:
	//   2*6 - 10 = 2 units.
	// Arrival: order today (no cut-off) + 2 days = Fri 13 Mar, opening 08:00,
	// after the latest stockout -> false.
	got := Project(base())
	var rows []DayEvidence
	for i, u := range alternating(14) {
		d := feb25.AddDate(0, 0, i)
		rows = append(rows, DayEvidence{
			Date: d.Format("2006-01-02"), Weekday: d.Weekday().String()[:3],
			UnitsSold: int64(u), Transactions: u, TradingHours: 12,
			UnitsPerHour: fp(float64(u) / 12), UsedInBand: true, Flags: []DayFlag{},
		})
	}
	want := Result{
		AsOf:                 "2026-03-11T14:00:00+01:00",
		Timezone:             "Europe/Prague",
		OnHandUnits:          10,
		OnHandAsOf:           "2026-03-11T07:00:00+01:00",
		OnHandAgeHours:       7,
		EstimatedOnHandNow:   10,
		UnitsPerTradingHour:  &Band{Low: 1, High: 2},
		VelocityBasis:        "25th to 75th percentile of daily units per trading hour over 14 trading days from 2026-02-25 to 2026-03-10.",
		ObservationDays:      14,
		TradingDaysUsed:      14,
		TradingHoursObserved: 168,
		TradingHoursPerDay:   12,
		ProjectedStockoutWindow: Window{
			Earliest: sp("2026-03-11T19:00:00+01:00"),
			Latest:   sp("2026-03-12T12:00:00+01:00"),
		},
		HorizonDays:                  14,
		Confidence:                   ConfidenceHigh,
		WillStockoutBeforeCloseToday: Unknown,
		UnitsShortByClose:            i64(2),
		TradingHoursLeftToday:        6,
		StoreOpenNow:                 true,
		OpensAtToday:                 sp("2026-03-11T08:00:00+01:00"),
		ClosesAtToday:                sp("2026-03-11T20:00:00+01:00"),
		SupplierLeadTimeDays:         ip(2),
		EarliestReplenishmentArrival: sp("2026-03-13T08:00:00+01:00"),
		ArrivalBeatsStockout:         No,
		Evidence:                     rows,
		DataQualityFlags:             []Flag{},
		Caveat:                       "The window assumes recent trading-hour sales continue and ignores promotions and deliveries not yet on the shelf.",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Project (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(got, Project(base())); diff != "" {
		t.Errorf("Project is not deterministic:\n%s", diff)
	}
}

// outcome is the part of a Result most tests check.
type outcome struct {
	Earliest, Latest *string
	Will             Answer
	Short            *int64
	Arrival          *string
	Beats            Answer
	Confidence       Confidence
	Flags            []Flag
}

func outcomeOf(r Result) outcome {
	return outcome{
		Earliest: r.ProjectedStockoutWindow.Earliest, Latest: r.ProjectedStockoutWindow.Latest,
		Will: r.WillStockoutBeforeCloseToday, Short: r.UnitsShortByClose,
		Arrival: r.EarliestReplenishmentArrival, Beats: r.ArrivalBeatsStockout,
		Confidence: r.Confidence, Flags: r.DataQualityFlags,
	}
}

// baseWindow is the baseline's window (19:00 today to 12:00 tomorrow,
// 2 units short by close) with the given arrival.
func baseWindow(arrival *string, beats Answer) outcome {
	return outcome{sp("2026-03-11T19:00:00+01:00"), sp("2026-03-12T12:00:00+01:00"), Unknown, i64(2), arrival, beats, ConfidenceHigh, []Flag{}}
}

// stockoutCases all use the baseline band [1, 2] per hour, now 14:00, close
// 20:00.
var stockoutCases = []struct {
	name   string
	modify func(*Input)
	want   outcome
}{
	// 5 units: earliest 5/2 = 2.5 h -> 16:30; latest 5/1 = 5 h -> 19:00;
	// both before 20:00 -> true. Short: 2*6 - 5 = 7.
	// Arrival Fri 08:00 is after both -> false.
	{"runs out before close", func(in *Input) { in.OnHand = 5 },
		outcome{sp("2026-03-11T16:30:00+01:00"), sp("2026-03-11T19:00:00+01:00"), Yes, i64(7),
			sp("2026-03-13T08:00:00+01:00"), No, ConfidenceHigh, []Flag{}}},
	// 13 units: at 2/h the 6 h today use 12, the last unit lasts 0.5 h
	// from 08:00 tomorrow -> 08:30 Thu; at 1/h 6 today, 7 h tomorrow ->
	// 15:00 Thu. Earliest is after close -> false; short 12 - 13 < 0 -> 0.
	{"lasts until close", func(in *Input) { in.OnHand = 13 },
		outcome{sp("2026-03-12T08:30:00+01:00"), sp("2026-03-12T15:00:00+01:00"), No, i64(0),
			sp("2026-03-13T08:00:00+01:00"), No, ConfidenceHigh, []Flag{}}},
	{
		// Count 14 at 07:00, 4 units sold since (2 at 10:00, 2 at 11:00) and
		// 1 at 06:30 before the count: estimate 14 - 4 = 10 -> the baseline
		// window.
		name: "sales since the count are subtracted",
		modify: func(in *Input) {
			in.OnHand = 14
			in.Sales = append(in.Sales,
				Sale{At: time.Date(2026, 3, 11, 6, 30, 0, 0, prague), Units: 1},
				Sale{At: time.Date(2026, 3, 11, 10, 0, 0, 0, prague), Units: 2},
				Sale{At: time.Date(2026, 3, 11, 11, 0, 0, 0, prague), Units: 2},
				// In the future: ignored.
				Sale{At: time.Date(2026, 3, 11, 15, 0, 0, 0, prague), Units: 50},
			)
		},
		want: baseWindow(sp("2026-03-13T08:00:00+01:00"), No),
	},
	// Lead 0, no cut-off: a delivery could land now (store open), which
	// is before the earliest stockout -> true.
	{"same-day delivery beats it", func(in *Input) { in.LeadTimeDays = 0 },
		baseWindow(sp("2026-03-11T14:00:00+01:00"), Yes)},
	// Lead 1: Thu 08:00 is after the earliest (19:00 Wed) and before the
	// latest (12:00 Thu) -> unknown.
	{"arrival inside the window", func(in *Input) { in.LeadTimeDays = 1 },
		baseWindow(sp("2026-03-12T08:00:00+01:00"), Unknown)},
	// Cut-off 12:00 has passed at 14:00: the order counts from Thu, so
	// lead 0 lands Thu 08:00 -> inside the window.
	{"cut-off passed", func(in *Input) { in.LeadTimeDays = 0; in.OrderCutoff = ip(12 * 60) },
		baseWindow(sp("2026-03-12T08:00:00+01:00"), Unknown)},
	// Cut-off 15:00 not yet passed: same as lead 0 without cut-off.
	{"cut-off not yet passed", func(in *Input) { in.LeadTimeDays = 0; in.OrderCutoff = ip(15 * 60) },
		baseWindow(sp("2026-03-11T14:00:00+01:00"), Yes)},
	{"lead time unknown", func(in *Input) { in.LeadTimeDays = -1 },
		baseWindow(nil, Unknown)},
	{
		// Count 3, 3 sold since: estimate 0 -> already out: window is now,
		// true, short = 2*6 - 0 = 12, nothing can beat it.
		name: "sold out since the count",
		modify: func(in *Input) {
			in.OnHand = 3
			in.Sales = append(in.Sales, Sale{At: time.Date(2026, 3, 11, 9, 0, 0, 0, prague), Units: 3})
		},
		want: outcome{sp("2026-03-11T14:00:00+01:00"), sp("2026-03-11T14:00:00+01:00"), Yes, i64(12),
			sp("2026-03-13T08:00:00+01:00"), No, ConfidenceHigh, []Flag{}},
	},
	// Negative on-hand: already out by the book; low confidence.
	{"negative on-hand", func(in *Input) { in.OnHand = -3 },
		outcome{sp("2026-03-11T14:00:00+01:00"), sp("2026-03-11T14:00:00+01:00"), Yes, i64(12),
			sp("2026-03-13T08:00:00+01:00"), No, ConfidenceLow, []Flag{FlagNegativeOnHand}}},
	// 1000 units: at 2/h the 14-day horizon (about 12 h * 14 = 168 h,
	// 336 units) is not enough -> both ends null, false; a delivery
	// within the horizon beats it.
	{"beyond the horizon", func(in *Input) { in.OnHand = 1000 },
		outcome{nil, nil, No, i64(0),
			sp("2026-03-13T08:00:00+01:00"), Yes, ConfidenceHigh, []Flag{}}},
	// 300 units: at 2/h, 6 h today (12) + 12 days * 24 = 300 -> runs
	// out at close on day 12 after today, Mon 23 Mar 20:00 (CET still);
	// at 1/h it needs 300 h > the horizon -> latest null.
	{"latest beyond the horizon", func(in *Input) { in.OnHand = 300 },
		outcome{sp("2026-03-23T20:00:00+01:00"), nil, No, i64(0),
			sp("2026-03-13T08:00:00+01:00"), Yes, ConfidenceHigh, []Flag{}}},
}

func TestProjectStockoutAndArrival(t *testing.T) {
	for _, tt := range stockoutCases {
		t.Run(tt.name, func(t *testing.T) {
			in := base()
			tt.modify(&in)
			if diff := cmp.Diff(tt.want, outcomeOf(Project(in))); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}
