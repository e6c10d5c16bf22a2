package tools

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/replenish"
)

// A chain sweep is korral_check_stock_risk with store_ids ["all"]: the SKU
// at every store in scope, ranked, within a fixed budget (ADR 0027).
const (
	// sweepAll is the one value of store_ids that names every store.
	sweepAll = "all"
	// sweepDetailStores is how many stores a sweep answers in full, most at
	// risk first (about 1.5 KB each).
	sweepDetailStores = 5
	// sweepListedStores is how many more at-risk stores are listed as one row
	// each; the rest are counted in at_risk_not_listed.
	sweepListedStores = 25
	// maxSweepStores is the contract's largest store list; a larger scope is
	// refused, not cut short.
	maxSweepStores = 1000
)

// sweepOut is what a sweep adds to the answer: chain counts, listed
// at-risk stores beyond the detailed ones, and failures by code.
type sweepOut struct {
	StoresChecked int `json:"stores_checked" jsonschema:"every store of the caller's scope"`
	DetailLimit   int `json:"detail_limit" jsonschema:"stores holds at most this many, the most at risk first"`
	Outcomes      struct {
		StockoutBeforeClose int `json:"stockout_before_close"`
		CannotTell          int `json:"cannot_tell"`
		NoStockout          int `json:"no_stockout"`
		FlaggedData         int `json:"flagged_data"`
		NotChecked          int `json:"not_checked"`
	} `json:"outcomes" jsonschema:"every store checked once, by will_stockout_before_close_today (true, unknown, false) or failure; false with data-quality flags counts as flagged_data, not no_stockout"`
	MoreAtRisk      table        `json:"more_at_risk" jsonschema:"stores at risk beyond those in stores, in the same ranking"`
	AtRiskNotListed int          `json:"at_risk_not_listed" jsonschema:"stores at risk in neither stores nor more_at_risk"`
	Errors          []sweepError `json:"errors" jsonschema:"the stores that could not be checked, grouped by error code"`
}

// sweepError is one error code of a sweep and every store that got it.
type sweepError struct {
	Code        string   `json:"code"`
	Message     string   `json:"message" jsonschema:"the first of these stores' message"`
	Remediation string   `json:"remediation"`
	StoreIDs    []string `json:"store_ids"`
}

var sweepListColumns = []string{"store_id", "store_name", "will_stockout_before_close_today", "stockout_earliest", "units_short_by_close", "confidence", "units_sold_last_24h", "on_hand_units"}

// sweepEntry is one store's outcome before the answer is cut to budget.
type sweepEntry struct {
	risk storeRisk
	a    *replenish.Assessment // nil when the store failed
}

// rankSweep orders stores most urgent first: stockout before close
// (earliest window, then most units short, then store id), then stores the
// projection cannot tell about, by id. Others are counted, not listed.
func rankSweep(entries []sweepEntry) []sweepEntry {
	var ranked []sweepEntry
	for _, e := range entries {
		if e.a != nil && e.a.Risk.WillStockoutBeforeCloseToday != projection.No {
			ranked = append(ranked, e)
		}
	}
	slices.SortStableFunc(ranked, func(x, y sweepEntry) int {
		rx, ry := x.a.Risk, y.a.Risk
		if c := cmp.Compare(answerRank(rx.WillStockoutBeforeCloseToday), answerRank(ry.WillStockoutBeforeCloseToday)); c != 0 {
			return c
		}
		if rx.WillStockoutBeforeCloseToday == projection.Yes {
			if c := compareEarliest(rx.ProjectedStockoutWindow.Earliest, ry.ProjectedStockoutWindow.Earliest); c != 0 {
				return c
			}
			if c := cmp.Compare(deref(ry.UnitsShortByClose), deref(rx.UnitsShortByClose)); c != 0 {
				return c
			}
		}
		return compareStoreIDs(x.risk.StoreID, y.risk.StoreID)
	})
	return ranked
}

func answerRank(a projection.Answer) int {
	if a == projection.Yes {
		return 0
	}
	return 1
}

// compareEarliest orders two stockout times as instants; unknown is last.
func compareEarliest(x, y *string) int {
	tx, okx := projection.ParseTime(x)
	ty, oky := projection.ParseTime(y)
	switch {
	case okx && oky:
		return tx.Compare(ty)
	case okx:
		return -1
	case oky:
		return 1
	}
	return 0
}

// compareStoreIDs orders store ids as numbers (the keyring's order).
func compareStoreIDs(x, y string) int {
	nx, ex := strconv.Atoi(x)
	ny, ey := strconv.Atoi(y)
	if ex == nil && ey == nil {
		return cmp.Compare(nx, ny)
	}
	return strings.Compare(x, y)
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

// sweepAnswer cuts a sweep's outcomes to the answer: sweepDetailStores in
// full, sweepListedStores as rows, the rest counted; failures grouped by
// code, lowest store id first. The listed stores are returned for
// fillMoreAtRisk, which writes their rows once names are marked untrusted.
func sweepAnswer(entries []sweepEntry) ([]storeRisk, []*replenish.Assessment, *sweepOut, []sweepEntry) {
	sw := &sweepOut{StoresChecked: len(entries), DetailLimit: sweepDetailStores,
		MoreAtRisk: table{Columns: sweepListColumns, Rows: [][]any{}}, Errors: []sweepError{}}
	byCode := map[string]int{}
	for _, e := range entries {
		if e.a == nil {
			sw.Outcomes.NotChecked++
			b := e.risk.Error
			i, ok := byCode[b.Code]
			if !ok {
				i = len(sw.Errors)
				byCode[b.Code] = i
				sw.Errors = append(sw.Errors, sweepError{Code: b.Code, Message: b.Message, Remediation: b.Remediation})
			}
			sw.Errors[i].StoreIDs = append(sw.Errors[i].StoreIDs, e.risk.StoreID)
			continue
		}
		switch e.a.Risk.WillStockoutBeforeCloseToday {
		case projection.Yes:
			sw.Outcomes.StockoutBeforeClose++
		case projection.No:
			// A store whose figures are doubtful is not reported as safe.
			if len(projection.DataFlags(e.a.Risk.DataQualityFlags)) > 0 {
				sw.Outcomes.FlaggedData++
			} else {
				sw.Outcomes.NoStockout++
			}
		default:
			sw.Outcomes.CannotTell++
		}
	}
	ranked := rankSweep(entries)
	detailed := ranked[:min(len(ranked), sweepDetailStores)]
	// Only the detailed stores' facts are built.
	stores := make([]storeRisk, len(detailed))
	found := make([]*replenish.Assessment, len(detailed))
	for i, e := range detailed {
		stores[i], found[i] = e.risk, e.a
		stores[i].Risk = compactFacts(e.a)
	}
	rest := ranked[len(detailed):]
	listed := rest[:min(len(rest), sweepListedStores)]
	sw.AtRiskNotListed = len(rest) - len(listed)
	return stores, found, sw, slices.Clone(listed)
}

// fillMoreAtRisk writes one row per listed store into sw.MoreAtRisk.
func fillMoreAtRisk(sw *sweepOut, listed []sweepEntry) {
	for _, e := range listed {
		r := e.a.Risk
		var short any
		if r.UnitsShortByClose != nil {
			short = *r.UnitsShortByClose
		}
		var earliest any
		if r.ProjectedStockoutWindow.Earliest != nil {
			earliest = *r.ProjectedStockoutWindow.Earliest
		}
		sw.MoreAtRisk.Rows = append(sw.MoreAtRisk.Rows, []any{e.risk.StoreID, e.risk.StoreName,
			r.WillStockoutBeforeCloseToday, earliest, short, r.Confidence, e.a.UnitsSoldLast24h, r.OnHandUnits})
	}
}

// sweepSummary is the audit sentence for a sweep: counts, the stores that
// run out first, and failures by code.
func sweepSummary(product string, sw *sweepOut, stores []storeRisk) string {
	o := sw.Outcomes
	s := fmt.Sprintf("Swept stock risk of %s across %d store(s): %d stockout before close today, %d cannot tell, %d no stockout",
		product, sw.StoresChecked, o.StockoutBeforeClose, o.CannotTell, o.NoStockout)
	if o.FlaggedData > 0 {
		s += fmt.Sprintf(", %d no stockout on flagged data", o.FlaggedData)
	}
	if len(stores) > 0 {
		ids := make([]string, len(stores))
		for i, st := range stores {
			ids[i] = st.StoreID
		}
		s += "; most at risk: store " + strings.Join(ids, ", ")
	}
	s += "."
	if o.NotChecked > 0 {
		parts := make([]string, len(sw.Errors))
		for i, e := range sw.Errors {
			parts[i] = fmt.Sprintf("%s at %d", e.Code, len(e.StoreIDs))
		}
		s += fmt.Sprintf(" %d store(s) could not be checked: %s.", o.NotChecked, strings.Join(parts, ", "))
	}
	return s
}
