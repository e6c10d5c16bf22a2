package projection

import (
	"encoding/binary"
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var fuzzZones = []*time.Location{
	prague, time.UTC, mustLoad("Europe/Vienna"), mustLoad("America/New_York"),
	mustLoad("Australia/Lord_Howe"), // 30-minute DST shift
	mustLoad("Pacific/Chatham"),     // +12:45
}

// fuzzInput builds an Input from raw fuzz values. A positive historyAgeMin
// or salesFromAgeMin sets HistoryStart or SalesFrom that many minutes ago.
func fuzzInput(now int64, zone uint8, hours uint64, onHand int64, countAgeMin int32, lookback, lead int8, cutoff int16, historyAgeMin, salesFromAgeMin int32, sales []byte) Input {
	loc := fuzzZones[int(zone)%len(fuzzZones)]
	// Keep now within years the zone database describes well.
	base := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).Unix()
	t := time.Unix(base+now%(3*365*86400), 0).In(loc)
	var wh WeeklyHours
	for i := range wh {
		b := uint16(hours >> (9 * i))
		wh[i] = DayHours{Closed: b&1 == 1, Opens: int(b>>1&0x1f) * 60, Closes: int(b>>1&0x1f)*60 + int(hours>>(i+50)&0x3f)*30}
	}
	in := Input{
		Now: t, Location: loc, Hours: wh, OnHand: onHand,
		CountedAt: t.Add(-time.Duration(countAgeMin) * time.Minute), LookbackDays: int(lookback), LeadTimeDays: int(lead),
	}
	if cutoff >= 0 {
		c := int(cutoff)
		in.OrderCutoff = &c
	}
	if historyAgeMin > 0 {
		in.HistoryStart = t.Add(-time.Duration(historyAgeMin) * time.Minute)
	}
	if salesFromAgeMin > 0 {
		in.SalesFrom = t.Add(-time.Duration(salesFromAgeMin) * time.Minute)
	}
	for len(sales) >= 4 {
		// Offset up to ~45 days back (or a little ahead), units 0..255 with
		// occasional huge values.
		off := int64(binary.LittleEndian.Uint16(sales)) * 60
		units := int64(sales[2])
		if sales[3] == 0xff {
			units = math.MaxInt64 / 2
		}
		in.Sales = append(in.Sales, Sale{At: t.Add(-time.Duration(off) * time.Second).Add(time.Duration(sales[3]%8) * time.Hour), Units: units})
		sales = sales[4:]
	}
	return in
}

func FuzzProject(f *testing.F) {
	f.Add(int64(0), uint8(0), uint64(0x0123456789abcdef), int64(10), int32(420), int8(14), int8(2), int16(720), int32(0), int32(0), []byte("\x10\x00\x02\x00\x20\x00\x01\x01\x30\x01\x05\x00"))
	f.Add(int64(86400*87+3600*1), uint8(0), uint64(0), int64(-5), int32(0), int8(28), int8(-1), int16(-1), int32(28*24*60), int32(28*24*60), []byte{})
	f.Add(int64(86400*300), uint8(4), ^uint64(0), int64(math.MaxInt64), int32(-600), int8(-3), int8(127), int16(1500), int32(-1), int32(math.MaxInt32), []byte("\xff\xff\xff\xff\x00\x00\x01\x02"))
	f.Add(int64(12345), uint8(5), uint64(0xaaaaaaaaaaaaaaaa), int64(math.MinInt64), int32(math.MaxInt32), int8(1), int8(0), int16(0), int32(math.MaxInt32), int32(5), []byte("\x01\x00\x09\x03\x02\x00\x09\x03\x03\x00\x09\x03"))
	// A SKU first sold three days ago, 28 days of history from 20:00.
	f.Add(int64(86400*40+19*3600), uint8(0), uint64(0), int64(25), int32(35), int8(28), int8(1), int16(-1), int32(28*24*60), int32(28*24*60), []byte("\x00\x10\x09\x00\x00\x0a\x08\x00\x00\x05\x0a\x00"))
	f.Fuzz(func(t *testing.T, now int64, zone uint8, hours uint64, onHand int64, countAgeMin int32, lookback, lead int8, cutoff int16, historyAgeMin, salesFromAgeMin int32, sales []byte) {
		in := fuzzInput(now, zone, hours, onHand, countAgeMin, lookback, lead, cutoff, historyAgeMin, salesFromAgeMin, sales)
		got := Project(in)
		checkInvariants(t, in, got)
		if diff := cmp.Diff(got, Project(in)); diff != "" {
			t.Fatalf("not deterministic:\n%s", diff)
		}
	})
}

// TestProjectInvariantsOnSeeds checks the invariants on generated inputs in
// every ordinary test run.
func TestProjectInvariantsOnSeeds(t *testing.T) {
	for i := range 300 {
		x := uint64(i)*0x9e3779b97f4a7c15 + 1
		sales := make([]byte, 4*(i%97))
		for j := range sales {
			x ^= x << 13
			x ^= x >> 7
			x ^= x << 17
			sales[j] = byte(x)
		}
		// About four in five have a history limit, mostly within 28 days; half
		// read sales from a later point.
		history, salesFrom := int32(i*977%50000)-8000, int32(i*613%50000)-25000
		in := fuzzInput(int64(x>>20), uint8(i), x*31, int64(i%40)-5, int32(i*37%3000), int8(i%31), int8(i%5-1), int16(i*53%1500-100), history, salesFrom, sales)
		checkInvariants(t, in, Project(in))
	}
}

func checkInvariants(t *testing.T, in Input, r Result) {
	t.Helper()
	if _, err := json.Marshal(r); err != nil {
		// encoding/json refuses NaN and ±Inf, so this also checks every float.
		t.Fatalf("result does not marshal (NaN or Inf?): %v", err)
	}
	for name, f := range map[string]float64{"age": r.OnHandAgeHours, "observed": r.TradingHoursObserved,
		"per day": r.TradingHoursPerDay, "left": r.TradingHoursLeftToday} {
		if f < 0 {
			t.Errorf("%s = %v is negative", name, f)
		}
	}
	checkShape(t, r)
	checkAnswers(t, in, r)
	checkNoInventedDays(t, in, r)
}

// checkShape checks the evidence rows, the flags and the caveat.
func checkShape(t *testing.T, r Result) {
	t.Helper()
	if len(r.Evidence) > MaxLookbackDays || len(r.Evidence) != r.ObservationDays || r.ObservationDays < 1 {
		t.Errorf("%d evidence rows for %d observation days", len(r.Evidence), r.ObservationDays)
	}
	for i := 1; i < len(r.Evidence); i++ {
		if r.Evidence[i-1].Date >= r.Evidence[i].Date {
			t.Errorf("evidence not in date order: %s then %s", r.Evidence[i-1].Date, r.Evidence[i].Date)
		}
	}
	closed := map[Flag]int{}
	for i, f := range Flags() {
		closed[f] = i
	}
	last := -1
	for _, f := range r.DataQualityFlags {
		i, ok := closed[f]
		if !ok {
			t.Errorf("flag %q is not in the closed set", f)
		}
		if i <= last {
			t.Errorf("flags out of canonical order or repeated: %v", r.DataQualityFlags)
		}
		last = i
	}
	if r.DataQualityFlags == nil {
		t.Error("data_quality_flags is null, want []")
	}
	if c := r.Caveat; c == "" || !strings.HasSuffix(c, ".") || strings.ContainsAny(c, "\n!?") ||
		strings.Count(c, ". ") > 0 || strings.Count(c, ".") != 1+strings.Count(c, "e.g.") {
		t.Errorf("caveat is not one sentence: %q", c)
	}
}

// checkAnswers checks that window, band and yes/no answers agree with each
// other and with a refusal.
func checkAnswers(t *testing.T, in Input, r Result) {
	t.Helper()
	if r.UnitsShortByClose != nil && *r.UnitsShortByClose < 0 {
		t.Errorf("units_short_by_close = %d", *r.UnitsShortByClose)
	}
	if !in.Now.IsZero() {
		if _, err := time.Parse(time.RFC3339, r.AsOf); err != nil {
			t.Errorf("as_of %q: %v", r.AsOf, err)
		}
	}
	w := r.ProjectedStockoutWindow
	if w.Earliest != nil && w.Latest != nil {
		e, err1 := time.Parse(time.RFC3339, *w.Earliest)
		l, err2 := time.Parse(time.RFC3339, *w.Latest)
		if err1 != nil || err2 != nil || e.After(l) {
			t.Errorf("window out of order or unparsable: %s .. %s", *w.Earliest, *w.Latest)
		}
	}
	if w.Earliest == nil && w.Latest != nil {
		t.Errorf("latest %s without earliest", *w.Latest)
	}
	if !containsConf(r.Confidence) || !containsAnswer(r.WillStockoutBeforeCloseToday) || !containsAnswer(r.ArrivalBeatsStockout) {
		t.Errorf("enum out of range: %s %s %s", r.Confidence, r.WillStockoutBeforeCloseToday, r.ArrivalBeatsStockout)
	}
	if r.Confidence == ConfidenceNone {
		if r.UnitsPerTradingHour != nil || w.Earliest != nil || w.Latest != nil || r.UnitsShortByClose != nil ||
			r.WillStockoutBeforeCloseToday != Unknown || r.ArrivalBeatsStockout != Unknown {
			t.Errorf("refusal still guessed: %+v", r)
		}
		for _, row := range r.Evidence {
			if row.UsedInBand {
				t.Errorf("%s marked used_in_band without a band", row.Date)
			}
		}
	} else {
		b := r.UnitsPerTradingHour
		if b == nil || b.Low < 0 || b.Low > b.High || r.UnitsShortByClose == nil {
			t.Errorf("projection without a valid band: %+v", b)
		}
		if r.WillStockoutBeforeCloseToday == Yes && w.Earliest == nil {
			t.Error("will stock out today without an earliest stockout")
		}
		if lo, hi, ok := r.DaysOfCover(100); ok && (math.IsNaN(lo) || math.IsInf(hi, 0) || lo > hi || lo < 0) {
			t.Errorf("DaysOfCover(100) = %v, %v", lo, hi)
		}
	}
	if r.WillStockoutBeforeCloseToday == Yes && r.EstimatedOnHandNow > 0 && r.TradingHoursLeftToday == 0 {
		t.Error("stock sells out today with no trading time left")
	}
	if r.EarliestReplenishmentArrival != nil && r.SupplierLeadTimeDays == nil {
		t.Error("an arrival without a lead time")
	}
}

// checkNoInventedDays: a trading day before the history start or the first
// recorded sale is never a zero-sale or possible-stockout day, never feeds
// the band, and only such days are marked no_history.
func checkNoInventedDays(t *testing.T, in Input, r Result) {
	t.Helper()
	loc := in.Location
	if loc == nil {
		loc = time.UTC
	}
	var first time.Time
	for _, s := range in.Sales {
		if s.Units > 0 && !s.At.After(in.Now) && (first.IsZero() || s.At.Before(first)) {
			first = s.At
		}
	}
	firstDate := ""
	if !first.IsZero() && (in.SalesFrom.IsZero() || !in.SalesFrom.After(in.HistoryStart)) {
		firstDate = first.In(loc).Format(time.DateOnly)
	}
	for _, row := range r.Evidence {
		d, err := time.ParseInLocation(time.DateOnly, row.Date, loc)
		if err != nil {
			t.Fatalf("evidence date %q: %v", row.Date, err)
		}
		sp, open := in.Hours.tradingSpan(civilOf(d), loc)
		unseen := open && (row.Date < firstDate || !in.HistoryStart.IsZero() && sp.start.Before(in.HistoryStart))
		if unseen && (slices.Contains(row.Flags, DayZeroSales) || slices.Contains(row.Flags, DayPossibleStockout) ||
			row.UsedInBand || row.UnitsPerHour != nil) {
			t.Errorf("%s lies outside the history or before the first sale (%s) but reads as evidence: %+v", row.Date, firstDate, row)
		}
		if unseen != slices.Contains(row.Flags, DayNoHistory) {
			t.Errorf("%s: no_history is %v, want %v (first sale %s, history from %v)", row.Date, !unseen, unseen, firstDate, in.HistoryStart)
		}
	}
}

func containsConf(c Confidence) bool {
	for _, k := range Confidences() {
		if k == c {
			return true
		}
	}
	return false
}

func containsAnswer(a Answer) bool {
	for _, k := range Answers() {
		if k == a {
			return true
		}
	}
	return false
}

// evenSales is perDay transactions of 1-3 units a day, spread over the 12
// hours from 08:00, on days days from 2026-02-firstDay in Prague.
func evenSales(firstDay, days, perDay int) []Sale {
	var sales []Sale
	for d := range days {
		day := time.Date(2026, 2, firstDay+d, 8, 0, 0, 0, prague)
		for j := range perDay {
			sales = append(sales, Sale{At: day.Add(time.Duration(j) * 12 * time.Hour / time.Duration(perDay)), Units: int64(1 + j%3)})
		}
	}
	return sales
}

func BenchmarkProject28DaysBusy(b *testing.B) {
	// 28 days, 150 transactions a day of 1-3 units.
	sales := evenSales(11, 28, 150)
	in := Input{
		Now: wedNow, Location: prague, Hours: open8to20, OnHand: 120, CountedAt: wedNow.Add(-6 * time.Hour),
		Sales: sales, LookbackDays: 28, LeadTimeDays: 2,
	}
	b.ReportAllocs()
	for b.Loop() {
		Project(in)
	}
}

// BenchmarkProject14Days is a warm risk check's projection: 14 days of
// 12 transactions a day, as the butter at store 47.
func BenchmarkProject14Days(b *testing.B) {
	sales := evenSales(25, 15, 12)
	in := Input{
		Now: wedNow, Location: prague, Hours: open8to20, OnHand: 40, CountedAt: wedNow.Add(-6 * time.Hour),
		Sales: sales, LookbackDays: 14, LeadTimeDays: 2,
	}
	b.ReportAllocs()
	for b.Loop() {
		r := Project(in)
		_ = Headline(r, nil)
	}
}
