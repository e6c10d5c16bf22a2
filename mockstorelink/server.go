package mockstorelink

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/korral/storelink/mockstorelink/internal/api"
)

// DefaultSeed is the seed used when [Options.Seed] is zero.
const DefaultSeed int64 = 47102

// maxRequestBody bounds what the mock reads from a request body.
const maxRequestBody = 1 << 20

// maxErrorMessage keeps error messages under the contract's limit.
const maxErrorMessage = 500

// Options configure a [Server].
type Options struct {
	Now                  func() time.Time // nil = time.Now
	Seed                 int64            // 0 = DefaultSeed
	AdminToken           string           // "" = admin endpoint disabled
	NoResponseValidation bool             // skip checking the mock's own responses (load runs)
	Logger               *slog.Logger     // nil = discard
	// MaxRequestLog bounds the request log: 0 is DefaultMaxRequestLog, a
	// negative value keeps none.
	MaxRequestLog int
	// Stores and SKUs grow the fixture world with generated stores and
	// SKUs derived from the seed. 0 keeps the fixture sizes; otherwise
	// Stores is in FixtureStores..MaxStores and SKUs in
	// FixtureSKUs..MaxSKUs.
	Stores, SKUs int
}

// DefaultMaxRequestLog is how many recent requests the mock keeps by
// default.
const DefaultMaxRequestLog = 10000

// DefaultNow is the fixed instant the tests run at, when every store is
// open.
func DefaultNow() time.Time {
	return time.Date(2026, time.November, 27, 14, 30, 0, 0, pragueLocation())
}

// RequestRecord is one request the mock received on the API (admin calls are
// not recorded). It never holds the store key.
type RequestRecord struct {
	Method      string
	Path        string
	OperationID string    // "" when the path or method is not in the contract
	StoreID     string    // from the path; "" for chain-wide reads
	Status      int       // 0 while unanswered, and when the client left first
	At          time.Time // the mock's clock (Options.Now) on arrival
}

// Server is a mock StoreLink. It is an http.Handler; use [Start] to serve it
// on a local port. All methods are safe for concurrent use.
type Server struct {
	now      func() time.Time
	log      *slog.Logger
	validate bool
	world    *world
	handler  *server
	keys     *keyring
	orders   *orderBook
	faults   faultSet
	contract *contract
	api      http.Handler
	admin    http.Handler

	mu         sync.Mutex
	requests   []*RequestRecord
	maxLog     int
	violations []string

	closing     chan struct{}
	closingOnce sync.Once

	// mutate, set by tests, rewrites a response object before validation.
	mutate atomic.Pointer[func(operation string, response any) any]
}

// New builds a mock StoreLink. The world is fixed by the seed; the clock
// decides which part of its history has happened.
func New(opts Options) (*Server, error) {
	if err := checkSize(opts.Stores, opts.SKUs); err != nil {
		return nil, fmt.Errorf("mockstorelink: %w", err)
	}
	c, err := loadContract()
	if err != nil {
		return nil, err
	}
	s := &Server{
		now:      opts.Now,
		log:      opts.Logger,
		validate: !opts.NoResponseValidation,
		contract: c,
		closing:  make(chan struct{}),
		maxLog:   opts.MaxRequestLog,
	}
	if s.maxLog == 0 {
		s.maxLog = DefaultMaxRequestLog
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	seed := opts.Seed
	if seed == 0 {
		seed = DefaultSeed
	}
	s.world = newSizedWorld(seed, opts.Stores, opts.SKUs)
	s.keys = newKeyring(uint64(seed), s.world.allStoreIDs())
	s.orders = newOrderBook(s.world, s.now())

	s.handler = &server{world: s.world, orders: s.orders, now: s.now}
	strict := api.NewStrictHandlerWithOptions(s.handler,
		[]api.StrictMiddlewareFunc{s.mutateMiddleware},
		api.StrictHTTPServerOptions{
			RequestErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
				writeError(w, http.StatusBadRequest, "invalid_body", err.Error())
			},
			ResponseErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
				s.log.Error("handler failed", "path", r.URL.Path, "error", err)
				writeError(w, http.StatusInternalServerError, "internal", "internal error")
			},
		})
	s.api = api.HandlerWithOptions(strict, api.StdHTTPServerOptions{
		ErrorHandlerFunc: func(w http.ResponseWriter, r *http.Request, err error) {
			writeError(w, http.StatusBadRequest, "invalid_parameter", err.Error())
		},
	})
	s.admin = s.adminHandler(opts.AdminToken)
	return s, nil
}

// Keys returns the current key of every store.
func (s *Server) Keys() map[string]string { return s.keys.all() }

// DefaultKeyring returns the keys a default deployment holds: StoreSmichov
// and StoreBrno in the fixture world (not StoreOstrava), every store in a
// large world.
func (s *Server) DefaultKeyring() map[string]string {
	all := s.keys.all()
	if s.world.large() {
		return all
	}
	return map[string]string{StoreSmichov: all[StoreSmichov], StoreBrno: all[StoreBrno]}
}

// RotateKey gives the store a fresh key; the old one is refused at once.
func (s *Server) RotateKey(storeID string) (newKey string) {
	key := s.keys.rotate(storeID)
	s.log.Info("store key rotated", "store_id", storeID)
	return key
}

// SetKey sets a store's key; a key taken from another store stops working
// there.
func (s *Server) SetKey(storeID, key string) {
	s.keys.set(storeID, key)
	s.log.Info("store key set", "store_id", storeID)
}

// SetFaults replaces all faults.
func (s *Server) SetFaults(faults ...Fault) {
	s.faults.set(faults)
	s.log.Info("faults set", "count", len(faults))
}

// ClearFaults removes all faults.
func (s *Server) ClearFaults() { s.SetFaults() }

// Faults returns the faults that can still fire.
func (s *Server) Faults() []Fault { return s.faults.list() }

// Requests returns every API request received since the last reset, in
// arrival order.
func (s *Server) Requests() []RequestRecord {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]RequestRecord, len(s.requests))
	for i, r := range s.requests {
		out[i] = *r
	}
	return out
}

// RequestCount counts the recorded requests that match; a nil match counts
// them all.
func (s *Server) RequestCount(match func(RequestRecord) bool) int {
	n := 0
	for _, r := range s.Requests() {
		if match == nil || match(r) {
			n++
		}
	}
	return n
}

// record appends to the request log, dropping the oldest records in batches
// once it is over its bound.
func (s *Server) record(rec *RequestRecord) {
	if s.maxLog < 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, rec)
	if n := len(s.requests); n >= s.maxLog+s.maxLog/4+1 {
		s.requests = append([]*RequestRecord(nil), s.requests[n-s.maxLog:]...)
	}
}

// ResetRequests forgets the recorded requests.
func (s *Server) ResetRequests() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = nil
}

// Orders returns every order, fixtures included, in creation order, with
// the status the clock gives them now.
func (s *Server) Orders() []Order { return s.orders.all(s.now()) }

// Violations returns the contract violations found in the mock's own
// responses.
func (s *Server) Violations() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.violations...)
}

// release ends hanging requests early, so a shutdown does not wait for them.
func (s *Server) release() {
	s.closingOnce.Do(func() { close(s.closing) })
}

// routed is what the contract router learned about a request.
type routed struct {
	route     *routers.Route
	params    map[string]string
	operation string
	storeID   string
}

// ServeHTTP serves the StoreLink API and, under /_admin/, the admin endpoint.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path == "/_admin" || strings.HasPrefix(r.URL.Path, "/_admin/") {
		s.admin.ServeHTTP(w, r)
		return
	}
	start := time.Now()
	route, params, routeErr := s.contract.router.FindRoute(r)
	rt := &routed{route: route, params: params, storeID: storeFromPath(r.URL.Path)}
	if routeErr == nil {
		rt.operation = route.Operation.OperationID
	}
	rec := &RequestRecord{Method: r.Method, Path: r.URL.Path, OperationID: rt.operation, StoreID: rt.storeID, At: s.now()}
	s.record(rec)
	sw := &statusWriter{ResponseWriter: w, onStatus: func(code int) {
		s.mu.Lock()
		rec.Status = code
		s.mu.Unlock()
	}}
	defer func() {
		s.log.Debug("request", "method", r.Method, "path", r.URL.Path, "operation", rt.operation,
			"store_id", rt.storeID, "status", sw.status, "duration", time.Since(start))
	}()

	if routeErr != nil {
		if allowed := s.allowedMethods(r); len(allowed) > 0 {
			sw.Header().Set("Allow", strings.Join(allowed, ", "))
			writeError(sw, http.StatusMethodNotAllowed, "method_not_allowed", r.Method+" is not allowed on "+r.URL.Path)
			return
		}
		writeError(sw, http.StatusNotFound, "not_found", "no such endpoint: "+r.Method+" "+r.URL.Path)
		return
	}
	s.serveFaulty(sw, r, rt)
}

// allowedMethods lists the methods the contract has for the request's path,
// trying each method with the router.
func (s *Server) allowedMethods(r *http.Request) []string {
	var out []string
	for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
		if m == r.Method {
			continue
		}
		probe := r.WithContext(r.Context())
		probe.Method = m
		if _, _, err := s.contract.router.FindRoute(probe); err == nil {
			out = append(out, m)
		}
	}
	return out
}

// storeFromPath returns the {store_id} of a /v1/stores/{store_id}/... path.
func storeFromPath(path string) string {
	rest, ok := strings.CutPrefix(path, "/v1/stores/")
	if !ok {
		return ""
	}
	id, _, _ := strings.Cut(rest, "/")
	return id
}

// requestState tells the contract layer whether a handler broke the
// contract on purpose.
type requestState struct{ bypassValidation bool }

type requestStateKey struct{}

func stateFrom(ctx context.Context) *requestState {
	st, _ := ctx.Value(requestStateKey{}).(*requestState)
	if st == nil {
		return &requestState{}
	}
	return st
}

// serveChecked authenticates and validates the request, runs the handler
// and validates its response, as a strict StoreLink would.
func (s *Server) serveChecked(w http.ResponseWriter, r *http.Request, rt *routed) {
	key := r.Header.Get(StoreKeyHeader)
	if key == "" {
		writeError(w, http.StatusUnauthorized, "invalid_key", "the "+StoreKeyHeader+" header is missing")
		return
	}
	keyStore, ok := s.keys.storeOf(key)
	if !ok {
		writeError(w, http.StatusUnauthorized, "invalid_key", "the store key is not valid (unknown or rotated)")
		return
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, maxRequestBody)
	}
	in := &openapi3filter.RequestValidationInput{Request: r, PathParams: rt.params, Route: rt.route, Options: requestOptions}
	if err := openapi3filter.ValidateRequest(r.Context(), in); err != nil {
		code := "invalid_parameter"
		var re *openapi3filter.RequestError
		if errors.As(err, &re) && re.RequestBody != nil {
			code = "invalid_body"
		}
		writeError(w, http.StatusBadRequest, code, requestErrorMessage(err))
		return
	}
	if pathStore, scoped := rt.params["store_id"]; scoped && pathStore != keyStore {
		writeError(w, http.StatusForbidden, "store_forbidden", "this key does not open store "+pathStore)
		return
	}

	state := &requestState{}
	r = r.WithContext(context.WithValue(r.Context(), requestStateKey{}, state))
	if !s.validate {
		s.api.ServeHTTP(w, r)
		return
	}
	c := newCapture()
	s.api.ServeHTTP(c, r)
	if !state.bypassValidation {
		if err := validateResponse(r.Context(), in, c); err != nil {
			v := fmt.Sprintf("%s %s -> %d: %v", r.Method, r.URL.Path, c.statusCode(), err)
			s.mu.Lock()
			s.violations = append(s.violations, v)
			s.mu.Unlock()
			s.log.Error("mock response breaks the contract", "operation", rt.operation,
				"status", c.statusCode(), "error", err)
			writeError(w, http.StatusInternalServerError, "contract_violation",
				"the mock's response broke the contract: "+err.Error())
			return
		}
	}
	c.writeTo(w, 0)
}

// requestErrorMessage shortens kin-openapi's error to its first line.
func requestErrorMessage(err error) string {
	msg, _, _ := strings.Cut(err.Error(), "\n")
	return msg
}

// mutateMiddleware lets a test corrupt a handler's response object.
func (s *Server) mutateMiddleware(f api.StrictHandlerFunc, operation string) api.StrictHandlerFunc {
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, request any) (any, error) {
		resp, err := f(ctx, w, r, request)
		if m := s.mutate.Load(); m != nil && err == nil {
			resp = (*m)(operation, resp)
		}
		return resp, err
	}
}

func errorBody(code, message string) api.Error {
	if len(message) > maxErrorMessage {
		message = message[:maxErrorMessage]
	}
	return api.Error{Error: api.ErrorDetail{Code: code, Message: message}}
}

// writeError writes the contract's error body, for every status.
func writeError(w http.ResponseWriter, status int, code, message string) {
	writeJSON(w, status, errorBody(code, message))
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	if err := json.NewEncoder(&buf).Encode(v); err != nil {
		http.Error(w, `{"error":{"code":"internal","message":"encoding failed"}}`, http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = buf.WriteTo(w)
}

// statusWriter reports the status before any byte reaches the client.
type statusWriter struct {
	http.ResponseWriter
	status   int
	onStatus func(int)
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
		w.onStatus(code)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }
