// Package foreignstorelink is a StoreLink double that departs from the
// contract (openapi/storelink.yaml) on purpose, so tests of the contract
// checker and the MCP server meet drift they did not write. It uses the
// standard library only and must not import this repository.
//
// It serves the contract's eight endpoints with key header
// X-Korral-Store-Key and conforms except for these departures:
//
//   - D1 every error body is {"detail": "<text>"}; never 429.
//   - D2 validation errors (bad store_id, sku, limit, since, cursor or POST
//     body) are 422 with {"detail": [{"loc", "msg", "type"}]}; never 400.
//   - D3 inventory: on_hand instead of on_hand_units.
//   - D4 supplier: ids "sup_" + 8 hex, min_order_qty instead of
//     minimum_order_units, extra contact_email.
//   - D5 orders: ids "rpl_" + 10 hex; quantity, created_at and
//     expected_delivery instead of quantity_units, submitted_at and
//     expected_arrival; statuses pending..cancelled (new orders stay
//     pending); below min_order_qty is 422, case pack not enforced.
//   - D6 POS pages: a limit below 7 returns 7 transactions when that many
//     remain.
//   - D7 GET /v1/stores lists stores by descending store_id, with extra
//     region.
//   - D8 SKU: extra brand.
//
// Stores 47 and 102 have keys ([DefaultKeys]); 55 and 61 (Europe/Vienna,
// closed Sunday) have none. SKUs 8847291 and 8801111 come from suppliers
// sup_5a1c9e02 and sup_c3f07b19. Sales history covers the 28 days before
// [Options.Now] and depends only on the date. Orders live in memory. Bodies
// over 64 KiB are 413; the server is safe for concurrent use and never
// echoes a key.
package foreignstorelink

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// KeyHeader is the request header that carries the store key.
const KeyHeader = "X-Korral-Store-Key"

// MaxBodyBytes is the largest request body the double reads; larger is 413.
const MaxBodyBytes = 64 << 10

// Order statuses (D5: not the contract's vocabulary).
const (
	StatusPending = "pending"
)

// DefaultKeys maps store id to key for the stores a fresh double opens: 47 and
// 102. The keys are fixtures, not secrets.
var DefaultKeys = map[string]string{
	"47":  "foreign-key-47-4f1c2a9e7b3d5e60",
	"102": "foreign-key-102-8b2e6d0c1a9f7354",
}

// DefaultNow is a convenient fixed clock: Friday 27 November 2026, 14:30 in
// Prague (every store open, after the suppliers' 14:00 cut-off).
func DefaultNow() time.Time {
	return time.Date(2026, time.November, 27, 14, 30, 0, 0, mustZone("Europe/Prague"))
}

// Options configures a [Server].
type Options struct {
	// Now is the double's clock; nil means time.Now.
	Now func() time.Time
	// Keys maps store id to key; nil means DefaultKeys. A store without a key
	// cannot be opened on its store paths by anyone.
	Keys map[string]string
}

// Order is a replenishment order as the double holds it. Its JSON encoding is
// the double's order body (D5).
type Order struct {
	OrderID          string    `json:"order_id"`
	StoreID          string    `json:"store_id"`
	SKU              string    `json:"sku"`
	Quantity         int64     `json:"quantity"`
	Reason           string    `json:"reason"`
	Status           string    `json:"status"`
	CreatedAt        time.Time `json:"created_at"`
	ExpectedDelivery time.Time `json:"expected_delivery"`
}

// Server is the foreign StoreLink double; it is an [http.Handler].
type Server struct {
	now      func() time.Time
	storeOf  map[string]string // key -> store id
	world    *world
	requests atomic.Int64

	mu     sync.Mutex
	orders []Order
	ids    map[string]bool
	seq    uint64
}

// New returns a double with the given options.
func New(opts Options) *Server {
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	keys := opts.Keys
	if keys == nil {
		keys = DefaultKeys
	}
	s := &Server{now: now, storeOf: map[string]string{}, world: newWorld(), ids: map[string]bool{}}
	for storeID, key := range keys {
		if key != "" {
			s.storeOf[key] = storeID
		}
	}
	return s
}

// Orders returns a copy of the orders the double holds, oldest first.
func (s *Server) Orders() []Order {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Order(nil), s.orders...)
}

// Requests returns how many requests the double has received, whatever their
// outcome.
func (s *Server) Requests() int { return int(s.requests.Load()) }

// route is one of the eight endpoints, with the ids taken from its path.
type route struct {
	name     string // operation, e.g. "getStore"
	method   string
	storeID  string // store paths only
	id       string // sku, supplier id or order id
	scoped   bool   // needs the key of storeID
	pathErrs []fieldError
}

// match finds the endpoint of a path; ok is false for an unknown path.
func match(path string) (route, bool) {
	if !strings.HasPrefix(path, "/") {
		return route{}, false
	}
	raw := strings.Split(path[1:], "/")
	seg := make([]string, len(raw))
	for i, r := range raw {
		v, err := url.PathUnescape(r)
		if err != nil || v == "" {
			return route{}, false
		}
		seg[i] = v
	}
	if len(seg) < 2 || seg[0] != "v1" {
		return route{}, false
	}
	switch {
	case seg[1] == "stores" && len(seg) == 2:
		return route{name: "listStores", method: http.MethodGet}, true
	case seg[1] == "skus" && len(seg) == 3:
		rt := route{name: "getSKU", method: http.MethodGet, id: seg[2]}
		rt.pathErrs = checkPattern(rt.pathErrs, []any{"path", "sku"}, seg[2], isSKU, skuPattern)
		return rt, true
	case seg[1] == "suppliers" && len(seg) == 3:
		return route{name: "getSupplier", method: http.MethodGet, id: seg[2]}, true
	case seg[1] != "stores" || len(seg) > 5:
		return route{}, false
	}
	rt := route{storeID: seg[2], scoped: true}
	rt.pathErrs = checkPattern(nil, []any{"path", "store_id"}, seg[2], isStoreID, storeIDPattern)
	switch {
	case len(seg) == 3:
		rt.name, rt.method = "getStore", http.MethodGet
	case len(seg) == 4 && seg[3] == "inventory":
		rt.name, rt.method = "getInventory", http.MethodGet
	case len(seg) == 4 && seg[3] == "pos":
		rt.name, rt.method = "listPOSTransactions", http.MethodGet
	case len(seg) == 4 && seg[3] == "replenishment":
		rt.name, rt.method = "createReplenishmentOrder", http.MethodPost
	case len(seg) == 5 && seg[3] == "replenishment":
		rt.name, rt.method, rt.id = "getReplenishmentOrder", http.MethodGet, seg[4]
	default:
		return route{}, false
	}
	return rt, true
}

// ServeHTTP answers one request.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.requests.Add(1)
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			writeDetail(w, http.StatusInternalServerError, "Internal Server Error")
		}
	}()
	rt, ok := match(r.URL.EscapedPath())
	if !ok {
		writeDetail(w, http.StatusNotFound, "Not Found")
		return
	}
	if r.Method != rt.method {
		w.Header().Set("Allow", rt.method)
		writeDetail(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if r.ContentLength > MaxBodyBytes {
		writeDetail(w, http.StatusRequestEntityTooLarge, "Request body too large")
		return
	}
	key := r.Header.Get(KeyHeader)
	if key == "" {
		writeDetail(w, http.StatusUnauthorized, "Not authenticated: the "+KeyHeader+" header is missing")
		return
	}
	keyStore, ok := s.storeOf[key]
	if !ok {
		writeDetail(w, http.StatusUnauthorized, "Invalid store key")
		return
	}
	req := &request{w: w, r: r, rt: rt, now: s.now(), errs: rt.pathErrs}
	switch rt.name {
	case "listStores":
		s.listStores(req)
	case "getStore":
		s.getStore(req, keyStore)
	case "getInventory":
		s.getInventory(req, keyStore)
	case "listPOSTransactions":
		s.listPOS(req, keyStore)
	case "createReplenishmentOrder":
		s.createOrder(req, keyStore)
	case "getReplenishmentOrder":
		s.getOrder(req, keyStore)
	case "getSKU":
		s.getSKU(req)
	case "getSupplier":
		s.getSupplier(req)
	}
}

// request carries one request through its handler.
type request struct {
	w    http.ResponseWriter
	r    *http.Request
	rt   route
	now  time.Time
	errs []fieldError
}

// invalid answers 422 (D2) when validation found anything; it reports
// whether it did.
func (q *request) invalid() bool {
	if len(q.errs) == 0 {
		return false
	}
	writeJSON(q.w, http.StatusUnprocessableEntity, validationBody{Detail: q.errs})
	return true
}

// forbidden answers 403 when the key does not open the path's store; as in
// the contract, that includes store ids that do not exist.
func (q *request) forbidden(keyStore string) bool {
	if keyStore == q.rt.storeID {
		return false
	}
	writeDetail(q.w, http.StatusForbidden, "This key does not open store "+q.rt.storeID)
	return true
}

// fieldError is one FastAPI/pydantic validation error (D2).
type fieldError struct {
	Loc  []any  `json:"loc"`
	Msg  string `json:"msg"`
	Type string `json:"type"`
}

type validationBody struct {
	Detail []fieldError `json:"detail"`
}

type detailBody struct {
	Detail string `json:"detail"`
}

// writeDetail writes D1's error body.
func writeDetail(w http.ResponseWriter, status int, text string) {
	writeJSON(w, status, detailBody{Detail: text})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		body = []byte(`{"detail":"Internal Server Error"}`)
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(body, '\n'))
}
