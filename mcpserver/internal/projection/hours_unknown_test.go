package projection

import (
	"slices"
	"strings"
	"testing"
)

// TestUnknownHoursClaimNothingAboutTheClose: without the store's hours
// (ADR 0030) the projection still answers from stock and sales, per clock
// hour of whole days, but says nothing about today's close: not even for a
// shelf that runs out within the hour, nor for a store whose hours, had
// they been read, close it today.
func TestUnknownHoursClaimNothingAboutTheClose(t *testing.T) {
	in := base()
	in.OnHand = 2
	known := Project(in)
	if known.WillStockoutBeforeCloseToday != Yes {
		t.Fatalf("with hours: %s, want true (the fixture runs out before 20:00)", known.WillStockoutBeforeCloseToday)
	}
	in.HoursUnknown = true
	in.Hours[wedNow.Weekday()] = DayHours{Closed: true} // ignored
	got := Project(in)
	if got.WillStockoutBeforeCloseToday != Unknown || got.UnitsShortByClose != nil {
		t.Errorf("before close %s, short by close %v: want unknown and null", got.WillStockoutBeforeCloseToday, got.UnitsShortByClose)
	}
	if got.OpensAtToday != nil || got.ClosesAtToday != nil || got.StoreOpenNow || got.TradingHoursLeftToday != 0 {
		t.Errorf("today's trading is claimed: opens %v closes %v open %v left %v", got.OpensAtToday, got.ClosesAtToday, got.StoreOpenNow, got.TradingHoursLeftToday)
	}
	if slices.Contains(got.DataQualityFlags, FlagStoreClosedToday) || slices.Contains(got.DataQualityFlags, FlagOutsideTradingHours) {
		t.Errorf("flags %v claim the store's hours", got.DataQualityFlags)
	}
	// 12 and 24 units a day over 24 clock hours.
	if b := got.UnitsPerTradingHour; b == nil || b.Low != 0.5 || b.High != 1 {
		t.Errorf("band %+v, want 0.5 to 1 per clock hour", b)
	}
	if !strings.Contains(got.VelocityBasis, "Opening hours unknown") {
		t.Errorf("velocity basis %q does not say the hours are unknown", got.VelocityBasis)
	}
	// 2 units at 1 an hour from 14:00; the figures are still the stock's.
	if w := got.ProjectedStockoutWindow.Earliest; w == nil || *w != "2026-03-11T16:00:00+01:00" || got.OnHandUnits != 2 {
		t.Errorf("earliest %v, on hand %d", w, got.OnHandUnits)
	}
	// Lead time known: Friday, from the start of the day.
	if a := got.EarliestReplenishmentArrival; a == nil || *a != "2026-03-13T00:00:00+01:00" {
		t.Errorf("arrival %v", a)
	}
}
