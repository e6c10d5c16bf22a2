package projection

import (
	"fmt"
	"strconv"
)

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

// maxDayFlags is the most flags one day can carry: closed, no_history or
// zero_sales, then possible_stockout and bulk_dominated.
const maxDayFlags = 3

func evidence(days []day, refused bool) []DayEvidence {
	rows := make([]DayEvidence, len(days))
	// One array each for the days' rates and flags (at most maxDayFlags a
	// day), rather than an allocation per day.
	rates := make([]float64, len(days))
	flags := make([]DayFlag, len(days)*maxDayFlags)
	dates := dateStrings(days)
	for i, d := range days {
		row := DayEvidence{
			Date:         dates[i],
			Weekday:      d.date.weekday().String()[:3],
			UnitsSold:    d.units,
			Transactions: d.tx,
			BulkUnits:    d.bulk,
			UsedInBand:   d.basis && !refused,
			Flags:        flags[i*maxDayFlags : i*maxDayFlags : (i+1)*maxDayFlags],
		}
		switch {
		case !d.open:
			row.Flags = append(row.Flags, DayClosed)
		case d.noHistory:
			row.TradingHours = round(d.span.hours(), 2)
			row.Flags = append(row.Flags, DayNoHistory)
		default:
			row.TradingHours = round(d.span.hours(), 2)
			rates[i] = round(d.rate, 4)
			row.UnitsPerHour = &rates[i]
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

// dateStrings are the days' dates as civil.String writes them, cut from
// one string rather than allocated one by one.
func dateStrings(days []day) []string {
	// Sized for the longest window, so that b and ends stay on the stack.
	var buf [MaxLookbackDays * len("2006-01-02")]byte
	var endBuf [MaxLookbackDays]int
	b, ends := buf[:0], endBuf[:0]
	for _, d := range days {
		b = d.date.appendTo(b)
		ends = append(ends, len(b))
	}
	all := string(b)
	dates := make([]string, len(days))
	start := 0
	for i, end := range ends {
		dates[i] = all[start:end]
		start = end
	}
	return dates
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
	// Appended into one buffer: this sentence is in every answer.
	b := make([]byte, 0, 192)
	b = append(b, "25th to 75th percentile of daily units per trading hour over "...)
	b = strconv.AppendInt(b, int64(used), 10)
	b = append(b, " trading days from "...)
	b = days[from].date.appendTo(b)
	b = append(b, " to "...)
	b = days[len(days)-1].date.appendTo(b)
	if stockouts > 0 || bulkUnits > 0 {
		b = append(b, ", leaving out "...)
	}
	if stockouts > 0 {
		b = strconv.AppendInt(b, int64(stockouts), 10)
		b = append(b, " possible stockout "...)
		b = append(b, plural(stockouts, "day", "days")...)
		if bulkUnits > 0 {
			b = append(b, " and "...)
		}
	}
	if bulkUnits > 0 {
		b = strconv.AppendInt(b, bulkUnits, 10)
		b = append(b, " units in bulk transactions"...)
	}
	b = append(b, '.')
	return string(b)
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

func ptr[T any](v T) *T { return &v }
