package projection

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// The headline is the stock-risk decision in the buyer's words, built from
// the projection alone so that the answer, the views and the console show
// the same sentence. It states facts; it never addresses the model.

// DataFlags are the flags that make the projection's figures doubtful. The
// other two (store closed today, outside trading hours) describe the store's
// hours, not its data.
func DataFlags(flags []Flag) []Flag {
	var out []Flag
	for _, f := range flags {
		if f != FlagStoreClosedToday && f != FlagOutsideTradingHours {
			out = append(out, f)
		}
	}
	return out
}

// Headline is one store's decision: when the SKU runs out against today's
// close, whether the next delivery beats it, the shortfall by close, and
// how far to trust it. Times are store-local HH:MM, with the weekday when
// not today. unknown names the qualifiers StoreLink did not give (ADR 0030),
// such as "store.opening_hours".
func Headline(r Result, unknown []string) string {
	now, _ := time.Parse(time.RFC3339, r.AsOf)
	parts := [...]string{stockSentence(r, unknown, now), deliverySentence(r, unknown, now), shortSentence(r), trustSentence(r)}
	n := 0
	for _, p := range parts {
		n += len(p) + 1
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteString(parts[0])
	for _, p := range parts[1:] {
		if p != "" {
			b.WriteByte(' ')
			b.WriteString(p)
		}
	}
	return b.String()
}

// stockSentence says when the SKU runs out, against today's close.
func stockSentence(r Result, unknown []string, now time.Time) string {
	earliest, latest := r.ProjectedStockoutWindow.Earliest, r.ProjectedStockoutWindow.Latest
	closes := clockOf(r.ClosesAtToday, now)
	switch {
	case r.Confidence == ConfidenceNone:
		return fmt.Sprintf("Stockout time unknown: %s. About %d on hand.", refusalReason(r), max(0, r.EstimatedOnHandNow))
	case r.EstimatedOnHandNow <= 0 && r.OnHandUnits > 0:
		return fmt.Sprintf("Probably out of stock now: sales since the count used up the %d counted.", r.OnHandUnits)
	case r.EstimatedOnHandNow <= 0:
		return fmt.Sprintf("Out of stock: StoreLink shows %d on hand.", r.OnHandUnits)
	case slices.Contains(unknown, "store.opening_hours"):
		return "Opening hours unknown, so no answer for today's close. At the recent rate it runs out " + windowPhrase(earliest, latest, now) + "."
	case hasFlag(r, FlagStoreClosedToday):
		return "Closed today. It runs out " + windowPhrase(earliest, latest, now) + "."
	}
	prefix := ""
	if hasFlag(r, FlagOutsideTradingHours) {
		opens, _ := ParseTime(r.OpensAtToday)
		if now.Before(opens) {
			prefix = "Opens at " + clockOf(r.OpensAtToday, now) + ". "
		} else {
			prefix = "Closed at " + closes + " today. "
		}
	}
	switch r.WillStockoutBeforeCloseToday {
	case Yes:
		left, atLeast := "", ""
		if end, ok := ParseTime(r.ClosesAtToday); ok {
			if l, ok := ParseTime(latest); ok {
				left = duration(end.Sub(l))
				if !sameClock(earliest, latest, now) {
					atLeast = "at least "
				}
			}
		}
		if left == "" {
			return prefix + "Runs out " + windowPhrase(earliest, latest, now) + "."
		}
		return prefix + "Runs out " + windowPhrase(earliest, latest, now) + ", " + atLeast + left + " before the " + closes + " close."
	case Unknown:
		return prefix + "May run out before the " + closes + " close: " + windowPhrase(earliest, latest, now) + "."
	}
	if earliest == nil {
		return prefix + fmt.Sprintf("Lasts past today's close and beyond %d days at the recent rate.", HorizonDays)
	}
	if r.TradingHoursLeftToday == 0 {
		return prefix + "Runs out " + localClock(*earliest, now) + " at the earliest."
	}
	return prefix + "Lasts past the " + closes + " close; runs out " + localClock(*earliest, now) + " at the earliest."
}

// refusalReason is why the projection gave no sell rate.
func refusalReason(r Result) string {
	if hasFlag(r, FlagNoSalesInWindow) {
		return fmt.Sprintf("nothing sold in the last %d days", r.ObservationDays)
	}
	return fmt.Sprintf("only %d usable trading %s of sales, fewer than %d", r.TradingDaysUsed, plural(r.TradingDaysUsed, "day", "days"), MinBasisDays)
}

// deliverySentence says when the next delivery lands and whether it is in
// time.
func deliverySentence(r Result, unknown []string, now time.Time) string {
	if r.EarliestReplenishmentArrival == nil {
		if r.SupplierLeadTimeDays == nil || slices.Contains(unknown, "supplier.lead_time_days") {
			return "No delivery date: the supplier's lead time is unknown."
		}
		return "No delivery date known."
	}
	when := localClock(*r.EarliestReplenishmentArrival, now)
	lead := "The next delivery (" + when + ")"
	if slices.Contains(unknown, "supplier.order_cutoff_local") {
		lead = "The next delivery (" + when + "; order cut-off unknown)"
	}
	if r.OrderCutoffPassed {
		lead = "Today's order cut-off has passed; the next delivery (" + when + ")"
	}
	switch r.ArrivalBeatsStockout {
	case Yes:
		return lead + " arrives in time."
	case No:
		return lead + " is too late."
	}
	if r.Confidence == ConfidenceNone {
		return "The next delivery could arrive " + when + "."
	}
	return lead + " may be too late."
}

// shortSentence is the shortfall by close (units_short_by_close).
func shortSentence(r Result) string {
	if r.UnitsShortByClose == nil || *r.UnitsShortByClose <= 0 {
		return ""
	}
	if r.WillStockoutBeforeCloseToday == Yes {
		return strconv.FormatInt(*r.UnitsShortByClose, 10) + " short by close."
	}
	return "Up to " + strconv.FormatInt(*r.UnitsShortByClose, 10) + " short by close."
}

// trustSentence names the confidence when it is not high, with the first
// reason.
func trustSentence(r Result) string {
	if r.Confidence == ConfidenceNone {
		return ""
	}
	flags := DataFlags(r.DataQualityFlags)
	if len(flags) == 0 {
		if r.Confidence == ConfidenceHigh {
			return ""
		}
		return fmt.Sprintf("%s confidence: only %d trading days of sales.", capitalize(string(r.Confidence)), r.TradingDaysUsed)
	}
	s := fmt.Sprintf("%s confidence: %s", capitalize(string(r.Confidence)), flagReason(r, flags[0]))
	if n := len(flags) - 1; n > 0 {
		s += fmt.Sprintf(" (and %d more data %s)", n, plural(n, "warning", "warnings"))
	}
	return s + "."
}

// flagReason is a flag as a short clause, for the headline.
func flagReason(r Result, f Flag) string {
	switch f {
	case FlagInsufficientHistory:
		return "too little sales history"
	case FlagNoSalesInWindow:
		return "no sales in the lookback window"
	case FlagBulkDominatesDay:
		return "bulk orders were left out of the sell rate"
	case FlagPossibleStockoutDays:
		n := countDays(r, DayPossibleStockout)
		return fmt.Sprintf("%d %s without sales look like stockouts", n, plural(n, "day", "days"))
	case FlagHighVariability:
		return "daily sales vary widely"
	case FlagStaleOnHandCount:
		if r.OnHandAsOf == "" {
			return "the on-hand count has no time"
		}
		return fmt.Sprintf("the on-hand count is %s old", hoursText(r.OnHandAgeHours))
	case FlagNegativeOnHand:
		return "StoreLink shows negative stock"
	}
	return string(f)
}

// DataQualityNotes is each data-quality flag in words, in the same order.
func DataQualityNotes(r Result) []string {
	notes := make([]string, len(r.DataQualityFlags))
	for i, f := range r.DataQualityFlags {
		notes[i] = flagNote(r, f)
	}
	return notes
}

// flagNote is one flag as a sentence.
func flagNote(r Result, f Flag) string {
	switch f {
	case FlagInsufficientHistory:
		return fmt.Sprintf("Only %d usable trading %s of sales history; a sell rate needs %d.", r.TradingDaysUsed, plural(r.TradingDaysUsed, "day", "days"), MinBasisDays)
	case FlagNoSalesInWindow:
		return fmt.Sprintf("Nothing sold in the last %d days, bulk orders aside: no sell rate to project from.", r.ObservationDays)
	case FlagBulkDominatesDay:
		n := countDays(r, DayBulkDominated)
		return fmt.Sprintf("Bulk orders made most of the sales on %d %s; they are left out of the sell rate.", n, plural(n, "day", "days"))
	case FlagPossibleStockoutDays:
		n := countDays(r, DayPossibleStockout)
		return fmt.Sprintf("Sold nothing on %d trading %s when sales were expected: possibly out of stock; left out of the sell rate.", n, plural(n, "day", "days"))
	case FlagStaleOnHandCount:
		if r.OnHandAsOf == "" {
			return "The on-hand count has no time, so it is treated as stale."
		}
		return fmt.Sprintf("The on-hand count is %s old, older than %d h: deliveries or shrink since may move the window.", hoursText(r.OnHandAgeHours), StaleCountHours)
	case FlagNegativeOnHand:
		return fmt.Sprintf("StoreLink shows %d on hand, below zero: likely shrink or late scans.", r.OnHandUnits)
	}
	return FlagWords(f)
}

// FlagWords is a data-quality flag as a sentence for a reader that has the
// flag alone, without the Result it came from: the order view's
// justification and the console's order page. DataQualityNotes, with the
// Result's figures, is what a stock-risk answer carries; a flag whose note
// needs no figure has the same sentence in both. An unknown flag is its id.
func FlagWords(f Flag) string {
	switch f {
	case FlagInsufficientHistory:
		return fmt.Sprintf("Too little sales history: a sell rate needs %d usable trading days.", MinBasisDays)
	case FlagNoSalesInWindow:
		return "Nothing sold in the lookback window, bulk orders aside: no sell rate to project from."
	case FlagBulkDominatesDay:
		return "Bulk orders made most of a day's sales; they are left out of the sell rate."
	case FlagPossibleStockoutDays:
		return "Some trading days sold nothing when sales were expected: possibly out of stock; left out of the sell rate."
	case FlagHighVariability:
		return "Daily sales vary widely, so the stockout time is uncertain."
	case FlagStaleOnHandCount:
		return fmt.Sprintf("The on-hand count is older than %d h: deliveries or shrink since may move the window.", StaleCountHours)
	case FlagNegativeOnHand:
		return "StoreLink shows stock below zero: likely shrink or late scans."
	case FlagStoreClosedToday:
		return "The store does not open today."
	case FlagOutsideTradingHours:
		return "The store is not trading right now."
	}
	return string(f)
}

// DayFlagWords is an evidence day's flag in a few words, for a chart bar's
// title and the list of flagged days in the views and the console. An
// unknown flag is its id.
func DayFlagWords(f DayFlag) string {
	switch f {
	case DayClosed:
		return "store closed"
	case DayZeroSales:
		return "no sales"
	case DayPossibleStockout:
		return "possibly out of stock"
	case DayBulkDominated:
		return "mostly bulk orders"
	case DayNoHistory:
		return "incomplete sales history"
	}
	return string(f)
}

func hasFlag(r Result, f Flag) bool { return slices.Contains(r.DataQualityFlags, f) }

func countDays(r Result, f DayFlag) int {
	n := 0
	for _, d := range r.Evidence {
		for _, g := range d.Flags {
			if g == f {
				n++
				break
			}
		}
	}
	return n
}

// windowPhrase is the stockout window: "about 12:05 today", "between 12:05
// and 13:40 today", "between 18:10 today and Fri 09:30".
func windowPhrase(earliest, latest *string, now time.Time) string {
	switch {
	case earliest == nil:
		return fmt.Sprintf("beyond %d days", HorizonDays)
	case latest == nil:
		return localClock(*earliest, now) + " at the earliest"
	case sameClock(earliest, latest, now):
		return "about " + withToday(localClock(*earliest, now))
	}
	e, l := localClock(*earliest, now), localClock(*latest, now)
	if isClockOnly(e) && isClockOnly(l) {
		return "between " + e + " and " + l + " today"
	}
	return "between " + withToday(e) + " and " + withToday(l)
}

func sameClock(earliest, latest *string, now time.Time) bool {
	return earliest != nil && latest != nil && localClock(*earliest, now) == localClock(*latest, now)
}

// isClockOnly reports a time of today (HH:MM, no weekday).
func isClockOnly(s string) bool { return len(s) == len("15:04") }

func withToday(s string) string {
	if isClockOnly(s) {
		return s + " today"
	}
	return s
}

// clock is an RFC 3339 time as store-local HH:MM, with the weekday when it
// is not today's date, and the date too when more than six days away.
func localClock(s string, now time.Time) string {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return s
	}
	days := calendarDays(now, t)
	switch {
	case days == 0:
		// The clock as s writes it, which is what t.Format("15:04") gives
		// for a time read from s with layout RFC 3339.
		return s[11:16]
	case days > 0 && days < 7:
		return t.Format("Mon 15:04")
	}
	return t.Format("Mon 2 Jan 15:04")
}

// calendarDays is the number of local calendar days from a's date to b's,
// each read in its own offset.
func calendarDays(a, b time.Time) int {
	ay, am, ad := a.Date()
	by, bm, bd := b.Date()
	da := time.Date(ay, am, ad, 0, 0, 0, 0, time.UTC)
	db := time.Date(by, bm, bd, 0, 0, 0, 0, time.UTC)
	return int(db.Sub(da).Hours() / 24)
}

// clockOf is clock for an optional time; "" when absent.
func clockOf(s *string, now time.Time) string {
	if s == nil {
		return ""
	}
	return localClock(*s, now)
}

// duration is a span as "5 h", "5 h 20 min" or "40 min", rounded to the
// minute.
func duration(d time.Duration) string {
	m := int(d.Round(time.Minute).Minutes())
	switch {
	case m < 60:
		return strconv.Itoa(max(0, m)) + " min"
	case m%60 == 0:
		return strconv.Itoa(m/60) + " h"
	}
	return strconv.Itoa(m/60) + " h " + strconv.Itoa(m%60) + " min"
}

func hoursText(h float64) string {
	return duration(time.Duration(h * float64(time.Hour)))
}

func capitalize(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// ParseTime reads one of Result's RFC 3339 times; false when it is nil or
// not a time.
func ParseTime(s *string) (time.Time, bool) {
	if s == nil {
		return time.Time{}, false
	}
	t, err := time.Parse(time.RFC3339, *s)
	return t, err == nil
}
