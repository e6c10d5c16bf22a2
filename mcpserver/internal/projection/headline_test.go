package projection

import (
	"strings"
	"testing"
	"time"
)

// Wednesday 25 November 2026, Prague (+01:00).
const hlDay = "2026-11-25T"

func hlTime(clock string) *string { return ptr(hlDay + clock + ":00+01:00") }

// hlBase is a store open 07:00-17:05 at 10:00 on a Wednesday, with a
// delivery possible on Friday at 07:00 and high confidence.
func hlBase() Result {
	return Result{
		AsOf: *hlTime("10:00"), OnHandUnits: 20, EstimatedOnHandNow: 20, StoreOpenNow: true,
		OpensAtToday: hlTime("07:00"), ClosesAtToday: hlTime("17:05"), TradingHoursLeftToday: 7.08,
		Confidence: ConfidenceHigh, TradingDaysUsed: 12, ObservationDays: 14,
		SupplierLeadTimeDays: ptr(2), EarliestReplenishmentArrival: ptr("2026-11-27T07:00:00+01:00"),
		WillStockoutBeforeCloseToday: No, ArrivalBeatsStockout: Unknown,
		UnitsShortByClose: ptr(int64(0)), DataQualityFlags: []Flag{},
	}
}

func TestHeadlineSaysTheDecision(t *testing.T) {
	cases := []struct {
		name    string
		edit    func(r *Result)
		unknown []string
		want    string
	}{
		{"runs out at one time", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: hlTime("12:05"), Latest: hlTime("12:05")}
			r.WillStockoutBeforeCloseToday, r.ArrivalBeatsStockout, r.UnitsShortByClose = Yes, No, ptr(int64(16))
		}, nil, "Runs out about 12:05 today, 5 h before the 17:05 close. The next delivery (Fri 07:00) is too late. 16 short by close."},
		{"runs out within a window", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: hlTime("12:05"), Latest: hlTime("13:40")}
			r.WillStockoutBeforeCloseToday, r.ArrivalBeatsStockout, r.UnitsShortByClose = Yes, No, ptr(int64(1))
		}, nil, "Runs out between 12:05 and 13:40 today, at least 3 h 25 min before the 17:05 close. The next delivery (Fri 07:00) is too late. 1 short by close."},
		{"window spans the close", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: hlTime("16:30"), Latest: ptr("2026-11-26T09:30:00+01:00")}
			r.WillStockoutBeforeCloseToday, r.ArrivalBeatsStockout, r.UnitsShortByClose = Unknown, No, ptr(int64(3))
		}, nil, "May run out before the 17:05 close: between 16:30 today and Thu 09:30. The next delivery (Fri 07:00) is too late. Up to 3 short by close."},
		{"no stockout before close", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: ptr("2026-11-26T11:00:00+01:00"), Latest: ptr("2026-11-26T15:00:00+01:00")}
			r.ArrivalBeatsStockout = No
		}, nil, "Lasts past the 17:05 close; runs out Thu 11:00 at the earliest. The next delivery (Fri 07:00) is too late."},
		{"delivery in time", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: ptr("2026-11-27T11:00:00+01:00"), Latest: ptr("2026-11-28T11:00:00+01:00")}
			r.ArrivalBeatsStockout = Yes
		}, nil, "Lasts past the 17:05 close; runs out Fri 11:00 at the earliest. The next delivery (Fri 07:00) arrives in time."},
		{"beyond the horizon", func(r *Result) { r.ArrivalBeatsStockout = Yes },
			nil, "Lasts past today's close and beyond 14 days at the recent rate. The next delivery (Fri 07:00) arrives in time."},
		{"cut-off passed", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: ptr("2026-11-26T11:00:00+01:00"), Latest: ptr("2026-11-26T15:00:00+01:00")}
			r.OrderCutoffPassed, r.EarliestReplenishmentArrival, r.ArrivalBeatsStockout = true, ptr("2026-11-28T07:00:00+01:00"), No
		}, nil, "Lasts past the 17:05 close; runs out Thu 11:00 at the earliest. Today's order cut-off has passed; the next delivery (Sat 07:00) is too late."},
		{"too little history", func(r *Result) {
			r.Confidence, r.TradingDaysUsed, r.EstimatedOnHandNow = ConfidenceNone, 3, 9
			r.WillStockoutBeforeCloseToday, r.UnitsShortByClose = Unknown, nil
			r.DataQualityFlags = []Flag{FlagInsufficientHistory}
		}, nil, "Stockout time unknown: only 3 usable trading days of sales, fewer than 5. About 9 on hand. The next delivery could arrive Fri 07:00."},
		{"no sales", func(r *Result) {
			r.Confidence, r.WillStockoutBeforeCloseToday, r.UnitsShortByClose = ConfidenceNone, Unknown, nil
			r.DataQualityFlags = []Flag{FlagNoSalesInWindow}
		}, nil, "Stockout time unknown: nothing sold in the last 14 days. About 20 on hand. The next delivery could arrive Fri 07:00."},
		{"flagged data", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: ptr("2026-11-26T11:00:00+01:00"), Latest: ptr("2026-11-26T15:00:00+01:00")}
			r.Confidence, r.OnHandAsOf, r.OnHandAgeHours = ConfidenceLow, *hlTime("04:00"), 30
			r.DataQualityFlags = []Flag{FlagPossibleStockoutDays, FlagStaleOnHandCount}
			r.Evidence = []DayEvidence{{Flags: []DayFlag{DayZeroSales, DayPossibleStockout}}, {}, {Flags: []DayFlag{DayPossibleStockout}}}
		}, nil, "Lasts past the 17:05 close; runs out Thu 11:00 at the earliest. The next delivery (Fri 07:00) may be too late. Low confidence: 2 days without sales look like stockouts (and 1 more data warning)."},
		{"medium confidence, no flags", func(r *Result) { r.Confidence, r.TradingDaysUsed = ConfidenceMedium, 8 },
			nil, "Lasts past today's close and beyond 14 days at the recent rate. The next delivery (Fri 07:00) may be too late. Medium confidence: only 8 trading days of sales."},
		{"opening hours unknown", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: ptr("2026-11-26T09:00:00+01:00"), Latest: ptr("2026-11-26T15:00:00+01:00")}
			r.OpensAtToday, r.ClosesAtToday, r.WillStockoutBeforeCloseToday, r.UnitsShortByClose = nil, nil, Unknown, nil
		}, []string{"store.opening_hours"}, "Opening hours unknown, so no answer for today's close. At the recent rate it runs out between Thu 09:00 and Thu 15:00. The next delivery (Fri 07:00) may be too late."},
		{"lead time unknown", func(r *Result) { r.SupplierLeadTimeDays, r.EarliestReplenishmentArrival = nil, nil },
			[]string{"supplier.lead_time_days"}, "Lasts past today's close and beyond 14 days at the recent rate. No delivery date: the supplier's lead time is unknown."},
		{"cut-off unknown", func(r *Result) { r.ArrivalBeatsStockout = Yes },
			[]string{"supplier.order_cutoff_local"}, "Lasts past today's close and beyond 14 days at the recent rate. The next delivery (Fri 07:00; order cut-off unknown) arrives in time."},
		{"closed today", func(r *Result) {
			r.ProjectedStockoutWindow = Window{Earliest: ptr("2026-11-26T10:00:00+01:00"), Latest: ptr("2026-11-26T10:00:00+01:00")}
			r.OpensAtToday, r.ClosesAtToday, r.StoreOpenNow, r.TradingHoursLeftToday = nil, nil, false, 0
			r.DataQualityFlags = []Flag{FlagStoreClosedToday}
		}, nil, "Closed today. It runs out about Thu 10:00. The next delivery (Fri 07:00) may be too late."},
		{"after close", func(r *Result) {
			r.AsOf, r.StoreOpenNow, r.TradingHoursLeftToday = *hlTime("18:00"), false, 0
			r.ProjectedStockoutWindow = Window{Earliest: ptr("2026-11-26T11:00:00+01:00"), Latest: ptr("2026-11-26T15:00:00+01:00")}
			r.DataQualityFlags, r.ArrivalBeatsStockout = []Flag{FlagOutsideTradingHours}, No
		}, nil, "Closed at 17:05 today. Runs out Thu 11:00 at the earliest. The next delivery (Fri 07:00) is too late."},
		{"before opening", func(r *Result) {
			r.AsOf, r.StoreOpenNow = *hlTime("06:00"), false
			r.ProjectedStockoutWindow = Window{Earliest: hlTime("16:04"), Latest: hlTime("16:04")}
			r.DataQualityFlags, r.ArrivalBeatsStockout = []Flag{FlagOutsideTradingHours}, No
			r.WillStockoutBeforeCloseToday, r.UnitsShortByClose = Yes, ptr(int64(2))
		}, nil, "Opens at 07:00. Runs out about 16:04 today, 1 h 1 min before the 17:05 close. The next delivery (Fri 07:00) is too late. 2 short by close."},
		{"sold out since the count", func(r *Result) {
			r.OnHandUnits, r.EstimatedOnHandNow = 5, -2
			r.ProjectedStockoutWindow = Window{Earliest: hlTime("10:00"), Latest: hlTime("10:00")}
			r.WillStockoutBeforeCloseToday, r.ArrivalBeatsStockout, r.UnitsShortByClose = Yes, No, ptr(int64(14))
		}, nil, "Probably out of stock now: sales since the count used up the 5 counted. The next delivery (Fri 07:00) is too late. 14 short by close."},
		{"negative on hand", func(r *Result) {
			r.OnHandUnits, r.EstimatedOnHandNow, r.Confidence = -3, -3, ConfidenceLow
			r.WillStockoutBeforeCloseToday, r.ArrivalBeatsStockout = Yes, No
			r.DataQualityFlags = []Flag{FlagNegativeOnHand}
		}, nil, "Out of stock: StoreLink shows -3 on hand. The next delivery (Fri 07:00) is too late. Low confidence: StoreLink shows negative stock."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := hlBase()
			c.edit(&r)
			got := Headline(r, c.unknown)
			if got != c.want {
				t.Errorf("headline\n got: %s\nwant: %s", got, c.want)
			}
			for _, word := range []string{"call ", "tell ", "relay", "korral_", "_"} {
				if strings.Contains(strings.ToLower(got), word) {
					t.Errorf("headline %q has %q: it is for the buyer, not the model", got, word)
				}
			}
		})
	}
}

// TestLocalClockBoundaries: HH:MM today, the weekday up to six days ahead,
// the date beyond; each time read in its own offset.
func TestLocalClockBoundaries(t *testing.T) {
	now := "2026-11-25T23:30:00+01:00"
	for _, c := range []struct{ at, want string }{
		{"2026-11-25T23:59:00+01:00", "23:59"},
		{"2026-11-26T00:00:00+01:00", "Thu 00:00"},
		{"2026-12-01T23:59:00+01:00", "Tue 23:59"},
		{"2026-12-02T00:00:00+01:00", "Wed 2 Dec 00:00"},
		// 22:30 UTC on the 25th is the 25th in UTC but read in its own offset.
		{"2026-11-25T22:30:00Z", "22:30"},
	} {
		nowT, _ := ParseTime(&now)
		if got := localClock(c.at, nowT); got != c.want {
			t.Errorf("localClock(%s) = %q, want %q", c.at, got, c.want)
		}
	}
	for _, c := range []struct {
		minutes int
		want    string
	}{{0, "0 min"}, {59, "59 min"}, {60, "1 h"}, {61, "1 h 1 min"}, {300, "5 h"}} {
		if got := duration(minutes(c.minutes)); got != c.want {
			t.Errorf("duration(%d min) = %q, want %q", c.minutes, got, c.want)
		}
	}
}

func TestDataQualityNotesNameEachFlagInOrder(t *testing.T) {
	r := hlBase()
	r.DataQualityFlags = Flags()
	r.OnHandUnits, r.OnHandAsOf, r.OnHandAgeHours, r.TradingDaysUsed = -3, *hlTime("04:00"), 30, 4
	r.Evidence = []DayEvidence{{Flags: []DayFlag{DayPossibleStockout}},
		{Flags: []DayFlag{DayBulkDominated}}, {Flags: []DayFlag{DayPossibleStockout}}}
	notes := DataQualityNotes(r)
	want := []string{
		"Only 4 usable trading days of sales history; a sell rate needs 5.",
		"Nothing sold in the last 14 days, bulk orders aside: no sell rate to project from.",
		"Bulk orders made most of the sales on 1 day; they are left out of the sell rate.",
		"Sold nothing on 2 trading days when sales were expected: possibly out of stock; left out of the sell rate.",
		"Daily sales vary widely, so the stockout time is uncertain.",
		"The on-hand count is 30 h old, older than 24 h: deliveries or shrink since may move the window.",
		"StoreLink shows -3 on hand, below zero: likely shrink or late scans.",
		"The store does not open today.",
		"The store is not trading right now.",
	}
	if len(notes) != len(want) {
		t.Fatalf("%d notes for %d flags: %q", len(notes), len(r.DataQualityFlags), notes)
	}
	for i := range want {
		if notes[i] != want[i] {
			t.Errorf("note %d (%s)\n got: %s\nwant: %s", i, r.DataQualityFlags[i], notes[i], want[i])
		}
	}
	if got := DataQualityNotes(hlBase()); len(got) != 0 {
		t.Errorf("no flags, notes %q", got)
	}
}

func minutes(n int) time.Duration { return time.Duration(n) * time.Minute }

// TestEveryFlagHasWords: each data-quality flag and day flag has words of
// its own, which the views and the console take from here; a flag's
// sentence ends with a full stop, a day flag's words are a phrase.
func TestEveryFlagHasWords(t *testing.T) {
	seen := map[string]string{}
	for _, f := range Flags() {
		w := FlagWords(f)
		if w == string(f) || w == "" || !strings.HasSuffix(w, ".") || strings.ToUpper(w[:1]) != w[:1] {
			t.Errorf("FlagWords(%s) = %q, want a sentence", f, w)
		}
		if other, ok := seen[w]; ok {
			t.Errorf("flags %s and %s read the same: %q", other, f, w)
		}
		seen[w] = string(f)
	}
	for _, f := range DayFlags() {
		w := DayFlagWords(f)
		if w == string(f) || w == "" || strings.Contains(w, "_") {
			t.Errorf("DayFlagWords(%s) = %q, want words", f, w)
		}
		if other, ok := seen[w]; ok {
			t.Errorf("flags %s and %s read the same: %q", other, f, w)
		}
		seen[w] = string(f)
	}
	if FlagWords("some_new_flag") != "some_new_flag" || DayFlagWords("some_new_day") != "some_new_day" {
		t.Error("an unknown flag is not its id")
	}
}

// localClock's clock of today is cut from the text; it must be what
// Format("15:04") of the parsed time writes, whatever the offset, zone
// letter or fraction.
func TestLocalClockOfTodayIsTheFormattedClock(t *testing.T) {
	for _, s := range []string{"2026-11-27T17:55:00+01:00", "2026-11-27T00:00:00Z", "2026-11-27T23:59:59.999999999-11:30",
		"2026-11-27T09:05:07.5+14:00", "2026-11-27T12:00:00-00:00"} {
		ts, err := time.Parse(time.RFC3339, s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := localClock(s, ts), ts.Format("15:04"); got != want {
			t.Errorf("localClock(%q) = %q, want %q", s, got, want)
		}
	}
}
