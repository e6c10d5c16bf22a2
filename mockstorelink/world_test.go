package mockstorelink_test

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/storelinkclient"
)

// butterGap computes the scenario's figure the way an agent would: units
// sold at or after now-24h (from the POS endpoint) minus on-hand (from the
// inventory endpoint).
func butterGap(t *testing.T, c *storelinkclient.ClientWithResponses, storeKey, storeID string, now time.Time) (sold, onHand int64) {
	t.Helper()
	txns := allTransactions(t, c, storeKey, storeID, mockstorelink.SKUButter, now.Add(-24*time.Hour), 7)
	inv, err := c.GetInventoryWithResponse(t.Context(), storeID, &storelinkclient.GetInventoryParams{SKU: mockstorelink.SKUButter}, key(storeKey))
	if err != nil || inv.JSON200 == nil {
		t.Fatalf("inventory at %s: %v %s", storeID, err, inv.Body)
	}
	return sumUnits(txns), inv.JSON200.OnHandUnits
}

func TestButterScenario(t *testing.T) {
	t.Parallel()
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Fatal(err)
	}
	at := func(s string) time.Time {
		tm, err := time.ParseInLocation("2006-01-02 15:04:05.000", s, prague)
		if err != nil {
			t.Fatal(err)
		}
		return tm
	}
	nows := map[string]time.Time{
		"DefaultNow (Friday afternoon)":   mockstorelink.DefaultNow(),
		"Monday before opening":           at("2026-11-30 06:00:00.000"),
		"Sunday just before midnight":     at("2026-11-29 23:59:59.999"),
		"Saturday at opening":             at("2026-11-28 07:00:00.000"),
		"Wednesday just after closing":    at("2026-11-25 22:00:30.250"),
		"midnight":                        at("2026-12-01 00:00:00.000"),
		"odd seconds mid-morning":         at("2026-12-02 10:17:43.512"),
		"spring DST change":               at("2026-03-29 03:30:00.000"),
		"day after spring DST change":     at("2026-03-30 02:15:00.000"),
		"autumn DST change (second 2:30)": at("2026-10-25 02:30:00.000").Add(time.Hour),
		"New Year's Day":                  at("2027-01-01 12:00:00.000"),
	}
	for name, now := range nows {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			m := start(t, mockstorelink.Options{Now: func() time.Time { return now }})
			c := newClient(t, m.URL)
			ring := m.Server.DefaultKeyring()
			sold47, on47 := butterGap(t, c, ring["47"], "47", now)
			sold102, on102 := butterGap(t, c, ring["102"], "102", now)
			if sold47 != mockstorelink.ButterSoldLast24hSmichov || on47 != mockstorelink.ButterOnHandSmichov || sold47-on47 <= 6 {
				t.Errorf("store 47: sold %d, on hand %d: gap %d, want 22-5=17 (> 6)", sold47, on47, sold47-on47)
			}
			if sold102 != mockstorelink.ButterSoldLast24hBrno || on102 != mockstorelink.ButterOnHandBrno || sold102-on102 != 6 {
				t.Errorf("store 102: sold %d, on hand %d: gap %d, want exactly 6", sold102, on102, sold102-on102)
			}
		})
	}

	t.Run("real clock", func(t *testing.T) {
		t.Parallel()
		m := startRaw(t, mockstorelink.Options{}, true)
		c := newClient(t, m.URL)
		ring := m.Server.DefaultKeyring()
		sold47, on47 := butterGap(t, c, ring["47"], "47", time.Now())
		sold102, on102 := butterGap(t, c, ring["102"], "102", time.Now())
		if sold47-on47 != 17 || sold102-on102 != 6 {
			t.Errorf("real clock: gaps %d and %d, want 17 and 6", sold47-on47, sold102-on102)
		}
	})

	t.Run("caller clock a little off", func(t *testing.T) {
		t.Parallel()
		now := mockstorelink.DefaultNow().Add(20 * time.Second)
		m := start(t, mockstorelink.Options{Now: func() time.Time { return now }})
		c := newClient(t, m.URL)
		ring := m.Server.DefaultKeyring()
		for _, skew := range []time.Duration{-50 * time.Second, -time.Second, 0, 30 * time.Second} {
			sold, on := butterGap(t, c, ring["102"], "102", now.Add(skew))
			if sold-on != 6 {
				t.Errorf("caller clock skewed by %v: gap %d, want 6", skew, sold-on)
			}
		}
	})
}

// dailyUnits sums transactions per store-local date, over the days before
// now's date (complete days only), oldest first; days the store is closed
// are left out.
func dailyUnits(t *testing.T, txns []storelinkclient.POSTransaction, now time.Time, days int, loc *time.Location, closedOnSunday bool) []int64 {
	t.Helper()
	byDate := map[string]int64{}
	for _, x := range txns {
		byDate[x.Timestamp.In(loc).Format("2006-01-02")] += x.Units
	}
	var out []int64
	local := now.In(loc)
	for d := days; d >= 1; d-- {
		day := time.Date(local.Year(), local.Month(), local.Day()-d, 12, 0, 0, 0, loc)
		if closedOnSunday && day.Weekday() == time.Sunday {
			continue
		}
		out = append(out, byDate[day.Format("2006-01-02")])
	}
	return out
}

func meanCV(xs []int64) (mean, cv float64) {
	for _, x := range xs {
		mean += float64(x)
	}
	mean /= float64(len(xs))
	var v float64
	for _, x := range xs {
		v += (float64(x) - mean) * (float64(x) - mean)
	}
	sd := math.Sqrt(v / float64(len(xs)))
	if mean == 0 {
		return 0, 0
	}
	return mean, sd / mean
}

// TestDataQualityFixtures checks that each fixture SKU has the shape that
// makes it its pattern, read through the API like a consumer would.
// fixtureWorld is a mock at one instant, with store 47's key.
type fixtureWorld struct {
	c      *storelinkclient.ClientWithResponses
	k47    string
	now    time.Time
	prague *time.Location
}

// history is the SKU's sales at store 47 over the last 28 days.
func (w fixtureWorld) history(t *testing.T, sku string) []storelinkclient.POSTransaction {
	return allTransactions(t, w.c, w.k47, "47", sku, w.now.AddDate(0, 0, -28), 1000)
}

// inventory is the SKU's inventory at store 47.
func (w fixtureWorld) inventory(t *testing.T, sku string) storelinkclient.Inventory {
	resp, err := w.c.GetInventoryWithResponse(t.Context(), "47", &storelinkclient.GetInventoryParams{SKU: sku}, key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatalf("inventory %s: %v %s", sku, err, resp.Body)
	}
	return *resp.JSON200
}

func TestDataQualityFixtures(t *testing.T) {
	t.Parallel()
	prague, _ := time.LoadLocation("Europe/Prague")
	for _, now := range []time.Time{mockstorelink.DefaultNow(), mockstorelink.DefaultNow().Add(3*24*time.Hour + 17*time.Hour + 11*time.Minute)} {
		t.Run(now.Format(time.RFC3339), func(t *testing.T) {
			t.Parallel()
			m := start(t, mockstorelink.Options{Now: func() time.Time { return now }})
			w := fixtureWorld{c: newClient(t, m.URL), k47: m.Server.Keys()["47"], now: now, prague: prague}
			runSteps(t, w, []step[fixtureWorld]{
				{"steady", fixtureSteady},
				{"thin history", fixtureThinHistory},
				{"no sales", fixtureNoSales},
				{"bulk transaction", fixtureBulkTransaction},
				{"zero days that look like stockouts", fixtureZeroDaysThatLookLikeStockouts},
				{"high variability", fixtureHighVariability},
				{"stale count", fixtureStaleCount},
				{"negative on hand", fixtureNegativeOnHand},
				{"injection-like product name", fixtureInjectionLikeProductName},
			})
		})
	}
}

func fixtureSteady(t *testing.T, w fixtureWorld) {
	days := dailyUnits(t, w.history(t, mockstorelink.SKUSteady), w.now, 14, w.prague, false)
	mean, cv := meanCV(days)
	if slices.Contains(days, 0) || cv > 0.2 {
		t.Errorf("steady seller: days %v (cv %.2f)", days, cv)
	}
	if inv := w.inventory(t, mockstorelink.SKUSteady); float64(inv.OnHandUnits) < 10*mean {
		t.Errorf("steady seller should have plenty of stock: %d on hand, %.1f a day", inv.OnHandUnits, mean)
	}
}

func fixtureThinHistory(t *testing.T, w fixtureWorld) {
	txns := w.history(t, mockstorelink.SKUThinHistory)
	if len(txns) == 0 {
		t.Fatal("no sales at all")
	}
	oldest := txns[len(txns)-1].Timestamp
	if w.now.Sub(oldest) > 4*24*time.Hour {
		t.Errorf("oldest sale %v is more than 4 days old", oldest)
	}
}

func fixtureNoSales(t *testing.T, w fixtureWorld) {
	if txns := w.history(t, mockstorelink.SKUNoSales); len(txns) != 0 {
		t.Errorf("%d sales, want none", len(txns))
	}
	if inv := w.inventory(t, mockstorelink.SKUNoSales); inv.OnHandUnits <= 0 {
		t.Errorf("on hand %d, want stock that does not sell", inv.OnHandUnits)
	}
}

func fixtureBulkTransaction(t *testing.T, w fixtureWorld) {
	txns := w.history(t, mockstorelink.SKUBulkOrder)
	var bulk storelinkclient.POSTransaction
	for _, x := range txns {
		if x.Units > bulk.Units {
			bulk = x
		}
	}
	day := bulk.Timestamp.In(w.prague).Format("2006-01-02")
	var rest int64
	for _, x := range txns {
		if x.Timestamp.In(w.prague).Format("2006-01-02") == day && x.TransactionID != bulk.TransactionID {
			rest += x.Units
		}
	}
	if bulk.Units < 40 || bulk.Units < 4*rest {
		t.Errorf("largest transaction %d units vs %d for the rest of its day: does not dominate", bulk.Units, rest)
	}
	if age := w.now.Sub(bulk.Timestamp); age > 14*24*time.Hour {
		t.Errorf("bulk transaction is %v old, outside a 14-day lookback", age)
	}
}

func fixtureZeroDaysThatLookLikeStockouts(t *testing.T, w fixtureWorld) {
	days := dailyUnits(t, w.history(t, mockstorelink.SKUPhantomStockout), w.now, 14, w.prague, false)
	zeros := 0
	var sold []int64
	for _, d := range days {
		if d == 0 {
			zeros++
		} else {
			sold = append(sold, d)
		}
	}
	mean, cv := meanCV(sold)
	if zeros < 2 || mean < 15 || cv > 0.3 {
		t.Errorf("days %v: %d zero days, selling days mean %.1f cv %.2f", days, zeros, mean, cv)
	}
}

func fixtureHighVariability(t *testing.T, w fixtureWorld) {
	days := dailyUnits(t, w.history(t, mockstorelink.SKUVolatile), w.now, 14, w.prague, false)
	if _, cv := meanCV(days); cv < 0.6 {
		t.Errorf("days %v: cv %.2f, want high variability", days, cv)
	}
}

func fixtureStaleCount(t *testing.T, w fixtureWorld) {
	if inv := w.inventory(t, mockstorelink.SKUStaleCount); w.now.Sub(inv.CountedAt) < 72*time.Hour {
		t.Errorf("counted at %v, want days ago", inv.CountedAt)
	}
	if inv := w.inventory(t, mockstorelink.SKUSteady); w.now.Sub(inv.CountedAt) > 2*time.Hour || inv.CountedAt.After(w.now) {
		t.Errorf("an ordinary count should be recent: %v", inv.CountedAt)
	}
}

func fixtureNegativeOnHand(t *testing.T, w fixtureWorld) {
	if inv := w.inventory(t, mockstorelink.SKUNegativeOnHand); inv.OnHandUnits >= 0 {
		t.Errorf("on hand %d, want negative", inv.OnHandUnits)
	}
	if len(w.history(t, mockstorelink.SKUNegativeOnHand)) == 0 {
		t.Error("the negative stock SKU should still sell")
	}
}

func fixtureInjectionLikeProductName(t *testing.T, w fixtureWorld) {
	resp, err := w.c.GetSKUWithResponse(t.Context(), mockstorelink.SKUInjection, key(w.k47))
	if err != nil || resp.JSON200 == nil {
		t.Fatal(err)
	}
	if !strings.Contains(resp.JSON200.Name, "IGNORE PREVIOUS INSTRUCTIONS") {
		t.Errorf("name %q", resp.JSON200.Name)
	}
}

func TestQuirkInventory(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	keys := m.Server.Keys()
	for _, store := range []string{"47", "102", "210"} {
		status, _, body := rawGet(t, m.URL+"/v1/stores/"+store+"/inventory?sku="+mockstorelink.SKUQuirk, keys[store])
		if status != 200 {
			t.Fatalf("store %s: status %d", store, status)
		}
		if code := errorCode(t, body); code == "" {
			t.Fatal("empty code")
		}
	}
	// The SKU's other endpoints behave.
	c := newClient(t, m.URL)
	if txns := allTransactions(t, c, keys["47"], "47", mockstorelink.SKUQuirk, mockstorelink.DefaultNow().AddDate(0, 0, -7), 500); len(txns) == 0 {
		t.Error("the quirk SKU should still have sales")
	}
	// The quirk is deliberate: the mock's own validation lets it through and
	// start's cleanup checks that no violation was recorded.
}

// TestSalesOnlyDuringOpeningHours checks every transaction of every fixture
// SKU at several stores against the store's published hours.
func TestSalesOnlyDuringOpeningHours(t *testing.T) {
	t.Parallel()
	m := start(t, mockstorelink.Options{})
	c := newClient(t, m.URL)
	keys := m.Server.Keys()
	skus := []string{mockstorelink.SKUButter, mockstorelink.SKUSteady, mockstorelink.SKUThinHistory,
		mockstorelink.SKUBulkOrder, mockstorelink.SKUPhantomStockout, mockstorelink.SKUVolatile,
		mockstorelink.SKUStaleCount, mockstorelink.SKUNegativeOnHand, mockstorelink.SKUQuirk,
		mockstorelink.SKUInjection, mockstorelink.SKUMinimumOrder}
	for _, store := range []string{"47", "102", mockstorelink.StoreClosedSundays, mockstorelink.StoreVienna} {
		resp, err := c.GetStoreWithResponse(t.Context(), store, key(keys[store]))
		if err != nil || resp.JSON200 == nil {
			t.Fatal(err)
		}
		st := resp.JSON200
		loc, err := time.LoadLocation(st.Timezone)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := json.Marshal(st.OpeningHours)
		var week map[string]storelinkclient.DayHours
		if err := json.Unmarshal(raw, &week); err != nil {
			t.Fatal(err)
		}
		sundays := 0
		for _, sku := range skus {
			for _, x := range allTransactions(t, c, keys[store], store, sku, mockstorelink.DefaultNow().AddDate(0, 0, -28), 1000) {
				local := x.Timestamp.In(loc)
				if _, off := x.Timestamp.Zone(); off != func() int { _, o := local.Zone(); return o }() {
					t.Fatalf("store %s: timestamp %v not in the store's offset", store, x.Timestamp)
				}
				h := week[strings.ToLower(local.Weekday().String())]
				hhmm := local.Format("15:04")
				if h.Closed || h.Opens == nil || hhmm < *h.Opens || hhmm >= *h.Closes {
					t.Fatalf("store %s sku %s: sale at %v outside hours %+v", store, sku, local, h)
				}
				if local.Weekday() == time.Sunday {
					sundays++
				}
			}
		}
		if store == mockstorelink.StoreClosedSundays && sundays != 0 {
			t.Errorf("store closed on Sundays sold on %d Sunday occasions", sundays)
		}
		if store != mockstorelink.StoreClosedSundays && sundays == 0 {
			t.Errorf("store %s opens on Sundays but never sells then", store)
		}
	}
}
