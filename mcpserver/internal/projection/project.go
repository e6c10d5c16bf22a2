package projection

import (
	"math"
	"time"
)

// Thresholds (ADR 0004).
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
	// MaxSteadyCV is the largest daily-rate CV not flagged as variable.
	MaxSteadyCV = 0.5
	// A bulk transaction has at least BulkMinUnits units and at least
	// BulkMedianMultiple times the window's median transaction.
	BulkMinUnits       = 10
	BulkMedianMultiple = 5
	// BulkDominantShare of a day's units in bulk makes it bulk-dominated.
	BulkDominantShare = 0.5
	// StockoutExpectedUnits: a zero-sale trading day is a possible stockout
	// when the median rate predicted at least this many units.
	StockoutExpectedUnits = 5.0
)

// Sale is one POS transaction line.
type Sale struct {
	At    time.Time
	Units int64
}

// Input is everything the projection needs.
type Input struct {
	// Now is the moment to project from.
	Now time.Time
	// Location is the store's timezone; nil means UTC.
	Location *time.Location
	// Hours are the store's weekly opening hours in Location.
	Hours WeeklyHours
	// HoursUnknown: StoreLink gave no readable opening hours (ADR 0030).
	// Every day then trades around the clock, and nothing is said about
	// today's opening, close or shortfall.
	HoursUnknown bool
	// OnHand is StoreLink's on-hand figure, taken at CountedAt (zero: unknown).
	OnHand    int64
	CountedAt time.Time
	// Sales must cover the lookback window and the time since CountedAt. Lines
	// with non-positive units or after Now are ignored.
	Sales []Sale
	// SalesFrom is the instant from which Sales holds every sale; zero means
	// the SKU's whole history.
	SalesFrom time.Time
	// HistoryStart is the oldest instant the sales history covers; zero
	// means no limit. A trading day opened before it is not evidence.
	HistoryStart time.Time
	// LookbackDays is the number of complete local days before today to
	// learn from; clamped to 1..MaxLookbackDays, default when not positive.
	LookbackDays int
	// LeadTimeDays is the supplier's lead time; negative when unknown.
	LeadTimeDays int
	// OrderCutoff is the supplier's order cut-off, store-local minutes.
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
	// noHistory: open day before the first recorded sale or the history
	// start. Its sales are shown, never used.
	noHistory bool
}

// Project computes the stockout projection deterministically from in.
func Project(in Input) Result {
	p := newProjector(in)
	lines, txUnits, firstSale := p.tallySales()
	p.markNoHistory(firstSale)
	typical := p.rateDays(lines, txUnits)
	basisUnits, dominated := p.chooseBasis(typical)
	p.raiseFlags(basisUnits, dominated)
	p.sellRate()
	p.estimateOnHand()
	p.describeToday()
	p.projectStockout()
	p.projectArrival()
	return p.finish()
}

// projector carries one projection through the steps of Project.
type projector struct {
	in       Input
	loc      *time.Location
	now      time.Time
	today    civil
	lookback int
	r        Result
	// days are the complete local days before today.
	days []day
	// listed is the local date of the SKU's first recorded sale, when known.
	listed     *civil
	basisRates []float64
	bulkUnits  int64
	stockouts  int
	flags      map[Flag]bool
	refuse     bool
	band       Band
	est        int64
	todaySpan  span
	hoursLeft  float64

	earliest, latest     time.Time
	earliestOK, latestOK bool

	// stamps are the Result's times, written by writeStamps.
	stamps  [maxStamps]pendingStamp
	nStamps int
}

// maxStamps is the number of times a Result holds: as_of, on_hand_as_of,
// opens_at_today, closes_at_today, the stockout window's two ends and the
// earliest arrival.
const maxStamps = 7

// pendingStamp is a Result time to write as RFC 3339: into *text, or as a
// new string *ref points to.
type pendingStamp struct {
	at   time.Time
	text *string
	ref  **string
}

// stamp records that *text is to hold t in RFC 3339.
func (p *projector) stamp(text *string, t time.Time) {
	p.stamps[p.nStamps] = pendingStamp{at: t, text: text}
	p.nStamps++
}

// stampRef records that *ref is to point to t in RFC 3339.
func (p *projector) stampRef(ref **string, t time.Time) {
	p.stamps[p.nStamps] = pendingStamp{at: t, ref: ref}
	p.nStamps++
}

// writeStamps writes the recorded times as t.Format(time.RFC3339) does, cut from one
// string, with the pointed-to strings in one array: two allocations for
// what were up to twelve.
func (p *projector) writeStamps() {
	stamps := p.stamps[:p.nStamps]
	if len(stamps) == 0 {
		return
	}
	var buf [maxStamps * len("2006-01-02T15:04:05+01:00")]byte
	var endBuf [maxStamps]int
	b, ends := buf[:0], endBuf[:0]
	refs := 0
	for _, s := range stamps {
		b = s.at.AppendFormat(b, time.RFC3339)
		ends = append(ends, len(b))
		if s.ref != nil {
			refs++
		}
	}
	all := string(b)
	var texts []string
	if refs > 0 {
		texts = make([]string, 0, refs)
	}
	start := 0
	for i, s := range stamps {
		text := all[start:ends[i]]
		start = ends[i]
		if s.ref != nil {
			texts = append(texts, text)
			*s.ref = &texts[len(texts)-1]
		} else {
			*s.text = text
		}
	}
}

// saleLine is one sale that falls in the window.
type saleLine struct {
	day   int
	units int64
}

// newProjector resolves the defaults and lays out the window's days.
func newProjector(in Input) *projector {
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
	p := &projector{in: in, loc: loc, now: now, today: civilOf(now), lookback: lookback}
	p.r = Result{
		Timezone:           loc.String(),
		OnHandUnits:        in.OnHand,
		ObservationDays:    lookback,
		HorizonDays:        HorizonDays,
		TradingHoursPerDay: round(in.Hours.nominalHoursPerDay(), 2),
	}
	p.stamp(&p.r.AsOf, now)
	first := p.today.addDays(-lookback)
	p.days = make([]day, lookback)
	for i := range p.days {
		c := first.addDays(i)
		sp, open := in.Hours.tradingSpan(c, loc)
		p.days[i] = day{date: c, span: sp, open: open}
	}
	return p
}

// tallySales adds each sale to its day, today and since-count totals, and
// returns the window's sales, their units and the earliest sale.
func (p *projector) tallySales() ([]saleLine, []float64, time.Time) {
	// The window's days are consecutive: a sale's day is its day number
	// less the first day's.
	first, today := p.days[0].date.dayNumber(), p.today.dayNumber()
	local := localDays{loc: p.loc}
	// Sized for every sale: growing by doubling was most of the allocation
	// on a busy SKU (BenchmarkProject28DaysBusy).
	lines := make([]saleLine, 0, len(p.in.Sales))
	txUnits := make([]float64, 0, len(p.in.Sales))
	var firstSale time.Time
	for _, s := range p.in.Sales {
		if s.Units <= 0 || s.At.After(p.now) {
			continue
		}
		if firstSale.IsZero() || s.At.Before(firstSale) {
			firstSale = s.At
		}
		if !p.in.CountedAt.IsZero() && s.At.After(p.in.CountedAt) {
			p.r.UnitsSoldSinceCount = addSat(p.r.UnitsSoldSinceCount, s.Units)
		}
		n := local.dayNumber(s.At)
		if n == today {
			p.r.UnitsSoldToday = addSat(p.r.UnitsSoldToday, s.Units)
		}
		if i := n - first; i >= 0 && i < len(p.days) {
			lines = append(lines, saleLine{i, s.Units})
			txUnits = append(txUnits, float64(s.Units))
			p.days[i].units = addSat(p.days[i].units, s.Units)
			p.days[i].tx++
		}
	}
	return lines, txUnits, firstSale
}

// markNoHistory marks the open days before the first recorded sale or the
// start of StoreLink's history: they are not zero-demand days.
func (p *projector) markNoHistory(firstSale time.Time) {
	in := p.in
	if !firstSale.IsZero() && (in.SalesFrom.IsZero() || !in.SalesFrom.After(in.HistoryStart)) {
		p.listed = ptr(civilOf(firstSale.In(p.loc)))
	}
	for i := range p.days {
		d := &p.days[i]
		d.noHistory = d.open && (p.listed != nil && d.date.before(*p.listed) ||
			!in.HistoryStart.IsZero() && d.span.start.Before(in.HistoryStart))
	}
}

// rateDays sets each day's bulk units and its sell rate without them, and
// returns the median rate over the open days with history. It sorts
// txUnits, which it alone reads.
func (p *projector) rateDays(lines []saleLine, txUnits []float64) float64 {
	bulkAt := math.Max(BulkMinUnits, BulkMedianMultiple*medianInPlace(txUnits))
	for _, l := range lines {
		if float64(l.units) >= bulkAt {
			p.days[l.day].bulk = addSat(p.days[l.day].bulk, l.units)
		}
	}
	openRates := make([]float64, 0, len(p.days))
	for i := range p.days {
		d := &p.days[i]
		if d.noHistory {
			continue
		}
		d.dominant = d.bulk > 0 && float64(d.bulk) >= BulkDominantShare*float64(d.units)
		if d.open {
			d.rate = float64(d.units-d.bulk) / d.span.hours()
			openRates = append(openRates, d.rate)
		}
	}
	return medianInPlace(openRates)
}

// chooseBasis picks the days whose rates enter the band. A zero-sale day is
// left out as a possible stockout only where sales are usually steady (an
// intermittent seller has median 0). It returns the basis days' non-bulk
// units and the number of bulk-dominated days.
func (p *projector) chooseBasis(typical float64) (basisUnits int64, dominated int) {
	var basisHours float64
	p.basisRates = make([]float64, 0, len(p.days))
	for i := range p.days {
		d := &p.days[i]
		if d.dominant {
			dominated++
		}
		if !d.open || d.noHistory {
			continue
		}
		if d.units == 0 && typical*d.span.hours() >= StockoutExpectedUnits {
			d.stockout = true
			p.stockouts++
			continue
		}
		d.basis = true
		p.basisRates = append(p.basisRates, d.rate)
		basisHours += d.span.hours()
		basisUnits = addSat(basisUnits, d.units-d.bulk)
		p.bulkUnits = addSat(p.bulkUnits, d.bulk)
	}
	p.r.TradingDaysUsed = len(p.basisRates)
	p.r.TradingHoursObserved = round(basisHours, 2)
	return basisUnits, dominated
}

// raiseFlags sets flags and whether the projection declines to estimate.
func (p *projector) raiseFlags(basisUnits int64, dominated int) {
	in := p.in
	p.flags = map[Flag]bool{
		FlagInsufficientHistory:  len(p.basisRates) < MinBasisDays,
		FlagNoSalesInWindow:      len(p.basisRates) > 0 && basisUnits == 0,
		FlagBulkDominatesDay:     dominated > 0,
		FlagPossibleStockoutDays: p.stockouts > 0,
		FlagNegativeOnHand:       in.OnHand < 0,
		FlagStaleOnHandCount:     in.CountedAt.IsZero() || p.now.Sub(in.CountedAt) > StaleCountHours*time.Hour,
	}
	p.refuse = p.flags[FlagInsufficientHistory] || p.flags[FlagNoSalesInWindow]
}

// sellRate sets the band (unless declined) and its description.
func (p *projector) sellRate() {
	if !p.refuse {
		p.flags[FlagHighVariability] = coefficientOfVariation(p.basisRates) > MaxSteadyCV
		// Rounded first, so the published band matches the published window.
		p.band = Band{Low: round(percentile(p.basisRates, 0.25), 4), High: round(percentile(p.basisRates, 0.75), 4)}
		p.r.UnitsPerTradingHour = &p.band
	}
	p.r.VelocityBasis = velocityBasis(p.days, p.lookback, p.refuse, p.flags, p.stockouts, p.bulkUnits, p.listed)
	if p.in.HoursUnknown {
		p.r.VelocityBasis += " Opening hours unknown: every hour of the day counts as a trading hour."
	}
}

// estimateOnHand takes the units sold since the count off the count.
func (p *projector) estimateOnHand() {
	if !p.in.CountedAt.IsZero() {
		p.stamp(&p.r.OnHandAsOf, p.in.CountedAt.In(p.loc))
		p.r.OnHandAgeHours = round(math.Max(0, p.now.Sub(p.in.CountedAt).Hours()), 1)
	}
	p.est = addSat(p.in.OnHand, -p.r.UnitsSoldSinceCount)
	p.r.EstimatedOnHandNow = p.est
}

// describeToday sets today's opening, closing and trading hours left.
func (p *projector) describeToday() {
	r := &p.r
	sp, openToday := p.in.Hours.tradingSpan(p.today, p.loc)
	p.todaySpan = sp
	if openToday {
		if !p.in.HoursUnknown {
			p.stampRef(&r.OpensAtToday, sp.start)
			p.stampRef(&r.ClosesAtToday, sp.end)
		}
		r.StoreOpenNow = !p.now.Before(sp.start) && p.now.Before(sp.end)
		from := sp.start
		if p.now.After(from) {
			from = p.now
		}
		if sp.end.After(from) {
			p.hoursLeft = sp.end.Sub(from).Hours()
		}
	}
	p.flags[FlagStoreClosedToday] = !openToday
	p.flags[FlagOutsideTradingHours] = openToday && !r.StoreOpenNow
	r.TradingHoursLeftToday = round(p.hoursLeft, 2)
	if p.in.HoursUnknown {
		// The clock's day is not the store's: nothing is said about today.
		// The opening and closing were not stamped.
		r.StoreOpenNow, r.TradingHoursLeftToday = false, 0
		p.flags[FlagStoreClosedToday], p.flags[FlagOutsideTradingHours] = false, false
	}
}

// projectStockout sets the stockout window, before-close answer and
// shortfall.
func (p *projector) projectStockout() {
	r := &p.r
	r.WillStockoutBeforeCloseToday = Unknown
	if p.refuse {
		return
	}
	est, now := p.est, p.now
	if est <= 0 {
		p.earliest, p.latest, p.earliestOK, p.latestOK = now, now, true, true
	} else {
		p.earliest, p.earliestOK = consume(now, float64(est), p.band.High, p.in.Hours, p.loc)
		p.latest, p.latestOK = consume(now, float64(est), p.band.Low, p.in.Hours, p.loc)
	}
	if p.earliestOK {
		p.stampRef(&r.ProjectedStockoutWindow.Earliest, p.earliest.Round(time.Minute))
	}
	if p.latestOK {
		p.stampRef(&r.ProjectedStockoutWindow.Latest, p.latest.Round(time.Minute))
	}
	switch {
	case est <= 0:
		r.WillStockoutBeforeCloseToday = Yes
	case p.hoursLeft == 0:
		r.WillStockoutBeforeCloseToday = No
	case p.latestOK && p.latest.Before(p.todaySpan.end):
		r.WillStockoutBeforeCloseToday = Yes
	case !p.earliestOK || !p.earliest.Before(p.todaySpan.end):
		r.WillStockoutBeforeCloseToday = No
	}
	// Demand to close at the high rate less stock; the epsilon keeps
	// 9.0000001 from rounding up.
	short := math.Ceil(p.band.High*p.hoursLeft - math.Max(0, float64(est)) - 1e-9)
	r.UnitsShortByClose = ptr(toInt64(math.Max(0, short)))
	if p.in.HoursUnknown {
		// Without hours there is no close to be short by or run out before.
		r.WillStockoutBeforeCloseToday, r.UnitsShortByClose = Unknown, nil
	}
}

// projectArrival sets the cut-off, earliest arrival and whether it beats
// the stockout.
func (p *projector) projectArrival() {
	r, in, now := &p.r, p.in, p.now
	r.ArrivalBeatsStockout = Unknown
	if in.OrderCutoff != nil && *in.OrderCutoff >= 0 && *in.OrderCutoff <= 24*60 {
		r.OrderCutoffPassed = now.Hour()*60+now.Minute() >= *in.OrderCutoff
	}
	if in.LeadTimeDays < 0 {
		return
	}
	lead := in.LeadTimeDays
	r.SupplierLeadTimeDays = ptr(lead)
	orderDay := p.today
	if r.OrderCutoffPassed {
		orderDay = p.today.addDays(1)
	}
	arrival, ok := firstTrading(orderDay.addDays(min(lead, maxLeadDays)), now, in.Hours, p.loc)
	if !ok {
		return
	}
	p.stampRef(&r.EarliestReplenishmentArrival, arrival)
	horizonEnd := now.AddDate(0, 0, HorizonDays)
	switch {
	case p.refuse:
	case p.est <= 0:
		r.ArrivalBeatsStockout = No
	case !p.earliestOK:
		if !arrival.After(horizonEnd) {
			r.ArrivalBeatsStockout = Yes
		}
	case !arrival.After(p.earliest):
		r.ArrivalBeatsStockout = Yes
	case p.latestOK && arrival.After(p.latest):
		r.ArrivalBeatsStockout = No
	}
}

// finish adds the evidence rows, the flags, the confidence and the caveat.
func (p *projector) finish() Result {
	p.writeStamps()
	r := p.r
	r.Evidence = evidence(p.days, p.refuse)
	r.DataQualityFlags = []Flag{}
	for _, f := range Flags() {
		if p.flags[f] {
			r.DataQualityFlags = append(r.DataQualityFlags, f)
		}
	}
	r.Confidence = confidence(p.flags, p.refuse, len(p.basisRates))
	r.Caveat = caveat(p.flags, p.est, p.in.OnHand, p.refuse, p.earliestOK, p.listed, p.days[0].date)
	return r
}
