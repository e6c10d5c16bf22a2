package consoletest

import (
	"time"

	"github.com/korral/storelink/mcpserver/console"
)

// prague is the fixtures' store timezone; a fixed offset, so the fixtures
// need no timezone database.
var prague = time.FixedZone("CET", 3600)

// butterSales is two weeks of the butter's daily sales at store 47, oldest
// first: weekends busier, one Sunday short because the shelf ran empty.
var butterSales = []struct {
	units int64
	flags []string
}{
	{21, nil}, {19, nil}, {23, nil}, {26, nil}, {31, nil}, {34, nil}, {6, []string{"possible_stockout"}},
	{22, nil}, {20, nil}, {24, nil}, {27, nil}, {33, nil}, {36, nil}, {18, nil},
}

// Butter is a staged order of Madeta butter at a store, as the butter
// scenario stages it at now: 48 units (4 cases of 12), 14 days of
// evidence, a stockout projected this afternoon, delivery in two days.
func Butter(now time.Time, approvalID, storeID, storeName string) console.OrderDetail {
	local := now.In(prague)
	today := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, prague)
	ev := make([]console.EvidenceDay, len(butterSales))
	for i, s := range butterSales {
		day := today.AddDate(0, 0, i-len(butterSales)+1)
		ev[i] = console.EvidenceDay{Date: day.Format("2006-01-02"), UnitsSold: s.units, Flags: s.flags}
	}
	lead := 2
	return console.OrderDetail{
		OrderSummary: console.OrderSummary{
			ApprovalID: approvalID, StoreID: storeID, StoreName: storeName,
			SKU: "8847291", ProductName: "Madeta butter 250g",
			QuantityUnits: 48, CasePack: 12,
			Reason:      "Sold 23 in the last 24 h against 5 on hand; gap 18 exceeds 6.",
			RequestedBy: "claude-desktop/buyer-agent",
			RequestedAt: now.Add(-5 * time.Minute).In(prague),
			ExpiresAt:   now.Add(2 * time.Hour).In(prague),
			Stockout: console.Stockout{Known: true, HorizonDays: 14,
				Earliest: now.Add(90 * time.Minute).In(prague), Latest: now.Add(4 * time.Hour).In(prague)},
		},
		Status: console.StatusPending,
		Justification: console.Justification{
			OnHandUnits: 5, OnHandAsOf: now.Add(-20 * time.Minute).In(prague),
			UnitsSoldLast24h: 23,
			StockoutEarliest: now.Add(90 * time.Minute).In(prague),
			StockoutLatest:   now.Add(4 * time.Hour).In(prague),
			Confidence:       "medium",
			LeadTimeDays:     &lead,
			EarliestDelivery: today.AddDate(0, 0, 2).Add(8 * time.Hour),
			CoverAfterDelivery: &console.CoverBand{
				Low: 1.0, High: 1.3,
			},
			SupplierMinimumUnits: 24,
			CasePack:             12,
			Flags:                []string{"possible_stockout_days"},
			Caveat:               "One day in the window looks like a stockout, not low demand; the rate is from the other days.",
			Check: console.QuantityCheck{Verdict: "review", Reasons: []string{
				"at the low sell rate the stock lasts only 1.3 days after delivery, less than the 2-day lead time of the next order"}},
		},
		Evidence: ev,
	}
}
