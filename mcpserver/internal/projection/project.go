package projection

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Thresholds. ADR 0004 gives the reasoning for each.
const (
	// DefaultLookbackDays is used when Input.LookbackDays is not positive.
	DefaultLookbackDays = 14
	// MaxLookbackDays caps the window, and so the evidence rows.
	MaxLookbackDays = 28
	// HorizonDays is how far ahead a stockout is searched for.
	HorizonDays = 14
	// MinBasisDays is the fewest usable trading days the projection accepts.
	MinBasisDays = 5
	// LowBasisDays: below this many usable days confidence is at most low.
	LowBasisDays = 7
	// HighBasisDays: below this many usable days confidence is at most medium.
	HighBasisDays = 10
	// StaleCountHours is the age beyond which an on-hand count is stale.
	StaleCountHours = 24
	// MaxSteadyCV is the largest coefficient of variation of daily rates that
	// is not flagged as high variability.
	MaxSteadyCV = 0.5
	// BulkMinUnits and BulkMedianMultiple define a bulk transaction: at least
	// BulkMinUnits units and at least BulkMedianMultiple times the window's
	// median transaction.
	BulkMinUnits       = 10
	BulkMedianMultiple = 5
	// BulkDominantShare is the share of a day's units that bulk transactions
	// must reach for the day to count as bulk-dominated.
	BulkDominantShare = 0.5
	// StockoutExpectedUnits: a zero-sale trading day is a possible stockout
	// when the window's median rate predicted at least this many units. For a
	// Poisson seller that is a zero with under 1% probability.
	StockoutExpectedUnits = 5.0
)

// Sale is one POS transaction line.
type Sale struct {
	At    time.Time
	Units int64
}

// Input is everything the projection needs; it does no I/O and reads no
// clock.
type Input struct {
	// Now is the moment to project from.
	Now time.Time
	// Location is the store's timezone; nil means UTC.
	Location *time.Location
	// Hours are the store's weekly opening hours in Location.
	Hours WeeklyHours
	// HoursUnknown: StoreLink gave no readable opening hours (ADR 0030).
	// Hours is then ignored and every day counts as trading around the
	// clock, so the sell rate is per clock hour of whole days; nothing is
	// said about today's close (will_stockout_before_close_today is
	// unknown, no shortfall by close, no opening or closing time) and no
	// flag says the store is closed or outside its hours.
	HoursUnknown bool
	// OnHand is StoreLink's on-hand figure, taken at CountedAt (zero: unknown).
	OnHand    int64
	CountedAt time.Time
	// Sales must cover the lookback window and the time since CountedAt, up
	// to Now. Lines with non-positive units or after Now are ignored.
	Sales []Sale
	// SalesFrom is the instant from which Sales holds every sale; zero means
	// Sales is the SKU's whole recorded history. When Sales reaches back to
	// HistoryStart, its earliest sale is the SKU's first recorded one, and
	// the days before it say nothing about demand.
	SalesFrom time.Time
	// HistoryStart is the oldest instant the point-of-sale history covers
	// (StoreLink keeps 28 × 24 hours); zero means no limit. A trading day
	// that opened before it is only partly known and is not evidence.
	HistoryStart time.Time
	// LookbackDays is the number of complete local days before today to
	// learn the sell rate from; clamped to 1..MaxLookbackDays, and
	// DefaultLookbackDays when not positive.
	LookbackDays int
	// LeadTimeDays is the supplier's lead time; negative when unknown.
	LeadTimeDays int
	// OrderCutoff is the supplier's daily order cut-off in store-local minutes
	// after midnight, when it has one.
	OrderCutoff *int
}

// maxLeadDays bounds date arithmetic on absurd lead times.
const maxLeadDays = 3650

type day struct {
	date     civil
	span     span
	open     bool
	units    int64
	bulk     int64
	tx       int
	rate     float64 // (units-bulk)/hours on open days
	dominant bool
	stockout bool
	basis    bool
	// noHistory: an open day before the first recorded sale or opened before
	// the history starts. Its sales (if any) are shown, never used.
	noHistory bool
}

// Project computes the stockout projection. It is deterministic: the same
// Input always gives the same Result.
func Project(in Input) Result {
	loc := in.Location
	if loc == nil {
		loc = time.UTC
	}
	if in.HoursUnknown {
		in.Hours = aroundTheClock
	}
	lookback := in.LookbackDays
	switch {
	case lookback <= 0:
		lookback = DefaultLookbackDays
	case lookback > MaxLookbackDays:
		lookback = MaxLookbackDays
	}
	now := in.Now.In(loc)
	today := civilOf(now)

	r := Result{
		AsOf:               stamp(now),
		Timezone:           loc.String(),
		OnHandUnits:        in.OnHand,
		ObservationDays:    lookback,
		HorizonDays:        HorizonDays,
		TradingHoursPerDay: round(in.Hours.nominalHoursPerDay(), 2),
	}

	// The window is the complete local days before today: today is still
	// trading, and a partial day would drag the rates down.
	first := today.addDays(-lookback)
	days := make([]day, lookback)
	index := make(map[civil]int, lookback)
	for i := range days {
		c := first.addDays(i)
		sp, open := in.Hours.tradingSpan(c, loc)
		days[i] = day{date: c, span: sp, open: open}
		index[c] = i
	}

	type line struct {
		day   int
		units int64
	}
	// Sized for every sale, since most of them usually fall in the window:
	// growing these by doubling was most of the projection's allocation on
	// a busy SKU (see BenchmarkProject28DaysBusy).
	inWindow := make([]line, 0, len(in.Sales))
	txUnits := make([]float64, 0, len(in.Sales))
	var firstSale time.Time
	for _, s := range in.Sales {
		if s.Units <= 0 || s.At.After(now) {
			continue
		}
		if firstSale.IsZero() || s.At.Before(firstSale) {
			firstSale = s.At
		}
		if !in.CountedAt.IsZero() && s.At.After(in.CountedAt) {
			r.UnitsSoldSinceCount = addSat(r.UnitsSoldSinceCount, s.Units)
		}
		c := civilOf(s.At.In(loc))
		if c == today {
			r.UnitsSoldToday = addSat(r.UnitsSoldToday, s.Units)
		}
		if i, ok := index[c]; ok {
			inWindow = append(inWindow, line{i, s.Units})
			txUnits = append(txUnits, float64(s.Units))
			days[i].units = addSat(days[i].units, s.Units)
			days[i].tx++
		}
	}

	// A day before the SKU's first recorded sale, or one that opened before
	// StoreLink's history starts, is not a zero-demand day: nothing could
	// have been seen. Both cut a prefix off the window.
	var listed *civil
	if !firstSale.IsZero() && (in.SalesFrom.IsZero() || !in.SalesFrom.After(in.HistoryStart)) {
		listed = ptr(civilOf(firstSale.In(loc)))
	}
	for i := range days {
		d := &days[i]
		d.noHistory = d.open && (listed != nil && d.date.before(*listed) ||
			!in.HistoryStart.IsZero() && d.span.start.Before(in.HistoryStart))
	}

	// Bulk transactions: large against this SKU's own usual basket.
	bulkAt := math.Max(BulkMinUnits, BulkMedianMultiple*median(txUnits))
	for _, l := range inWindow {
		if float64(l.units) >= bulkAt {
			days[l.day].bulk = addSat(days[l.day].bulk, l.units)
		}
	}
	var openRates []float64
	for i := range days {
		d := &days[i]
		if d.noHistory {
			continue
		}
		d.dominant = d.bulk > 0 && float64(d.bulk) >= BulkDominantShare*float64(d.units)
		if d.open {
			d.rate = float64(d.units-d.bulk) / d.span.hours()
			openRates = append(openRates, d.rate)
		}
	}
	// A zero-sale day is a possible stockout only where sales are usually
	// steady: with the median taken over all trading days, an intermittent
	// seller (zero on most days) has median 0 and never trips it.
	typical := median(openRates)
	var basisRates []float64
	var basisHours float64
	var basisUnits, bulkUnits int64
	dominated, stockouts := 0, 0
	for i := range days {
		d := &days[i]
		if d.dominant {
			dominated++
		}
		if !d.open || d.noHistory {
			continue
		}
		if d.units == 0 && typical*d.span.hours() >= StockoutExpectedUnits {
			d.stockout = true
			stockouts++
			continue
		}
		d.basis = true
		basisRates = append(basisRates, d.rate)
		basisHours += d.span.hours()
		basisUnits = addSat(basisUnits, d.units-d.bulk)
		bulkUnits = addSat(bulkUnits, d.bulk)
	}
	r.TradingDaysUsed = len(basisRates)
	r.TradingHoursObserved = round(basisHours, 2)

	flags := map[Flag]bool{
		FlagInsufficientHistory:  len(basisRates) < MinBasisDays,
		FlagNoSalesInWindow:      len(basisRates) > 0 && basisUnits == 0,
		FlagBulkDominatesDay:     dominated > 0,
		FlagPossibleStockoutDays: stockouts > 0,
		FlagNegativeOnHand:       in.OnHand < 0,
		FlagStaleOnHandCount:     in.CountedAt.IsZero() || now.Sub(in.CountedAt) > StaleCountHours*time.Hour,
	}
	refuse := flags[FlagInsufficientHistory] || flags[FlagNoSalesInWindow]

	var band Band
	if !refuse {
		flags[FlagHighVariability] = coefficientOfVariation(basisRates) > MaxSteadyCV
		// Rates are rounded before use so that the published band reproduces
		// the published window exactly.
		band = Band{Low: round(percentile(basisRates, 0.25), 4), High: round(percentile(basisRates, 0.75), 4)}
		r.UnitsPerTradingHour = &band
	}
	r.VelocityBasis = velocityBasis(days, lookback, refuse, flags, stockouts, bulkUnits, listed)
	if in.HoursUnknown {
		r.VelocityBasis += " Opening hours unknown: every hour of the day counts as a trading hour."
	}

	if !in.CountedAt.IsZero() {
		r.OnHandAsOf = stamp(in.CountedAt.In(loc))
		r.OnHandAgeHours = round(math.Max(0, now.Sub(in.CountedAt).Hours()), 1)
	}
	// UnitsSoldSinceCount is never negative, so negating it cannot overflow.
	est := addSat(in.OnHand, -r.UnitsSoldSinceCount)
	r.EstimatedOnHandNow = est

	// Today.
	todaySpan, openToday := in.Hours.tradingSpan(today, loc)
	var hoursLeft float64
	if openToday {
		r.OpensAtToday = ptr(stamp(todaySpan.start))
		r.ClosesAtToday = ptr(stamp(todaySpan.end))
		r.StoreOpenNow = !now.Before(todaySpan.start) && now.Before(todaySpan.end)
		from := todaySpan.start
		if now.After(from) {
			from = now
		}
		if todaySpan.end.After(from) {
			hoursLeft = todaySpan.end.Sub(from).Hours()
		}
	}
	flags[FlagStoreClosedToday] = !openToday
	flags[FlagOutsideTradingHours] = openToday && !r.StoreOpenNow
	r.TradingHoursLeftToday = round(hoursLeft, 2)
	if in.HoursUnknown {
		// The clock's day is not the store's: no claim about today's
		// trading.
		r.OpensAtToday, r.ClosesAtToday, r.StoreOpenNow, r.TradingHoursLeftToday = nil, nil, false, 0
		flags[FlagStoreClosedToday], flags[FlagOutsideTradingHours] = false, false
	}

	// Stockout window.
	r.WillStockoutBeforeCloseToday = Unknown
	var earliest, latest time.Time
	var earliestOK, latestOK bool
	if !refuse {
		if est <= 0 {
			earliest, latest, earliestOK, latestOK = now, now, true, true
		} else {
			earliest, earliestOK = consume(now, float64(est), band.High, in.Hours, loc)
			latest, latestOK = consume(now, float64(est), band.Low, in.Hours, loc)
		}
		if earliestOK {
			r.ProjectedStockoutWindow.Earliest = ptr(stamp(earliest.Round(time.Minute)))
		}
		if latestOK {
			r.ProjectedStockoutWindow.Latest = ptr(stamp(latest.Round(time.Minute)))
		}
		switch {
		case est <= 0:
			r.WillStockoutBeforeCloseToday = Yes
		case hoursLeft == 0:
			r.WillStockoutBeforeCloseToday = No
		case latestOK && latest.Before(todaySpan.end):
			r.WillStockoutBeforeCloseToday = Yes
		case !earliestOK || !earliest.Before(todaySpan.end):
			r.WillStockoutBeforeCloseToday = No
		}
		// Demand to close at the high rate, less what is on the shelf; the
		// epsilon keeps 9.0000001 from rounding up to a phantom unit.
		short := math.Ceil(band.High*hoursLeft - math.Max(0, float64(est)) - 1e-9)
		r.UnitsShortByClose = ptr(toInt64(math.Max(0, short)))
		if in.HoursUnknown {
			// Without hours there is no close to be short by, nor to run
			// out before: not even when the shelf is already empty.
			r.WillStockoutBeforeCloseToday, r.UnitsShortByClose = Unknown, nil
		}
	}

	// Replenishment.
	r.ArrivalBeatsStockout = Unknown
	if in.OrderCutoff != nil && *in.OrderCutoff >= 0 && *in.OrderCutoff <= 24*60 {
		r.OrderCutoffPassed = now.Hour()*60+now.Minute() >= *in.OrderCutoff
	}
	if in.LeadTimeDays >= 0 {
		lead := in.LeadTimeDays
		r.SupplierLeadTimeDays = ptr(lead)
		orderDay := today
		if r.OrderCutoffPassed {
			orderDay = today.addDays(1)
		}
		arrival, ok := firstTrading(orderDay.addDays(min(lead, maxLeadDays)), now, in.Hours, loc)
		if ok {
			r.EarliestReplenishmentArrival = ptr(stamp(arrival))
			horizonEnd := now.AddDate(0, 0, HorizonDays)
			switch {
			case refuse:
			case est <= 0:
				r.ArrivalBeatsStockout = No
			case !earliestOK:
				if !arrival.After(horizonEnd) {
					r.ArrivalBeatsStockout = Yes
				}
			case !arrival.After(earliest):
				r.ArrivalBeatsStockout = Yes
			case latestOK && arrival.After(latest):
				r.ArrivalBeatsStockout = No
			}
		}
	}

	r.Evidence = evidence(days, refuse)
	r.DataQualityFlags = []Flag{}
	for _, f := range Flags() {
		if flags[f] {
			r.DataQualityFlags = append(r.DataQualityFlags, f)
		}
	}
	r.Confidence = confidence(flags, refuse, len(basisRates))
	r.Caveat = caveat(flags, est, in.OnHand, refuse, earliestOK, listed, days[0].date)
	return r
}

// confidence applies the table in ADR 0004, first match wins.
func confidence(flags map[Flag]bool, refuse bool, basisDays int) Confidence {
	switch {
	case refuse:
		return ConfidenceNone
	case flags[FlagNegativeOnHand], flags[FlagStaleOnHandCount], flags[FlagHighVariability],
		basisDays < LowBasisDays,
		flags[FlagBulkDominatesDay] && flags[FlagPossibleStockoutDays]:
		return ConfidenceLow
	case flags[FlagBulkDominatesDay], flags[FlagPossibleStockoutDays], basisDays < HighBasisDays:
		return ConfidenceMedium
	}
	return ConfidenceHigh
}

// consume walks forward through trading time from now, spending units at
// rate units per trading hour, and returns the instant they run out, if that
// is within HorizonDays.
func consume(now time.Time, units, rate float64, h WeeklyHours, loc *time.Location) (time.Time, bool) {
	if rate <= 0 {
		return time.Time{}, false
	}
	need := units / rate // trading hours
	end := now.AddDate(0, 0, HorizonDays)
	today := civilOf(now)
	for i := 0; i <= HorizonDays; i++ {
		sp, ok := h.tradingSpan(today.addDays(i), loc)
		if !ok {
			continue
		}
		if sp.start.Before(now) {
			sp.start = now
		}
		if sp.end.After(end) {
			sp.end = end
		}
		if !sp.end.After(sp.start) {
			continue
		}
		avail := sp.hours()
		if need <= avail {
			return sp.start.Add(time.Duration(need * float64(time.Hour))), true
		}
		need -= avail
	}
	return time.Time{}, false
}

// firstTrading returns the first trading instant on or after the start of
// date c and not before now, looking a week past c for an open day.
func firstTrading(c civil, now time.Time, h WeeklyHours, loc *time.Location) (time.Time, bool) {
	for i := 0; i <= 7; i++ {
		sp, ok := h.tradingSpan(c.addDays(i), loc)
		if !ok || !sp.end.After(now) {
			continue
		}
		if sp.start.Before(now) {
			return now, true
		}
		return sp.start, true
	}
	return time.Time{}, false
}

func evidence(days []day, refused bool) []DayEvidence {
	rows := make([]DayEvidence, len(days))
	for i, d := range days {
		row := DayEvidence{
			Date:         d.date.String(),
			Weekday:      d.date.weekday().String()[:3],
			UnitsSold:    d.units,
			Transactions: d.tx,
			BulkUnits:    d.bulk,
			UsedInBand:   d.basis && !refused,
			Flags:        []DayFlag{},
		}
		switch {
		case !d.open:
			row.Flags = append(row.Flags, DayClosed)
		case d.noHistory:
			row.TradingHours = round(d.span.hours(), 2)
			row.Flags = append(row.Flags, DayNoHistory)
		default:
			row.TradingHours = round(d.span.hours(), 2)
			row.UnitsPerHour = ptr(round(d.rate, 4))
		}
		if d.open && !d.noHistory && d.units == 0 {
			row.Flags = append(row.Flags, DayZeroSales)
		}
		if d.stockout {
			row.Flags = append(row.Flags, DayPossibleStockout)
		}
		if d.dominant {
			row.Flags = append(row.Flags, DayBulkDominated)
		}
		rows[i] = row
	}
	return rows
}

func velocityBasis(days []day, lookback int, refuse bool, flags map[Flag]bool, stockouts int, bulkUnits int64, listed *civil) string {
	// The days without history are a prefix of the window; the band's
	// range starts after the last of them.
	used, from := 0, 0
	for i, d := range days {
		switch {
		case d.noHistory:
			from = i + 1
		case d.open:
			used++
		}
	}
	used -= stockouts
	since := ""
	if listed != nil && days[0].date.before(*listed) {
		since = fmt.Sprintf(" (the first recorded sale was on %s)", listed)
	}
	switch {
	case refuse && flags[FlagNoSalesInWindow] && !flags[FlagInsufficientHistory]:
		return fmt.Sprintf("No sell rate: nothing sold on the %d usable trading days of the last %d days, bulk transactions aside.", used, lookback)
	case refuse:
		return fmt.Sprintf("No sell rate: only %d usable trading %s in the last %d days%s, fewer than the %d needed.", used, plural(used, "day", "days"), lookback, since, MinBasisDays)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "25th to 75th percentile of daily units per trading hour over %d trading days from %s to %s",
		used, days[from].date, days[len(days)-1].date)
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

// caveat picks the one sentence that matters most, in this order.
func caveat(flags map[Flag]bool, est, onHand int64, refuse, earliestOK bool, listed *civil, windowStart civil) string {
	switch {
	case flags[FlagNoSalesInWindow]:
		return "No sales were recorded in the lookback window, so there is no sell rate to project from; check that the SKU is ranged and on the shelf at this store."
	case refuse && listed != nil && windowStart.before(*listed):
		return fmt.Sprintf("The first recorded sale was on %s, so there are too few trading days of history to project a stockout time; judge from the evidence rows until more days of sales are recorded.", listed)
	case refuse:
		return "There are too few trading days of sales history to project a stockout time; widen lookback_days or judge from the evidence rows."
	case flags[FlagNegativeOnHand]:
		return "StoreLink's on-hand figure is negative, which points to shrink or late scans, so trust the window only after the shelf is counted."
	case est <= 0 && onHand > 0:
		return "Sales since the last count have used up the counted stock, so the shelf is probably empty unless a delivery arrived after the count."
	case flags[FlagStaleOnHandCount]:
		return fmt.Sprintf("The on-hand count is more than %d hours old, so shrink or deliveries since then may move the window.", StaleCountHours)
	case flags[FlagBulkDominatesDay]:
		return "Bulk transactions were left out of the sell rate, so another large order would empty the shelf sooner than projected."
	case flags[FlagPossibleStockoutDays]:
		return "Some days without sales look like the shelf was empty and were left out of the sell rate, so real demand may be higher than shown."
	case flags[FlagHighVariability]:
		return "Daily sales vary widely, so the stockout time is uncertain even within the window."
	case !earliestOK:
		return fmt.Sprintf("Even at the highest recent sell rate the stock lasts beyond the %d-day horizon.", HorizonDays)
	case flags[FlagStoreClosedToday]:
		return "The store does not open today, so nothing sells before its next opening."
	case flags[FlagOutsideTradingHours]:
		return "The store is not trading right now, so stock holds until it next opens."
	}
	return "The window assumes recent trading-hour sales continue and ignores promotions and deliveries not yet on the shelf."
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func stamp(t time.Time) string { return t.Format(time.RFC3339) }

func ptr[T any](v T) *T { return &v }
