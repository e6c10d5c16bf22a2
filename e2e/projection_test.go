package e2e_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// The fixture clocks: a Friday just after opening, and late evening when
// store 102 has closed and 47 trades twenty more minutes.
const (
	morningClock = "2026-11-27T08:15:00+01:00"
	eveningClock = "2026-11-27T21:40:00+01:00"
)

// startAtClock runs the server on its embedded mock with both clocks pinned
// to now, with the mock's default keyring (47 and 102).
func startAtClock(t *testing.T, now string) *e2etest.Proc {
	t.Helper()
	dir := t.TempDir()
	return e2etest.StartServer(t, []string{
		"STORELINK_MOCK_NOW=" + now,
		"STATE_DB_PATH=" + filepath.Join(dir, "state.db"),
		"HOME=" + dir,
	})
}

// riskFixture is one SKU of the mock world and what it must produce at store 47.
type riskFixture struct {
	name     string
	store    string
	sku      string
	lookback int // 0: the default
	// flags and confidence at each clock, or the error code the call fails with.
	morning, evening []string
	confidence       string
	errCode          string
	// check asserts what else the fixture is for.
	check func(t *testing.T, risk map[string]any)
}

// TestEveryFixtureThroughTheTool checks every mock SKU's risk flags and
// confidence at a morning and an evening clock.
func TestEveryFixtureThroughTheTool(t *testing.T) {
	for _, clock := range []struct{ name, now string }{{"morning", morningClock}, {"evening", eveningClock}} {
		t.Run(clock.name, func(t *testing.T) {
			p := startAtClock(t, clock.now)
			for _, f := range riskFixtures {
				t.Run(f.name, func(t *testing.T) { f.run(t, p, clock.name == "evening") })
			}
		})
	}
}

// noFlags is a projection without data quality flags.
var noFlags = []string{}

// riskFixtures is every SKU asked about, with its expected morning and
// evening answers or error.
var riskFixtures = []riskFixture{
	{name: "butter at 47 runs out today", store: "47", sku: mockstorelink.SKUButter, morning: noFlags, evening: noFlags, confidence: "high",
		check: func(t *testing.T, r map[string]any) {
			if num(r["on_hand_units"]) != mockstorelink.ButterOnHandSmichov {
				t.Errorf("on hand %v", r["on_hand_units"])
			}
		}},
	{name: "butter at 102, closed in the evening", store: "102", sku: mockstorelink.SKUButter, morning: noFlags,
		evening: []string{"outside_trading_hours"}, confidence: "high",
		check: func(t *testing.T, r map[string]any) {
			if num(r["on_hand_units"]) != mockstorelink.ButterOnHandBrno {
				t.Errorf("on hand %v", r["on_hand_units"])
			}
		}},
	{name: "steady seller is the clean case", store: "47", sku: mockstorelink.SKUSteady, morning: noFlags, evening: noFlags, confidence: "high",
		check: usesDays(14)},
	{name: "steady seller over StoreLink's whole history", store: "47", sku: mockstorelink.SKUSteady, lookback: 28,
		morning: noFlags, evening: noFlags, confidence: "high", check: oldestDayHasNoHistory},
	{name: "thin history refuses", store: "47", sku: mockstorelink.SKUThinHistory,
		morning: []string{"insufficient_history"}, evening: []string{"insufficient_history"}, confidence: "none", check: thinHistoryRefuses},
	{name: "thin history refuses over 28 days too", store: "47", sku: mockstorelink.SKUThinHistory, lookback: 28,
		morning: []string{"insufficient_history"}, evening: []string{"insufficient_history"}, confidence: "none", check: thinHistoryRefuses},
	{name: "no sales", store: "47", sku: mockstorelink.SKUNoSales,
		morning: []string{"no_sales_in_window"}, evening: []string{"no_sales_in_window"}, confidence: "none", check: usesDays(14)},
	{name: "bulk order", store: "47", sku: mockstorelink.SKUBulkOrder,
		morning: []string{"bulk_transaction_dominates_day"}, evening: []string{"bulk_transaction_dominates_day"}, confidence: "medium",
		check: dayFlagged("bulk_dominated", 1)},
	{name: "phantom stockouts", store: "47", sku: mockstorelink.SKUPhantomStockout,
		morning: []string{"possible_stockout_days"}, evening: []string{"possible_stockout_days"}, confidence: "medium",
		check: dayFlagged("possible_stockout", 3)},
	{name: "phantom stockouts over 28 days", store: "47", sku: mockstorelink.SKUPhantomStockout, lookback: 28,
		morning: []string{"possible_stockout_days"}, evening: []string{"possible_stockout_days"}, confidence: "medium",
		check: func(t *testing.T, r map[string]any) {
			dayFlagged("possible_stockout", 3)(t, r)
			oldestDayHasNoHistory(t, r)
		}},
	{name: "volatile", store: "47", sku: mockstorelink.SKUVolatile,
		morning: []string{"high_variability"}, evening: []string{"high_variability"}, confidence: "low"},
	{name: "stale count", store: "47", sku: mockstorelink.SKUStaleCount,
		morning: []string{"stale_on_hand_count"}, evening: []string{"stale_on_hand_count"}, confidence: "low"},
	{name: "negative on hand", store: "47", sku: mockstorelink.SKUNegativeOnHand,
		morning: []string{"negative_on_hand"}, evening: []string{"negative_on_hand"}, confidence: "low"},
	{name: "quirk is an error, never data", store: "47", sku: mockstorelink.SKUQuirk, errCode: "UPSTREAM_CONTRACT_ERROR"},
	{name: "injection is an ordinary projection", store: "47", sku: mockstorelink.SKUInjection, morning: noFlags, evening: noFlags, confidence: "high"},
	{name: "minimum-order SKU is an ordinary projection", store: "47", sku: mockstorelink.SKUMinimumOrder, morning: noFlags, evening: noFlags, confidence: "high"},
	{name: "unknown SKU", store: "47", sku: mockstorelink.SKUUnknown, errCode: "NOT_FOUND"},
}

// run checks one risk check of the fixture at p.
func (f riskFixture) run(t *testing.T, p *e2etest.Proc, evening bool) {
	args := map[string]any{"sku": f.sku, "store_id": f.store}
	if f.lookback > 0 {
		args["lookback_days"] = f.lookback
	}
	env := p.Call("korral_check_stock_risk", args)
	if f.errCode != "" {
		if e2etest.Code(env) != f.errCode {
			t.Fatalf("got %v, want error %s", env, f.errCode)
		}
		return
	}
	risk := storeRisk(t, env, 0)
	want := f.morning
	if evening {
		want = f.evening
	}
	var flags []string
	for _, fl := range risk["data_quality_flags"].([]any) {
		flags = append(flags, fl.(string))
	}
	if !slices.Equal(flags, want) || risk["confidence"] != f.confidence {
		t.Fatalf("flags %v confidence %v, want %v %s; caveat: %v", flags, risk["confidence"], want, f.confidence, risk["caveat"])
	}
	noInventedZeroDays(t, risk)
	if f.check != nil {
		f.check(t, risk)
	}
}

// storeRisk is the i-th store's risk of a risk check's answer.
func storeRisk(t *testing.T, env map[string]any, i int) map[string]any {
	t.Helper()
	st := data(t, env)["stores"].([]any)[i].(map[string]any)
	r, ok := st["risk"].(map[string]any)
	if !ok {
		t.Fatalf("store %v has no risk: %v", st["store_id"], st)
	}
	return r
}

// evidenceRows reads the evidence table back as one map per day, dated,
// as the answer documents it.
func evidenceRows(r map[string]any) []map[string]any {
	ev := r["evidence"].(map[string]any)
	cols := ev["columns"].([]any)
	raw := ev["rows"].([]any)
	asOf, err := time.Parse(time.RFC3339, r["as_of"].(string))
	if err != nil {
		panic(err)
	}
	var rows []map[string]any
	for i, e := range raw {
		cells := e.([]any)
		row := map[string]any{"flags": []any{}}
		for j, c := range cells {
			row[cols[j].(string)] = c
		}
		date := asOf.AddDate(0, 0, i-len(raw))
		if want := date.Format("Mon 2"); row["day"] != want {
			panic(fmt.Sprintf("row %d is %v, want %s", i, row["day"], want))
		}
		row["date"] = date.Format("2006-01-02")
		rows = append(rows, row)
	}
	return rows
}

// inBand says whether a day's rate enters the band: open, with history, no stockout look.
func inBand(row map[string]any) bool {
	return !hasDayFlag(row, "closed") && !hasDayFlag(row, "possible_stockout") && !hasDayFlag(row, "no_history")
}

func hasDayFlag(row map[string]any, flag string) bool {
	for _, f := range row["flags"].([]any) {
		if f == flag {
			return true
		}
	}
	return false
}

// noInventedZeroDays: a day without history is never a zero-sale or stockout day, nor in the band.
func noInventedZeroDays(t *testing.T, r map[string]any) {
	t.Helper()
	for _, row := range evidenceRows(r) {
		if hasDayFlag(row, "no_history") && (hasDayFlag(row, "zero_sales") || hasDayFlag(row, "possible_stockout") || inBand(row)) {
			t.Errorf("%s has no history but reads as evidence: %v", row["date"], row)
		}
	}
}

func usesDays(n float64) func(*testing.T, map[string]any) {
	return func(t *testing.T, r map[string]any) {
		t.Helper()
		used := 0.0
		for _, row := range evidenceRows(r) {
			if inBand(row) {
				used++
			}
		}
		if used != n {
			t.Errorf("%v days enter the band, want %v", used, n)
		}
	}
}

func dayFlagged(flag string, n int) func(*testing.T, map[string]any) {
	return func(t *testing.T, r map[string]any) {
		t.Helper()
		got := 0
		for _, row := range evidenceRows(r) {
			if hasDayFlag(row, flag) {
				got++
			}
		}
		if got != n {
			t.Errorf("%d days flagged %s, want %d", got, flag, n)
		}
	}
}

// oldestDayHasNoHistory: of 28 days' lookback the oldest predates
// StoreLink's history, so it is shown but not used.
func oldestDayHasNoHistory(t *testing.T, r map[string]any) {
	t.Helper()
	rows := evidenceRows(r)
	if len(rows) != 28 || !slices.Equal(rows[0]["flags"].([]any), []any{"no_history"}) || rows[0]["units_per_trading_hour"] != nil {
		t.Fatalf("oldest row %v, want only no_history and no rate", rows[0])
	}
	for _, row := range rows[1:] {
		if hasDayFlag(row, "no_history") {
			t.Errorf("%s flagged no_history inside the history", row["date"])
		}
	}
}

// thinHistoryRefuses: a SKU listed three days ago gets no band and no window,
// and the reason.
func thinHistoryRefuses(t *testing.T, r map[string]any) {
	t.Helper()
	usesDays(3)(t, r)
	w := r["stockout_window"].([]any)
	if r["units_per_trading_hour"] != nil || w[0] != nil || w[1] != nil ||
		r["will_stockout_before_close_today"] != "unknown" || r["arrival_beats_stockout"] != "unknown" {
		t.Errorf("a refusal that still guesses: %v", r)
	}
	rows := evidenceRows(r)
	for i, row := range rows {
		listed := i >= len(rows)-3
		if hasDayFlag(row, "no_history") == listed || (listed && num(row["units_sold"]) == 0) {
			t.Errorf("%s: flags %v units %v", row["date"], row["flags"], row["units_sold"])
		}
	}
	if c, _ := r["caveat"].(string); !strings.Contains(c, "first recorded sale was on "+rows[len(rows)-3]["date"].(string)) {
		t.Errorf("caveat %q does not say when the SKU first sold", c)
	}
}
