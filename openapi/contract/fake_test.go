package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// fake is a small conformant StoreLink; tests break it with rewrite.
type fake struct {
	keys map[string]string // store id -> key

	mu       sync.Mutex
	requests []string // "METHOD /path?query", in order
	orders   map[string]map[string]any
	seq      int
}

const (
	fakeSKU      = "8847291"
	fakeSupplier = "SUP-MADETA"
	fakeOrder    = "RO-47-000123"
	// fakeMinimum is the fake supplier's minimum order.
	fakeMinimum = 12
)

func newFake() *fake {
	return &fake{
		keys: map[string]string{"47": "slk_47_0123456789abcdef", "102": "slk_102_fedcba9876543210"},
		orders: map[string]map[string]any{fakeOrder: {
			"order_id": fakeOrder, "store_id": "47", "sku": fakeSKU, "quantity_units": 24,
			"reason": "restock", "status": "acknowledged",
			"submitted_at": "2026-11-26T10:00:00+01:00", "expected_arrival": "2026-11-28T06:00:00+01:00",
		}},
	}
}

// serve starts the fake on a loopback port.
func (f *fake) serve(t *testing.T, wrap ...func(http.Handler) http.Handler) *httptest.Server {
	t.Helper()
	var h http.Handler = f
	for _, w := range wrap {
		h = w(h)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

func (f *fake) sent() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.requests...)
}

func (f *fake) count(prefix string) int {
	n := 0
	for _, r := range f.sent() {
		if strings.HasPrefix(r, prefix) {
			n++
		}
	}
	return n
}

var (
	fakeSKUPattern   = regexp.MustCompile(`^[0-9]{4,14}$`)
	fakeStorePattern = regexp.MustCompile(`^[0-9]{1,6}$`)
	fakeIDPattern    = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,31}$`)
	fakeOrderPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,63}$`)
)

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeErr(w http.ResponseWriter, status int, code string) {
	writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": "fake says " + code}})
}

var hours = map[string]any{
	"monday":    map[string]any{"closed": false, "opens": "07:00", "closes": "22:00"},
	"tuesday":   map[string]any{"closed": false, "opens": "07:00", "closes": "22:00"},
	"wednesday": map[string]any{"closed": false, "opens": "07:00", "closes": "22:00"},
	"thursday":  map[string]any{"closed": false, "opens": "07:00", "closes": "22:00"},
	"friday":    map[string]any{"closed": false, "opens": "07:00", "closes": "22:00"},
	"saturday":  map[string]any{"closed": false, "opens": "08:00", "closes": "20:00"},
	"sunday":    map[string]any{"closed": true},
}

func (f *fake) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests = append(f.requests, r.Method+" "+r.URL.RequestURI())
	f.mu.Unlock()

	keyStore := ""
	for s, k := range f.keys {
		if k == r.Header.Get("X-Korral-Store-Key") {
			keyStore = s
		}
	}
	if keyStore == "" {
		writeErr(w, http.StatusUnauthorized, "invalid_key")
		return
	}
	parts := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	switch {
	case r.URL.Path == "/v1/stores" && r.Method == http.MethodGet:
		writeJSON(w, 200, map[string]any{"stores": []any{
			map[string]any{"store_id": "47", "name": "Praha Smíchov", "timezone": "Europe/Prague"},
			map[string]any{"store_id": "102", "name": "Brno Královo Pole", "timezone": "Europe/Prague"},
		}})
	case len(parts) == 3 && parts[1] == "skus" && r.Method == http.MethodGet:
		switch {
		case !fakeSKUPattern.MatchString(parts[2]):
			writeErr(w, 400, "invalid_parameter")
		case parts[2] != fakeSKU:
			writeErr(w, 404, "not_found")
		default:
			writeJSON(w, 200, map[string]any{"sku": fakeSKU, "name": "Madeta butter 250g", "category": "dairy",
				"supplier_id": fakeSupplier, "unit": "piece", "case_pack": 12, "chilled": true, "shelf_life_days": 30})
		}
	case len(parts) == 3 && parts[1] == "suppliers" && r.Method == http.MethodGet:
		if !fakeIDPattern.MatchString(parts[2]) {
			writeErr(w, 400, "invalid_parameter")
			return
		}
		if parts[2] != fakeSupplier {
			writeErr(w, 404, "not_found")
			return
		}
		writeJSON(w, 200, map[string]any{"supplier_id": fakeSupplier, "name": "Madeta a.s.", "lead_time_days": 2,
			"order_cutoff_local": "14:00", "minimum_order_units": fakeMinimum})
	case len(parts) >= 3 && parts[1] == "stores":
		f.serveStore(w, r, parts[2:], keyStore, q)
	default:
		writeErr(w, 404, "not_found")
	}
}

// serveStore serves /v1/stores/{store_id}/...: parameters first, then the
// key's scope, then existence, as StoreLink does.
func (f *fake) serveStore(w http.ResponseWriter, r *http.Request, parts []string, keyStore string, q map[string][]string) {
	store := parts[0]
	get := func(k string) string { return firstValue(q, k) }
	if !storeParamsValid(parts, q) {
		writeErr(w, 400, "invalid_parameter")
		return
	}
	if store != keyStore {
		writeErr(w, 403, "store_forbidden")
		return
	}
	switch sub := strings.Join(parts[1:], "/"); {
	case sub == "" && r.Method == http.MethodGet:
		writeJSON(w, 200, map[string]any{"store_id": store, "name": "Praha Smíchov", "timezone": "Europe/Prague", "opening_hours": hours})
	case sub == "inventory" && r.Method == http.MethodGet:
		if get("sku") != fakeSKU {
			writeErr(w, 404, "not_found")
			return
		}
		writeJSON(w, 200, map[string]any{"store_id": store, "sku": fakeSKU, "on_hand_units": -3, "counted_at": "2026-11-27T06:30:00+01:00"})
	case sub == "pos" && r.Method == http.MethodGet:
		f.servePOS(w, store, get("sku"), get("since"), get("limit"), get("cursor"))
	case sub == "replenishment" && r.Method == http.MethodPost:
		f.raiseOrder(w, r, store)
	case len(parts) == 3 && parts[1] == "replenishment" && r.Method == http.MethodGet:
		f.readOrder(w, store, parts[2])
	default:
		writeErr(w, 404, "not_found")
	}
}

// firstValue is the first value of the query parameter k, or "".
func firstValue(q map[string][]string, k string) string {
	if v := q[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

// storeParamsValid checks the store id, the order id and the query
// parameters of a store's path before the key's scope, as StoreLink does.
func storeParamsValid(parts []string, q map[string][]string) bool {
	get := func(k string) string { return firstValue(q, k) }
	if !fakeStorePattern.MatchString(parts[0]) {
		return false
	}
	if len(parts) == 3 && parts[1] == "replenishment" && !fakeOrderPattern.MatchString(parts[2]) {
		return false
	}
	switch sub := strings.Join(parts[1:], "/"); {
	case sub == "inventory" && !fakeSKUPattern.MatchString(get("sku")):
		return false
	case sub == "pos":
		limit := 200
		if s := get("limit"); s != "" {
			limit, _ = strconv.Atoi(s)
		}
		_, hasCursor := q["cursor"]
		badCursor := hasCursor && (get("cursor") == "" || len(get("cursor")) > 256)
		if _, err := time.Parse(time.RFC3339, get("since")); err != nil || !fakeSKUPattern.MatchString(get("sku")) || limit < 1 || limit > 1000 || badCursor {
			return false
		}
	}
	return true
}

// raiseOrder serves POST /v1/stores/{store_id}/replenishment.
func (f *fake) raiseOrder(w http.ResponseWriter, r *http.Request, store string) {
	var req struct {
		SKU      string `json:"sku"`
		Quantity int64  `json:"quantity_units"`
		Reason   string `json:"reason"`
	}
	if r.Header.Get("Content-Type") != "application/json" {
		writeErr(w, 400, "invalid_body")
		return
	}
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil || req.Quantity < 1 || req.Quantity > 100000 || req.Reason == "" || len(req.Reason) > 500 || !fakeSKUPattern.MatchString(req.SKU) {
		writeErr(w, 400, "invalid_body")
		return
	}
	if req.SKU == fakeSKU && req.Quantity < fakeMinimum {
		writeErr(w, 422, "below_minimum_order")
		return
	}
	f.mu.Lock()
	f.seq++
	id := fmt.Sprintf("RO-%s-%06d", store, 500+f.seq)
	o := map[string]any{"order_id": id, "store_id": store, "sku": req.SKU, "quantity_units": req.Quantity,
		"reason": req.Reason, "status": "submitted",
		"submitted_at": "2026-11-27T14:30:00+01:00", "expected_arrival": "2026-11-29T06:00:00+01:00"}
	f.orders[id] = o
	f.mu.Unlock()
	writeJSON(w, 201, o)
}

// readOrder serves GET /v1/stores/{store_id}/replenishment/{order_id}.
func (f *fake) readOrder(w http.ResponseWriter, store, id string) {
	f.mu.Lock()
	o, ok := f.orders[id]
	f.mu.Unlock()
	if !ok || o["store_id"] != store {
		writeErr(w, 404, "not_found")
		return
	}
	writeJSON(w, 200, o)
}

// servePOS pages through 25 transactions; the cursor is the offset.
func (f *fake) servePOS(w http.ResponseWriter, store, sku, since, limitS, cursor string) {
	if sku != fakeSKU {
		writeErr(w, 404, "not_found")
		return
	}
	const total = 25
	limit := 200
	if limitS != "" {
		limit, _ = strconv.Atoi(limitS)
	}
	offset := 0
	if cursor != "" {
		offset, _ = strconv.Atoi(strings.TrimPrefix(cursor, "o"))
	}
	txs := []any{}
	for i := offset; i < total && i < offset+limit; i++ {
		txs = append(txs, map[string]any{"transaction_id": fmt.Sprintf("T-%s-%04d", store, i),
			"timestamp": "2026-11-27T10:14:07+01:00", "units": 1 + i%3})
	}
	page := map[string]any{"store_id": store, "sku": sku, "since": since, "transactions": txs, "total_count": total}
	if offset+limit < total {
		page["next_cursor"] = "o" + strconv.Itoa(offset+limit)
	}
	writeJSON(w, 200, page)
}

// rewrite lets edit replace the status and body of the fake's answers to
// the requests match selects.
func rewrite(match func(*http.Request) bool, edit func(status int, body map[string]any) (int, any)) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if !match(r) {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var body map[string]any
			dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			dec.UseNumber()
			_ = dec.Decode(&body)
			status, out := edit(rec.Code, body)
			if raw, ok := out.([]byte); ok {
				w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
				w.WriteHeader(status)
				_, _ = w.Write(raw)
				return
			}
			writeJSON(w, status, out)
		})
	}
}
