package foreignstorelink_test

// Where the double follows the contract: stores, key scope, POS paging.

import (
	"net/url"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/foreignstorelink"
)

// Conforming: one store, its timezone and opening hours.
func TestConformsStore(t *testing.T) {
	h := start(t, map[string]string{"47": key47, "61": "foreign-key-61-wien-mitte-0000"})
	m := h.get("/v1/stores/47", key47, 200)
	mustConform(t, "Store", m)
	if m["store_id"] != "47" || m["name"] != "Praha Smíchov" || m["timezone"] != "Europe/Prague" {
		t.Fatalf("store 47: %v", m)
	}
	w := h.get("/v1/stores/61", "foreign-key-61-wien-mitte-0000", 200)
	mustConform(t, "Store", w)
	hours := w["opening_hours"].(map[string]any)
	if w["timezone"] != "Europe/Vienna" || !reflect.DeepEqual(hours["sunday"], map[string]any{"closed": true}) {
		t.Fatalf("store 61: %v", w)
	}
	if !reflect.DeepEqual(hours["monday"], map[string]any{"closed": false, "opens": "07:00", "closes": "21:00"}) {
		t.Fatalf("store 61 monday: %v", hours["monday"])
	}
	for _, id := range []string{"47", "61"} {
		for _, st := range h.get("/v1/stores", key47, 200)["stores"].([]any) {
			if s := st.(map[string]any); s["store_id"] == id {
				if _, err := time.LoadLocation(s["timezone"].(string)); err != nil {
					t.Errorf("store %s: %v", id, err)
				}
			}
		}
	}
}

// Conforming: key scope.
func TestConformsKeyScope(t *testing.T) {
	h := start(t, nil)
	for _, key := range []string{key47, key102} {
		h.get("/v1/stores", key, 200)
		h.get("/v1/skus/8801111", key, 200)
		h.get("/v1/suppliers/sup_5a1c9e02", key, 200)
	}
	h.get("/v1/stores/47", key47, 200)
	h.get("/v1/stores/102", key102, 200)
	h.get("/v1/stores/102", key47, 403)
	h.get("/v1/stores/55/inventory?sku=8847291", key47, 403)
	h.get("/v1/stores/61", key102, 403)
	// 401 whatever the path, before anything else is looked at.
	h.get("/v1/stores/abc", "", 401)
	h.get("/v1/skus/1", "wrong", 401)
	h.get("/v1/stores/47", strings.ToUpper(key47), 401)
}

// Conforming: POS since filter, order, total_count, cursor pagination, fields.
func TestConformsPOSPagination(t *testing.T) {
	h := start(t, nil)
	now := foreignstorelink.DefaultNow()
	since := now.Add(-28 * 24 * time.Hour)
	path := posPath("102", "8847291", since, "&limit=10")
	all, total := h.allPOSPages(path, since)
	if total < 28 || len(all) != total {
		t.Fatalf("%d transactions over %d pages' worth, total_count %d", len(all), len(all)/10, total)
	}
	checkPOSTransactions(t, all, since, now)

	// since filters.
	recent := h.get(posPath("102", "8847291", now.Add(-7*24*time.Hour), ""), key102, 200)
	if n := int(recent["total_count"].(float64)); n == 0 || n >= total {
		t.Fatalf("last 7 days: %d of %d", n, total)
	}
	future := h.get(posPath("102", "8847291", now.Add(time.Hour), ""), key102, 200)
	if future["total_count"] != float64(0) || len(future["transactions"].([]any)) != 0 {
		t.Fatalf("since in the future: %v", future)
	}

	// A cursor is bound to its query and expires after 15 minutes.
	first := h.get(path, key102, 200)
	cur := url.QueryEscape(first["next_cursor"].(string))
	h.get(posPath("102", "8801111", since, "&cursor="+cur), key102, 422)
	h.get(posPath("102", "8847291", since.Add(time.Second), "&cursor="+cur), key102, 422)
	h.get(path+"&cursor="+cur, key102, 200)
	h.clock.add(16 * time.Minute)
	h.get(path+"&cursor="+cur, key102, 422)
}

// allPOSPages follows next_cursor from path to the last page, checking each
// page against the contract, its echo of the query, a steady total_count
// and no transaction twice. It returns the transactions and total_count.
func (h *harness) allPOSPages(path string, since time.Time) ([]map[string]any, int) {
	t := h.t
	t.Helper()
	var all []map[string]any
	seen := map[string]bool{}
	total := -1
	for page, cursor := 0, ""; ; page++ {
		if page > 50 {
			t.Fatal("pagination does not end")
		}
		p := path
		if cursor != "" {
			p += "&cursor=" + url.QueryEscape(cursor)
		}
		m := h.get(p, key102, 200)
		mustConform(t, "POSPage", m)
		if m["store_id"] != "102" || m["sku"] != "8847291" || m["since"] != since.Format(time.RFC3339) {
			t.Fatalf("echo: %v %v %v", m["store_id"], m["sku"], m["since"])
		}
		if n := int(m["total_count"].(float64)); total >= 0 && n != total {
			t.Fatalf("total_count changed from %d to %d", total, n)
		} else {
			total = n
		}
		for _, x := range m["transactions"].([]any) {
			tx := x.(map[string]any)
			id := tx["transaction_id"].(string)
			if seen[id] {
				t.Fatalf("transaction %s twice", id)
			}
			seen[id] = true
			all = append(all, tx)
		}
		next, ok := m["next_cursor"].(string)
		if !ok {
			return all, total
		}
		cursor = next
	}
}

// checkPOSTransactions checks the transactions are in Prague time, within
// [since, now], newest first, with whole units from 1 to 6.
func checkPOSTransactions(t *testing.T, all []map[string]any, since, now time.Time) {
	t.Helper()
	var prev time.Time
	for i, tx := range all {
		at, err := time.Parse(time.RFC3339, tx["timestamp"].(string))
		if err != nil {
			t.Fatal(err)
		}
		if _, off := at.Zone(); off != 3600 {
			t.Errorf("%v: offset %d, want +01:00 (Prague in November)", at, off)
		}
		if at.Before(since) || at.After(now) {
			t.Errorf("%v outside [since, now]", at)
		}
		if i > 0 && at.After(prev) {
			t.Errorf("not newest first at %d: %v after %v", i, at, prev)
		}
		prev = at
		if u := tx["units"].(float64); u < 1 || u > 6 || u != float64(int(u)) {
			t.Errorf("units %v", u)
		}
	}
}
