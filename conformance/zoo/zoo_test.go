package zoo_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/zoo"
	"github.com/korral/storelink/mockstorelink"
)

// member starts the named member in front of a fresh mock, on loopback.
func member(t *testing.T, name string) (*zoo.Member, *mockstorelink.Server, string) {
	t.Helper()
	spec, ok := zoo.Lookup(name)
	if !ok {
		t.Fatalf("no member %q", name)
	}
	mock, err := mockstorelink.New(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	m := spec.Build(mock)
	srv := httptest.NewServer(m)
	t.Cleanup(srv.Close)
	return m, mock, srv.URL
}

// call sends one request with store 47's key and decodes the JSON answer.
func call(t *testing.T, mock *mockstorelink.Server, base, method, path string, body any) (int, map[string]any, http.Header) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, _ := http.NewRequest(method, base+path, rd)
	req.Header.Set("X-Korral-Store-Key", mock.DefaultKeyring()["47"])
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c := &http.Client{Timeout: 10 * time.Second}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var v map[string]any
	b, _ := io.ReadAll(resp.Body)
	if err := json.Unmarshal(b, &v); err != nil {
		t.Fatalf("%s %s: %d, not a JSON object: %s", method, path, resp.StatusCode, b)
	}
	return resp.StatusCode, v, resp.Header
}

func order(units int) map[string]any {
	return map[string]any{"sku": mockstorelink.SKUButter, "quantity_units": units, "reason": "zoo test"}
}

// Every member exists once, and departs from the contract where it says
// and nowhere else that a test of another member looks.
func TestMembersDepartWhereTheySay(t *testing.T) {
	seen := map[string]bool{}
	for _, s := range zoo.Members() {
		if seen[s.Name] || s.Kind == "" || len(s.Departures) == 0 {
			t.Errorf("member %q: duplicate, or without a kind or departures", s.Name)
		}
		seen[s.Name] = true
	}
	inv := "/v1/stores/47/inventory?sku=" + mockstorelink.SKUButter
	pos := "/v1/stores/47/pos?sku=" + mockstorelink.SKUButter + "&since=" + url.QueryEscape(time.Now().Add(-24*time.Hour).UTC().Format(time.RFC3339))

	t.Run("no-opening-hours", func(t *testing.T) {
		_, mock, base := member(t, "no-opening-hours")
		code, v, _ := call(t, mock, base, "GET", "/v1/stores/47", nil)
		if _, has := v["opening_hours"]; code != 200 || has || v["timezone"] != "Europe/Prague" {
			t.Errorf("store: %d %v", code, v)
		}
	})
	t.Run("no-store-list", func(t *testing.T) {
		_, mock, base := member(t, "no-store-list")
		if code, _, _ := call(t, mock, base, "GET", "/v1/stores", nil); code != 404 {
			t.Errorf("store list: %d, want 404", code)
		}
		if code, _, _ := call(t, mock, base, "GET", "/v1/stores/47", nil); code != 200 {
			t.Errorf("one store: %d", code)
		}
	})
	t.Run("lead-time-hours", func(t *testing.T) {
		_, mock, base := member(t, "lead-time-hours")
		code, v, _ := call(t, mock, base, "GET", "/v1/suppliers/"+mockstorelink.SupplierMadeta, nil)
		if _, has := v["lead_time_days"]; code != 200 || has || v["lead_time_hours"] != 48.0 {
			t.Errorf("supplier: %d %v", code, v)
		}
	})
	t.Run("request-quantity", func(t *testing.T) {
		m, mock, base := member(t, "request-quantity")
		code, v, _ := call(t, mock, base, "POST", "/v1/stores/47/replenishment", order(24))
		detail, _ := v["detail"].([]any)
		if code != 422 || len(detail) != 1 || !strings.Contains(mustJSON(detail), `"loc":["body","quantity"]`) {
			t.Errorf("the contract's body: %d %v", code, v)
		}
		// The key is checked before the body: no key is 401, as at the mock.
		req, _ := http.NewRequest("POST", base+"/v1/stores/47/replenishment", strings.NewReader(mustJSON(order(24))))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 401 {
			t.Errorf("the contract's body without a key: %d, want 401", resp.StatusCode)
		}
		if n := len(m.Orders()); n != len(mock.Orders()) {
			t.Fatalf("orders: %d vs %d", n, len(mock.Orders()))
		}
		before := len(mock.Orders())
		code, v, _ = call(t, mock, base, "POST", "/v1/stores/47/replenishment",
			map[string]any{"sku": mockstorelink.SKUButter, "quantity": 24, "reason": "zoo test"})
		if _, has := v["quantity_units"]; code != 201 || has || v["quantity"] != 24.0 || len(mock.Orders()) != before+1 {
			t.Errorf("the member's body: %d %v", code, v)
		}
	})
	t.Run("problem-errors", func(t *testing.T) {
		_, mock, base := member(t, "problem-errors")
		code, v, h := call(t, mock, base, "GET", "/v1/skus/99999999", nil)
		if code != 404 || v["status"] != 404.0 || v["title"] != "Not Found" || h.Get("Content-Type") != "application/problem+json" {
			t.Errorf("unknown SKU: %d %v %s", code, v, h.Get("Content-Type"))
		}
	})
	t.Run("jsonapi-errors", func(t *testing.T) {
		_, mock, base := member(t, "jsonapi-errors")
		code, v, _ := call(t, mock, base, "GET", "/v1/skus/99999999", nil)
		if errs, _ := v["errors"].([]any); code != 404 || len(errs) != 1 {
			t.Errorf("unknown SKU: %d %v", code, v)
		}
	})
	t.Run("ord-ids", func(t *testing.T) {
		m, mock, base := member(t, "ord-ids")
		code, v, _ := call(t, mock, base, "POST", "/v1/stores/47/replenishment", order(24))
		id, _ := v["order_id"].(string)
		if code != 201 || !regexp.MustCompile(`^ord_[0-9a-f]{10}$`).MatchString(id) {
			t.Fatalf("create: %d %v", code, v)
		}
		if code, v, _ := call(t, mock, base, "GET", "/v1/stores/47/replenishment/"+id, nil); code != 200 || v["order_id"] != id || v["quantity_units"] != 24.0 {
			t.Errorf("read back: %d %v", code, v)
		}
		if code, _, _ := call(t, mock, base, "GET", "/v1/stores/47/replenishment/ord_0000000000", nil); code != 404 {
			t.Errorf("an unknown id: %d", code)
		}
		found := false
		for _, o := range m.Orders() {
			found = found || o["order_id"] == id
		}
		if !found {
			t.Errorf("the member's orders do not hold %s: %v", id, m.Orders())
		}
	})
	t.Run("cursor-no-total", func(t *testing.T) {
		_, mock, base := member(t, "cursor-no-total")
		code, v, _ := call(t, mock, base, "GET", pos, nil)
		if _, has := v["total_count"]; code != 200 || has || v["transactions"] == nil {
			t.Errorf("POS: %d %v", code, v)
		}
	})
	t.Run("local-times", func(t *testing.T) {
		_, mock, base := member(t, "local-times")
		code, v, _ := call(t, mock, base, "GET", inv, nil)
		ts, _ := v["counted_at"].(string)
		if code != 200 || !regexp.MustCompile(`^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$`).MatchString(ts) {
			t.Errorf("inventory: %d %v", code, v)
		}
	})
	t.Run("validates-nothing", func(t *testing.T) {
		m, mock, base := member(t, "validates-nothing")
		before := len(mock.Orders())
		code, v, _ := call(t, mock, base, "POST", "/v1/stores/47/replenishment", order(0))
		id, _ := v["order_id"].(string)
		if code != 201 || id == "" || v["quantity_units"] != 0.0 || len(mock.Orders()) != before {
			t.Fatalf("a zero quantity: %d %v", code, v)
		}
		if code, v, _ := call(t, mock, base, "GET", "/v1/stores/47/replenishment/"+id, nil); code != 200 || v["order_id"] != id {
			t.Errorf("read back: %d %v", code, v)
		}
		if got := m.Orders(); len(got) != before+1 || got[len(got)-1]["order_id"] != id {
			t.Errorf("the member's orders: %v", got)
		}
	})
}

func mustJSON(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}
