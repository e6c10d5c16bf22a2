package foreignstorelink

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

const (
	storeIDPattern = "^[0-9]{1,6}$"
	skuPattern     = "^[0-9]{4,14}$"
	// minPage is D6: a POS page holds at least this many transactions.
	minPage      = 7
	defaultLimit = 200
	maxLimit     = 1000
	cursorTTL    = 15 * time.Minute
)

func digits(s string, lo, hi int) bool {
	if len(s) < lo || len(s) > hi {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

func isStoreID(s string) bool { return digits(s, 1, 6) }
func isSKU(s string) bool     { return digits(s, 4, 14) }

func checkPattern(errs []fieldError, loc []any, v string, ok func(string) bool, pattern string) []fieldError {
	if ok(v) {
		return errs
	}
	return append(errs, fieldError{Loc: loc, Msg: "String should match pattern '" + pattern + "'", Type: "string_pattern_mismatch"})
}

func missing(loc ...any) fieldError {
	return fieldError{Loc: loc, Msg: "Field required", Type: "missing"}
}

// ---- stores ----

// storeSummary is the contract's StoreSummary plus D7's region.
type storeSummary struct {
	StoreID  string `json:"store_id"`
	Name     string `json:"name"`
	Timezone string `json:"timezone"`
	Region   string `json:"region"`
}

func (s *Server) listStores(q *request) {
	ids := append([]string(nil), s.world.storeIDs...)
	// D7: descending store_id (numerically), not ascending.
	sort.Slice(ids, func(i, j int) bool {
		a, _ := strconv.Atoi(ids[i])
		b, _ := strconv.Atoi(ids[j])
		return a > b
	})
	list := make([]storeSummary, 0, len(ids))
	for _, id := range ids {
		st := s.world.stores[id]
		list = append(list, storeSummary{st.ID, st.Name, st.Timezone, st.Region})
	}
	writeJSON(q.w, http.StatusOK, map[string]any{"stores": list})
}

// openStore validates the path, checks the key's scope and finds the store;
// it answers the request itself and returns nil when it cannot go on.
func (s *Server) openStore(q *request, keyStore string) *store {
	if q.invalid() || q.forbidden(keyStore) {
		return nil
	}
	st, ok := s.world.stores[q.rt.storeID]
	if !ok {
		writeDetail(q.w, http.StatusNotFound, "Store "+q.rt.storeID+" not found")
		return nil
	}
	return st
}

func (s *Server) getStore(q *request, keyStore string) {
	st := s.openStore(q, keyStore)
	if st == nil {
		return
	}
	writeJSON(q.w, http.StatusOK, struct {
		StoreID      string      `json:"store_id"`
		Name         string      `json:"name"`
		Timezone     string      `json:"timezone"`
		OpeningHours weeklyHours `json:"opening_hours"`
	}{st.ID, st.Name, st.Timezone, st.Hours})
}

// ---- stock ----

// querySKU validates the required sku query parameter.
func (q *request) querySKU() string {
	vals, ok := q.r.URL.Query()["sku"]
	if !ok || len(vals) == 0 {
		q.errs = append(q.errs, missing("query", "sku"))
		return ""
	}
	q.errs = checkPattern(q.errs, []any{"query", "sku"}, vals[0], isSKU, skuPattern)
	return vals[0]
}

func (s *Server) getInventory(q *request, keyStore string) {
	code := q.querySKU()
	st := s.openStore(q, keyStore)
	if st == nil {
		return
	}
	if _, ok := s.world.skus[code]; !ok {
		writeDetail(q.w, http.StatusNotFound, "SKU "+code+" not found")
		return
	}
	writeJSON(q.w, http.StatusOK, struct {
		StoreID   string    `json:"store_id"`
		SKU       string    `json:"sku"`
		OnHand    int64     `json:"on_hand"` // D3
		CountedAt time.Time `json:"counted_at"`
	}{st.ID, code, s.world.onHand[[2]string{st.ID, code}], countedAt(st, q.now)})
}

// cursor is the position after the last transaction of a page, bound to the
// store, SKU and since of its query.
type cursor struct {
	store, sku string
	since      int64 // unix nanoseconds
	lastAt     int64 // unix nanoseconds
	lastID     string
	issued     int64 // unix seconds
}

// cursorMAC keys the cursors' integrity check. It is a fixture, not a secret:
// it only stops a client from making up a cursor by accident.
var cursorMAC = []byte("foreignstorelink cursor v1")

func (c cursor) encode() string {
	payload := fmt.Sprintf("%s|%s|%d|%d|%s|%d", c.store, c.sku, c.since, c.lastAt, c.lastID, c.issued)
	m := hmac.New(sha256.New, cursorMAC)
	m.Write([]byte(payload))
	return base64.RawURLEncoding.EncodeToString(append([]byte(payload), m.Sum(nil)[:12]...))
}

func decodeCursor(s string) (cursor, bool) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(raw) <= 12 {
		return cursor{}, false
	}
	payload, sum := raw[:len(raw)-12], raw[len(raw)-12:]
	m := hmac.New(sha256.New, cursorMAC)
	m.Write(payload)
	if !hmac.Equal(sum, m.Sum(nil)[:12]) {
		return cursor{}, false
	}
	f := strings.Split(string(payload), "|")
	if len(f) != 6 {
		return cursor{}, false
	}
	c := cursor{store: f[0], sku: f[1], lastID: f[4]}
	var errs [3]error
	c.since, errs[0] = strconv.ParseInt(f[2], 10, 64)
	c.lastAt, errs[1] = strconv.ParseInt(f[3], 10, 64)
	c.issued, errs[2] = strconv.ParseInt(f[5], 10, 64)
	return c, errors.Join(errs[:]...) == nil
}

func (s *Server) listPOS(q *request, keyStore string) {
	query := q.r.URL.Query()
	code := q.querySKU()

	var since time.Time
	sinceRaw, hasSince := "", false
	if v, ok := query["since"]; ok && len(v) > 0 {
		sinceRaw, hasSince = v[0], true
	}
	if !hasSince {
		q.errs = append(q.errs, missing("query", "since"))
	} else if t, err := time.Parse(time.RFC3339, sinceRaw); err != nil {
		q.errs = append(q.errs, fieldError{Loc: []any{"query", "since"},
			Msg: "Input should be a valid datetime with a timezone offset", Type: "datetime_parsing"})
	} else {
		since = t
	}

	limit := defaultLimit
	if v, ok := query["limit"]; ok && len(v) > 0 {
		n, err := strconv.Atoi(v[0])
		switch {
		case err != nil:
			q.errs = append(q.errs, fieldError{Loc: []any{"query", "limit"},
				Msg: "Input should be a valid integer, unable to parse string as an integer", Type: "int_parsing"})
		case n < 1:
			q.errs = append(q.errs, fieldError{Loc: []any{"query", "limit"},
				Msg: "Input should be greater than or equal to 1", Type: "greater_than_equal"})
		case n > maxLimit:
			q.errs = append(q.errs, fieldError{Loc: []any{"query", "limit"},
				Msg: "Input should be less than or equal to 1000", Type: "less_than_equal"})
		default:
			limit = n
		}
	}
	limit = max(limit, minPage) // D6

	var after *cursor
	if v, ok := query["cursor"]; ok && len(v) > 0 {
		switch c, ok := decodeCursor(v[0]); {
		case v[0] == "":
			q.errs = append(q.errs, fieldError{Loc: []any{"query", "cursor"},
				Msg: "String should have at least 1 character", Type: "string_too_short"})
		case len(v[0]) > 256:
			q.errs = append(q.errs, fieldError{Loc: []any{"query", "cursor"},
				Msg: "String should have at most 256 characters", Type: "string_too_long"})
		case !ok || c.store != q.rt.storeID || c.sku != code || (hasSince && c.since != since.UnixNano()):
			q.errs = append(q.errs, fieldError{Loc: []any{"query", "cursor"},
				Msg: "Value error, the cursor was not issued for this query", Type: "value_error"})
		case q.now.Unix()-c.issued > int64(cursorTTL/time.Second):
			q.errs = append(q.errs, fieldError{Loc: []any{"query", "cursor"},
				Msg: "Value error, the cursor has expired", Type: "value_error"})
		default:
			after = &c
		}
	}

	st := s.openStore(q, keyStore)
	if st == nil {
		return
	}
	k, ok := s.world.skus[code]
	if !ok {
		writeDetail(q.w, http.StatusNotFound, "SKU "+code+" not found")
		return
	}
	var matching []txn
	for _, t := range history(st, k, q.now) {
		if !t.At.Before(since) {
			matching = append(matching, t)
		}
	}
	start := 0
	if after != nil {
		last := txn{ID: after.lastID, At: time.Unix(0, after.lastAt)}
		start = sort.Search(len(matching), func(i int) bool { return newer(last, matching[i]) })
	}
	end := min(start+limit, len(matching))
	page := append(make([]txn, 0, end-start), matching[start:end]...)
	body := struct {
		StoreID      string `json:"store_id"`
		SKU          string `json:"sku"`
		Since        string `json:"since"`
		Transactions []txn  `json:"transactions"`
		TotalCount   int    `json:"total_count"`
		NextCursor   string `json:"next_cursor,omitempty"`
	}{StoreID: st.ID, SKU: code, Since: sinceRaw, Transactions: page, TotalCount: len(matching)}
	if end < len(matching) {
		last := matching[end-1]
		body.NextCursor = cursor{store: st.ID, sku: code, since: since.UnixNano(),
			lastAt: last.At.UnixNano(), lastID: last.ID, issued: q.now.Unix()}.encode()
	}
	writeJSON(q.w, http.StatusOK, body)
}

// ---- replenishment ----

// orderRequest is the contract's OrderRequest, validated by hand.
type orderRequest struct {
	sku      string
	quantity int64
	reason   string
}

// readOrderRequest reads and validates the POST body; ok is false when it
// has answered (413) itself.
func (q *request) readOrderRequest() (orderRequest, bool) {
	body, err := io.ReadAll(http.MaxBytesReader(q.w, q.r.Body, MaxBodyBytes))
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			writeDetail(q.w, http.StatusRequestEntityTooLarge, "Request body too large")
			return orderRequest{}, false
		}
		q.errs = append(q.errs, fieldError{Loc: []any{"body"}, Msg: "Could not read the request body", Type: "body_read"})
		return orderRequest{}, true
	}
	var req orderRequest
	if len(bytes.TrimSpace(body)) == 0 {
		q.errs = append(q.errs, missing("body"))
		return req, true
	}
	if !json.Valid(body) {
		q.errs = append(q.errs, fieldError{Loc: []any{"body", 0}, Msg: "JSON decode error", Type: "json_invalid"})
		return req, true
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(body, &fields); err != nil || fields == nil {
		q.errs = append(q.errs, fieldError{Loc: []any{"body"},
			Msg: "Input should be a valid dictionary or object to extract fields from", Type: "model_attributes_type"})
		return req, true
	}

	if raw, ok := fields["sku"]; !ok {
		q.errs = append(q.errs, missing("body", "sku"))
	} else if err := json.Unmarshal(raw, &req.sku); err != nil || raw[0] != '"' {
		q.errs = append(q.errs, fieldError{Loc: []any{"body", "sku"}, Msg: "Input should be a valid string", Type: "string_type"})
	} else {
		q.errs = checkPattern(q.errs, []any{"body", "sku"}, req.sku, isSKU, skuPattern)
	}

	if raw, ok := fields["quantity_units"]; !ok {
		q.errs = append(q.errs, missing("body", "quantity_units"))
	} else if fe, n := integer(raw); fe != nil {
		fe.Loc = []any{"body", "quantity_units"}
		q.errs = append(q.errs, *fe)
	} else {
		req.quantity = n
	}

	if raw, ok := fields["reason"]; !ok {
		q.errs = append(q.errs, missing("body", "reason"))
	} else if err := json.Unmarshal(raw, &req.reason); err != nil || raw[0] != '"' {
		q.errs = append(q.errs, fieldError{Loc: []any{"body", "reason"}, Msg: "Input should be a valid string", Type: "string_type"})
	} else if n := utf8.RuneCountInString(req.reason); n < 1 {
		q.errs = append(q.errs, fieldError{Loc: []any{"body", "reason"}, Msg: "String should have at least 1 character", Type: "string_too_short"})
	} else if n > 500 {
		q.errs = append(q.errs, fieldError{Loc: []any{"body", "reason"}, Msg: "String should have at most 500 characters", Type: "string_too_long"})
	}

	var extra []string
	for name := range fields {
		if name != "sku" && name != "quantity_units" && name != "reason" {
			extra = append(extra, name)
		}
	}
	sort.Strings(extra)
	for _, name := range extra {
		q.errs = append(q.errs, fieldError{Loc: []any{"body", name}, Msg: "Extra inputs are not permitted", Type: "extra_forbidden"})
	}
	return req, true
}

// integer reads a JSON integer in 1..100000 (an integral number such as 24.0
// counts, as in JSON Schema).
func integer(raw json.RawMessage) (*fieldError, int64) {
	if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
		return &fieldError{Msg: "Input should be a valid integer", Type: "int_type"}, 0
	}
	f, err := strconv.ParseFloat(string(raw), 64)
	if n, ierr := strconv.ParseInt(string(raw), 10, 64); ierr == nil {
		f, err = float64(n), nil
	}
	switch {
	case err != nil && !errors.Is(err, strconv.ErrRange):
		return &fieldError{Msg: "Input should be a valid integer", Type: "int_type"}, 0
	case err == nil && f != math.Trunc(f):
		return &fieldError{Msg: "Input should be a valid integer, got a number with a fractional part", Type: "int_from_float"}, 0
	case f < 1:
		return &fieldError{Msg: "Input should be greater than or equal to 1", Type: "greater_than_equal"}, 0
	case f > 100000 || err != nil:
		return &fieldError{Msg: "Input should be less than or equal to 100000", Type: "less_than_equal"}, 0
	}
	return nil, int64(f)
}

func (s *Server) createOrder(q *request, keyStore string) {
	req, ok := q.readOrderRequest()
	if !ok {
		return
	}
	st := s.openStore(q, keyStore)
	if st == nil {
		return
	}
	k, ok := s.world.skus[req.sku]
	if !ok {
		writeDetail(q.w, http.StatusNotFound, "SKU "+req.sku+" not found")
		return
	}
	sup := s.world.suppliers[k.SupplierID]
	if req.quantity < int64(sup.MinOrderQty) {
		writeDetail(q.w, http.StatusUnprocessableEntity, fmt.Sprintf(
			"Quantity %d is below the supplier's minimum order of %d units", req.quantity, sup.MinOrderQty))
		return
	}
	created := q.now.In(st.loc).Truncate(time.Second)
	days := sup.LeadTimeDays
	if created.Hour()*60+created.Minute() >= minutes(sup.Cutoff) {
		days++
	}
	o := Order{
		StoreID:          st.ID,
		SKU:              k.SKU,
		Quantity:         req.quantity,
		Reason:           req.reason,
		Status:           StatusPending,
		CreatedAt:        created,
		ExpectedDelivery: time.Date(created.Year(), created.Month(), created.Day()+days, 6, 0, 0, 0, st.loc),
	}
	s.mu.Lock()
	for o.OrderID == "" || s.ids[o.OrderID] {
		s.seq++
		sum := sha256.Sum256(fmt.Appendf(nil, "rpl|%s|%d", st.ID, s.seq))
		o.OrderID = "rpl_" + hex.EncodeToString(sum[:5])
	}
	s.ids[o.OrderID] = true
	s.orders = append(s.orders, o)
	s.mu.Unlock()
	writeJSON(q.w, http.StatusCreated, o)
}

func (s *Server) getOrder(q *request, keyStore string) {
	if len(q.rt.id) > 64 {
		q.errs = append(q.errs, fieldError{Loc: []any{"path", "order_id"},
			Msg: "String should have at most 64 characters", Type: "string_too_long"})
	}
	st := s.openStore(q, keyStore)
	if st == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, o := range s.orders {
		if o.OrderID == q.rt.id && o.StoreID == st.ID {
			writeJSON(q.w, http.StatusOK, o)
			return
		}
	}
	writeDetail(q.w, http.StatusNotFound, "Order "+q.rt.id+" not found")
}

// ---- catalogue ----

func (s *Server) getSKU(q *request) {
	if q.invalid() {
		return
	}
	k, ok := s.world.skus[q.rt.id]
	if !ok {
		writeDetail(q.w, http.StatusNotFound, "SKU "+q.rt.id+" not found")
		return
	}
	writeJSON(q.w, http.StatusOK, struct {
		SKU        string `json:"sku"`
		Name       string `json:"name"`
		Brand      string `json:"brand"` // D8
		Category   string `json:"category"`
		SupplierID string `json:"supplier_id"` // D4 id shape
		Unit       string `json:"unit"`
		CasePack   int    `json:"case_pack"`
		Chilled    bool   `json:"chilled"`
		ShelfLife  int    `json:"shelf_life_days"`
	}{k.SKU, k.Name, k.Brand, k.Category, k.SupplierID, k.Unit, k.CasePack, k.Chilled, k.ShelfLife})
}

func (s *Server) getSupplier(q *request) {
	if len(q.rt.id) > 64 {
		q.errs = append(q.errs, fieldError{Loc: []any{"path", "supplier_id"},
			Msg: "String should have at most 64 characters", Type: "string_too_long"})
	}
	if q.invalid() {
		return
	}
	sp, ok := s.world.suppliers[q.rt.id]
	if !ok {
		writeDetail(q.w, http.StatusNotFound, "Supplier "+q.rt.id+" not found")
		return
	}
	writeJSON(q.w, http.StatusOK, struct {
		SupplierID   string `json:"supplier_id"`
		Name         string `json:"name"`
		LeadTimeDays int    `json:"lead_time_days"`
		Cutoff       string `json:"order_cutoff_local"`
		MinOrderQty  int    `json:"min_order_qty"` // D4
		ContactEmail string `json:"contact_email"` // D4
	}{sp.ID, sp.Name, sp.LeadTimeDays, sp.Cutoff, sp.MinOrderQty, sp.ContactEmail})
}
