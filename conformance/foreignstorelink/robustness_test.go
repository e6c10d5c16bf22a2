package foreignstorelink_test

// The double as a test fixture: deterministic from its clock, bounded,
// never failing on odd input, safe under concurrent orders.

import (
	"encoding/json"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/foreignstorelink"
)

func TestDeterministicFromClock(t *testing.T) {
	a, b := start(t, nil), start(t, nil)
	for _, p := range []string{
		posPath("47", "8801111", foreignstorelink.DefaultNow().Add(-28*24*time.Hour), ""),
		"/v1/stores/47/inventory?sku=8801111",
		"/v1/stores",
	} {
		ra, rb := a.do("GET", p, key47, ""), b.do("GET", p, key47, "")
		if ra.status != 200 || string(ra.body) != string(rb.body) {
			t.Fatalf("%s differs between two doubles on the same clock", p)
		}
	}
}

func TestBoundsAndCounting(t *testing.T) {
	h := start(t, nil)
	big := `{"sku":"8847291","quantity_units":24,"reason":"` + strings.Repeat("x", foreignstorelink.MaxBodyBytes) + `"}`
	isDetailText(t, "big body", h.post("/v1/stores/47/replenishment", key47, big, 413))
	if len(h.s.Orders()) != 0 {
		t.Fatal("an oversized body raised an order")
	}
	before := h.s.Requests()
	h.get("/v1/stores", key47, 200)
	h.get("/nowhere", "", 404)
	h.get("/v1/stores", "", 401)
	if got := h.s.Requests() - before; got != 3 {
		t.Fatalf("Requests() grew by %d, want 3", got)
	}
}

// No input makes the double fail (500) or stop answering.
func TestOddInputsNeverFail(t *testing.T) {
	h := start(t, nil)
	paths := []string{
		"/", "//", "/v1", "/v1/", "/v1/stores/", "/v1/stores//inventory", "/v1/stores/47/", "/v1/stores/47/pos/",
		"/v1/stores/%25zz", "/v1/stores/47%2Finventory", "/v1/stores/0000047", "/v1/stores/-1", "/v1/stores/1234567",
		"/v1/stores/47/replenishment/" + strings.Repeat("a", 300), "/v1/suppliers/" + strings.Repeat("s", 300),
		"/v1/skus/" + strings.Repeat("9", 40), "/v1/stores/47/inventory?sku=%ff", "/v1/stores/47/inventory?sku=8847291&sku=abc",
		"/v1/stores/47/pos?sku=8847291&since=2026-11-20T10:00:00%2B01:00&limit=99999999999999999999",
		"/v1/stores/47/pos?sku=8847291&since=2026-11-20T10:00:00Z&cursor=" + strings.Repeat("A", 300),
		"/v1/stores/47/pos?sku=8847291&since=0001-01-01T00:00:00Z&limit=1000",
		"/v1/stores/47/pos?sku=8847291&since=9999-12-31T23:59:59Z",
		"/v1/stores/47/pos?;;;&&&===",
	}
	bodies := []string{"", "null", "{}", "0", `"x"`, `{"sku":null,"quantity_units":null,"reason":null}`,
		`{"sku":"8847291","quantity_units":1e400,"reason":"r"}`, `{"sku":"8847291","quantity_units":-1e400,"reason":"r"}`,
		`{"sku":"8847291","quantity_units":24.0,"reason":"r"}`, `{"sku":"8847291","quantity_units":99999999999999999999999,"reason":"r"}`,
		`{"sku":"8847291","quantity_units":24,"reason":"r"} trailing`, `{"a":{"b":{"c":[[[[]]]]}}}`, "\xff\xfe"}
	for _, key := range []string{"", key47} {
		for _, p := range paths {
			for _, m := range []string{"GET", "POST", "HEAD", "OPTIONS"} {
				if res := h.do(m, p, key, ""); res.status >= 500 {
					t.Errorf("%s %s: %d %s", m, p, res.status, res.body)
				}
			}
		}
		for _, b := range bodies {
			if res := h.do("POST", "/v1/stores/47/replenishment", key, b); res.status >= 500 || res.status == 201 && !strings.Contains(b, "24.0") {
				t.Errorf("POST %q: %d %s", b, res.status, res.body)
			}
		}
	}
}

func TestConcurrentOrders(t *testing.T) {
	h := start(t, nil)
	const n = 24
	var wg sync.WaitGroup
	ids := make(chan string, n)
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res := h.do("POST", "/v1/stores/102/replenishment", key102, orderBody(12+i))
			var o map[string]any
			_ = json.Unmarshal(res.body, &o)
			id, _ := o["order_id"].(string)
			ids <- id
			h.do("GET", "/v1/stores/102/pos?sku=8847291&since=2026-11-20T10:00:00Z", key102, "")
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[string]bool{}
	for id := range ids {
		if !orderID.MatchString(id) || seen[id] {
			t.Fatalf("order id %q (duplicate: %v)", id, seen[id])
		}
		seen[id] = true
	}
	if got := len(h.s.Orders()); got != n {
		t.Fatalf("Orders() holds %d, want %d", got, n)
	}
}

func TestNilOptionsUseRealClockAndDefaultKeys(t *testing.T) {
	s := foreignstorelink.New(foreignstorelink.Options{})
	rec := httptest.NewRecorder()
	req := httptest.NewRequest("POST", "/v1/stores/47/replenishment", strings.NewReader(orderBody(24)))
	req.Header.Set(foreignstorelink.KeyHeader, key47)
	s.ServeHTTP(rec, req)
	if rec.Code != 201 {
		t.Fatalf("status %d: %s", rec.Code, rec.Body)
	}
	o := s.Orders()[0]
	if d := time.Since(o.CreatedAt); d < 0 || d > time.Minute {
		t.Fatalf("created_at %v is not now", o.CreatedAt)
	}
	for id, k := range foreignstorelink.DefaultKeys {
		if len(k) < 24 {
			t.Errorf("default key of %s is shorter than 24", id)
		}
	}
}
