package tools

import (
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/replenish"
)

// sweepStore is one synthetic store outcome: will is the earliest stockout
// ("" for none), short the units short (-1 for none), code an error code.
func sweepStore(id string, will projection.Answer, at string, short int64, code string) sweepEntry {
	e := sweepEntry{risk: storeRisk{StoreID: id}}
	if code != "" {
		e.risk.Error = &ErrorBody{Code: code, Message: "store " + id + " failed", Remediation: "retry " + code}
		return e
	}
	r := projection.Result{WillStockoutBeforeCloseToday: will, Confidence: projection.ConfidenceHigh}
	if at != "" {
		r.ProjectedStockoutWindow.Earliest = &at
	}
	if short >= 0 {
		r.UnitsShortByClose = &short
	}
	e.a = &replenish.Assessment{Identity: replenish.Identity{StoreID: id, StoreName: "Store " + id}, Risk: r}
	e.risk.StoreName = "Store " + id
	return e
}

func storeIDsOf(stores []storeRisk) []string {
	ids := make([]string, len(stores))
	for i, s := range stores {
		ids[i] = s.StoreID
	}
	return ids
}

// TestSweepRanksTheEarliestStockoutFirst pins the ranking: stockouts first,
// earlier instant, then most units short, then numeric store id; then
// "cannot tell" by store id; the rest unranked.
func TestSweepRanksTheEarliestStockoutFirst(t *testing.T) {
	entries := []sweepEntry{
		sweepStore("9", projection.Yes, "2026-11-27T18:00:00+01:00", 3, ""),
		sweepStore("47", projection.Yes, "2026-11-27T18:00:00+01:00", 3, ""),
		sweepStore("102", projection.Unknown, "", -1, ""),
		sweepStore("11", projection.No, "", -1, ""),
		sweepStore("12", projection.Yes, "2026-11-27T16:00:00+01:00", 1, ""),
		sweepStore("13", projection.Yes, "2026-11-27T15:30:00Z", 9, ""),
		sweepStore("14", projection.Yes, "2026-11-27T18:00:00+01:00", 8, ""),
		sweepStore("15", "", "", -1, "UPSTREAM_TIMEOUT"),
		sweepStore("16", projection.Unknown, "", -1, ""),
		sweepStore("17", projection.Yes, "", 2, ""),
	}
	got := rankSweep(entries)
	ids := make([]string, len(got))
	for i, e := range got {
		ids[i] = e.risk.StoreID
	}
	want := []string{"12", "13", "14", "9", "47", "17", "16", "102"}
	if !slices.Equal(ids, want) {
		t.Fatalf("ranked %v, want %v", ids, want)
	}
}

// TestSweepAnswerStaysWithinItsBudget: 5 stores in full, 25 as rows, the
// rest counted; failures grouped by code, first met first.
func TestSweepAnswerStaysWithinItsBudget(t *testing.T) {
	var entries []sweepEntry
	for i := range 180 {
		id := fmt.Sprint(1000 + i)
		switch {
		case i%10 == 3:
			entries = append(entries, sweepStore(id, "", "", -1, []string{"UPSTREAM_TIMEOUT", "STORE_NOT_AUTHORIZED"}[i%20/10]))
		case i%4 == 0:
			entries = append(entries, sweepStore(id, projection.No, "", -1, ""))
		case i%4 == 1:
			entries = append(entries, sweepStore(id, projection.Unknown, "", -1, ""))
		default:
			// Later stores run out earlier: the ranking reverses them.
			entries = append(entries, sweepStore(id, projection.Yes, fmt.Sprintf("2026-11-27T%02d:%02d:00+01:00", 21-i/20, 59-i%60), int64(i%7), ""))
		}
	}
	stores, found, sw, listed := sweepAnswer(entries)
	fillMoreAtRisk(sw, listed)
	o := sw.Outcomes
	if o.StockoutBeforeClose+o.CannotTell+o.NoStockout+o.FlaggedData+o.NotChecked != 180 || sw.StoresChecked != 180 {
		t.Fatalf("outcomes %+v do not add up to 180", o)
	}
	if o.NotChecked != 18 || o.NoStockout != 45 {
		t.Fatalf("outcomes %+v", o)
	}
	// The budget in numbers (ADR 0027): 5 in full, 25 as rows.
	if len(stores) != 5 || len(found) != 5 || sw.DetailLimit != 5 {
		t.Fatalf("%d detailed stores, want 5", len(stores))
	}
	if len(sw.MoreAtRisk.Rows) != 25 {
		t.Fatalf("%d listed rows, want 25", len(sw.MoreAtRisk.Rows))
	}
	atRisk := o.StockoutBeforeClose + o.CannotTell
	if sw.AtRiskNotListed != atRisk-30 {
		t.Fatalf("at_risk_not_listed %d, want %d", sw.AtRiskNotListed, atRisk-30)
	}
	ranked := rankSweep(entries)
	if got, want := storeIDsOf(stores), storeIDsOf([]storeRisk{ranked[0].risk, ranked[1].risk, ranked[2].risk, ranked[3].risk, ranked[4].risk}); !slices.Equal(got, want) {
		t.Fatalf("detailed %v, want the first five ranked %v", got, want)
	}
	if sw.MoreAtRisk.Rows[0][0] != ranked[sweepDetailStores].risk.StoreID {
		t.Fatalf("first listed row %v, want store %s", sw.MoreAtRisk.Rows[0], ranked[sweepDetailStores].risk.StoreID)
	}
	if len(sw.Errors) != 2 || sw.Errors[0].Code != "UPSTREAM_TIMEOUT" || sw.Errors[1].Code != "STORE_NOT_AUTHORIZED" ||
		len(sw.Errors[0].StoreIDs)+len(sw.Errors[1].StoreIDs) != 18 || sw.Errors[0].StoreIDs[0] != "1003" ||
		sw.Errors[0].Remediation != "retry UPSTREAM_TIMEOUT" || sw.Errors[0].Message != "store 1003 failed" {
		t.Fatalf("errors %+v", sw.Errors)
	}
	sum := sweepSummary("Butter (SKU 1)", sw, stores)
	for _, want := range []string{"across 180 store(s)", "18 store(s) could not be checked: UPSTREAM_TIMEOUT at 9, STORE_NOT_AUTHORIZED at 9.", "most at risk: store " + stores[0].StoreID} {
		if !strings.Contains(sum, want) {
			t.Errorf("summary %q lacks %q", sum, want)
		}
	}
}

// TestSweepAnswerOfAQuietChain: nothing at risk gives empty lists and zero
// not listed.
func TestSweepAnswerOfAQuietChain(t *testing.T) {
	entries := []sweepEntry{sweepStore("47", projection.No, "", -1, ""), sweepStore("102", projection.No, "", -1, "")}
	stores, _, sw, listed := sweepAnswer(entries)
	fillMoreAtRisk(sw, listed)
	if len(stores) != 0 || len(sw.MoreAtRisk.Rows) != 0 || sw.AtRiskNotListed != 0 || len(sw.Errors) != 0 || sw.Outcomes.NoStockout != 2 {
		t.Fatalf("stores %v sweep %+v", stores, sw)
	}
	if sum := sweepSummary("SKU 1", sw, stores); strings.Contains(sum, "most at risk") || strings.Contains(sum, "could not") {
		t.Fatalf("summary %q", sum)
	}
}

// TestSweepCountsFlaggedStoresApart: a store that does not run out but
// whose data is flagged is flagged_data, never no_stockout; a flag about
// the store's hours alone is not doubtful data.
func TestSweepCountsFlaggedStoresApart(t *testing.T) {
	flagged := func(id string, flags ...projection.Flag) sweepEntry {
		e := sweepStore(id, projection.No, "", -1, "")
		e.a.Risk.DataQualityFlags = flags
		return e
	}
	entries := []sweepEntry{
		flagged("1"),
		flagged("2", projection.FlagStaleOnHandCount),
		flagged("3", projection.FlagPossibleStockoutDays, projection.FlagHighVariability),
		flagged("4", projection.FlagStoreClosedToday),
		flagged("5", projection.FlagOutsideTradingHours),
	}
	_, _, sw, _ := sweepAnswer(entries)
	if o := sw.Outcomes; o.NoStockout != 3 || o.FlaggedData != 2 || o.StockoutBeforeClose+o.CannotTell+o.NotChecked != 0 {
		t.Fatalf("outcomes %+v, want 3 no_stockout and 2 flagged_data", o)
	}
	if sum := sweepSummary("SKU 1", sw, nil); !strings.Contains(sum, "3 no stockout, 2 no stockout on flagged data.") {
		t.Fatalf("summary %q", sum)
	}
}

// TestSweepChecksEveryStoreOfTheKeyring: store_ids ["all"] through the
// tool. Store 9 runs out before 47, 102 does not, and unknown 55 is a
// NOT_FOUND under its code; no store is named twice.
func TestSweepChecksEveryStoreOfTheKeyring(t *testing.T) {
	f := newFake()
	f.stores["9"] = pragueStore("9", "Praha Anděl")
	counted := testNow.Add(-2 * time.Hour)
	f.invBy = map[string]domain.Inventory{"9": {OnHand: 2, CountedAt: counted}, "102": {OnHand: 500, CountedAt: counted}}
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b","9":"c","55":"d"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": []string{"all"}})
	if env["ok"] != true {
		t.Fatalf("got %v", env)
	}
	data := env["data"].(map[string]any)
	var ids []string
	for _, st := range data["stores"].([]any) {
		ids = append(ids, st.(map[string]any)["store_id"].(string))
	}
	if !slices.Equal(ids, []string{"9", "47"}) {
		t.Fatalf("detailed stores %v, want [9 47]", ids)
	}
	sw := data["sweep"].(map[string]any)
	o := sw["outcomes"].(map[string]any)
	if sw["stores_checked"] != 4.0 || o["stockout_before_close"] != 2.0 || o["no_stockout"] != 1.0 || o["not_checked"] != 1.0 || o["cannot_tell"] != 0.0 || o["flagged_data"] != 0.0 {
		t.Fatalf("sweep %v", sw)
	}
	errs := sw["errors"].([]any)
	if len(errs) != 1 || errs[0].(map[string]any)["code"] != "NOT_FOUND" || fmt.Sprint(errs[0].(map[string]any)["store_ids"]) != "[55]" {
		t.Fatalf("errors %v", errs)
	}
	if plain(data["product"].(map[string]any)["name"].(string)) != "Madeta butter 250g" {
		t.Fatalf("product %v", data["product"])
	}
	if !strings.Contains(s.logText(), `Swept stock risk of Madeta butter 250g (SKU 8847291) across 4 store(s): 2 stockout before close today, 0 cannot tell, 1 no stockout; most at risk: store 9, 47. 1 store(s) could not be checked: NOT_FOUND at 1.`) {
		t.Fatalf("audit summary missing: %s", s.logText())
	}
}

// TestSweepAllStandsAlone: "all" beside a store id is refused up front.
func TestSweepAllStandsAlone(t *testing.T) {
	f := newFake()
	s := connect(t, f, mustKeyring(t, `{"47":"a","102":"b"}`), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": []string{"all", "47"}})
	if errCode(env) != "INVALID_ARGUMENT" || !strings.Contains(env["error"].(map[string]any)["message"].(string), `"all"`) {
		t.Fatalf("got %v", env)
	}
	if n := f.callsFor("47") + f.callsFor("102"); n != 0 {
		t.Fatalf("%d requests sent for a refused sweep", n)
	}
}

// TestSweepRefusesAScopeBeyondItsBound: 1001 stores are refused up front;
// exactly 1000 are swept.
func TestSweepRefusesAScopeBeyondItsBound(t *testing.T) {
	keyring := func(n int) string {
		keys := make([]string, n)
		for i := range keys {
			keys[i] = fmt.Sprintf("%q:\"k%d\"", fmt.Sprint(1000+i), i)
		}
		return "{" + strings.Join(keys, ",") + "}"
	}
	f := newFake()
	s := connect(t, f, mustKeyring(t, keyring(1001)), nil)
	env, _ := callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": []string{"all"}})
	if errCode(env) != "INVALID_ARGUMENT" || !strings.Contains(env["error"].(map[string]any)["message"].(string), "at most 1000 stores; you may use 1001") {
		t.Fatalf("1001 stores: %v", env)
	}
	if n := f.callsFor("1000") + f.callsFor("2000"); n != 0 {
		t.Fatalf("%d requests sent for a refused sweep", n)
	}
	s = connect(t, newFake(), mustKeyring(t, keyring(1000)), nil)
	env, _ = callTool(t, s, "korral_check_stock_risk", map[string]any{"sku": "8847291", "store_ids": []string{"all"}})
	if env["ok"] != true || env["data"].(map[string]any)["sweep"].(map[string]any)["stores_checked"] != 1000.0 {
		t.Fatalf("1000 stores: ok=%v", env["ok"])
	}
}
