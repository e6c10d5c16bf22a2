package storelinkclient_test

import (
	"errors"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	sl "github.com/korral/storelink/storelinkclient"
)

// posPage is one page the fake StoreLink serves: its transactions and the
// cursor it hands out ("" for the last page).
type posPage struct {
	txs       []string
	next      string
	emptyNext bool // send "next_cursor": "", which the spec forbids
}

// posServer serves pages keyed by the cursor that asks for them (the first
// page under ""), and checks each request carries the walk's fixed query and
// key. It records the cursors asked for, in order.
type posServer struct {
	t     *testing.T
	pages map[string]posPage
	fail  map[string]int // cursor → failure status to answer instead

	mu      sync.Mutex
	cursors []string
}

var posSince = at(11, 27, 10, 0, 0)

func (s *posServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cursor := q.Get("cursor")
	s.mu.Lock()
	s.cursors = append(s.cursors, cursor)
	s.mu.Unlock()
	if r.URL.Path != "/v1/stores/47/pos" || q.Get("sku") != "8847291" || q.Get("limit") != "2" ||
		q.Get("since") != posSince.Format(time.RFC3339) || r.Header.Get(sl.StoreKeyHeader) != testKey {
		s.t.Errorf("unexpected request %s with key %q", r.URL, r.Header.Get(sl.StoreKeyHeader))
		writeJSON(w, http.StatusBadRequest, `{"error":{"code":"invalid_parameter","message":"unexpected request"}}`)
		return
	}
	if status, ok := s.fail[cursor]; ok {
		w.Header().Set("Retry-After", "5")
		writeJSON(w, status, `{"error":{"code":"unavailable","message":"store systems are under maintenance"}}`)
		return
	}
	page, ok := s.pages[cursor]
	if !ok {
		writeJSON(w, http.StatusBadRequest, `{"error":{"code":"invalid_parameter","message":"unknown cursor"}}`)
		return
	}
	txs := ""
	for i, id := range page.txs {
		if i > 0 {
			txs += ","
		}
		txs += fmt.Sprintf(`{"transaction_id":%q,"timestamp":"2026-11-28T10:00:00+01:00","units":1}`, id)
	}
	next := ""
	if page.next != "" || page.emptyNext {
		next = fmt.Sprintf(`,"next_cursor":%q`, page.next)
	}
	writeJSON(w, http.StatusOK, fmt.Sprintf(`{"store_id":"47","sku":"8847291","since":%q,"transactions":[%s],"total_count":6%s}`,
		posSince.Format(time.RFC3339), txs, next))
}

func (s *posServer) asked() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.cursors...)
}

// threePages is a walk of three pages, c1 and c2 being the cursors between.
var threePages = map[string]posPage{
	"":   {txs: []string{"T6", "T5"}, next: "c1"},
	"c1": {txs: []string{"T4", "T3"}, next: "c2"},
	"c2": {txs: []string{"T2", "T1"}},
}

// walkResult is what a range over AllPOSTransactions saw.
type walkResult struct {
	IDs []string
	Err error // the one error yielded, nil if none
}

// posWalk is one case of TestAllPOSTransactions.
type posWalk struct {
	name        string
	pages       map[string]posPage
	fail        map[string]int
	start       string // cursor to resume from
	maxPages    int
	wantIDs     []string
	wantAsked   []string
	wantErrIs   error
	wantAPIErr  bool
	stopAfterID string // the consumer breaks after this transaction
}

// posWalks are the walks TestAllPOSTransactions runs.
var posWalks = []posWalk{
	{
		name: "walks every page", pages: threePages, maxPages: 10,
		wantIDs: []string{"T6", "T5", "T4", "T3", "T2", "T1"}, wantAsked: []string{"", "c1", "c2"},
	},
	{
		name: "exactly the page budget", pages: threePages, maxPages: 3,
		wantIDs: []string{"T6", "T5", "T4", "T3", "T2", "T1"}, wantAsked: []string{"", "c1", "c2"},
	},
	{
		name: "stops at the page budget", pages: threePages, maxPages: 2,
		wantIDs: []string{"T6", "T5", "T4", "T3"}, wantAsked: []string{"", "c1"}, wantErrIs: sl.ErrPageLimit,
	},
	{
		name: "resumes from a cursor", pages: threePages, start: "c1", maxPages: 10,
		wantIDs: []string{"T4", "T3", "T2", "T1"}, wantAsked: []string{"c1", "c2"},
	},
	{
		name: "stops on a repeated cursor",
		pages: map[string]posPage{
			"":   {txs: []string{"T6", "T5"}, next: "c1"},
			"c1": {txs: []string{"T4", "T3"}, next: "c2"},
			"c2": {txs: []string{"T2", "T1"}, next: "c1"},
		},
		maxPages: 10,
		wantIDs:  []string{"T6", "T5", "T4", "T3", "T2", "T1"}, wantAsked: []string{"", "c1", "c2"}, wantErrIs: sl.ErrRepeatedCursor,
	},
	{
		name: "stops on a cursor pointing at itself",
		pages: map[string]posPage{
			"":   {txs: []string{"T6"}, next: "c1"},
			"c1": {txs: []string{"T5"}, next: "c1"},
		},
		maxPages: 10,
		wantIDs:  []string{"T6", "T5"}, wantAsked: []string{"", "c1"}, wantErrIs: sl.ErrRepeatedCursor,
	},
	{
		name: "stops on an empty cursor",
		pages: map[string]posPage{
			"": {txs: []string{"T6"}, emptyNext: true},
		},
		maxPages: 10,
		wantIDs:  []string{"T6"}, wantAsked: []string{""}, wantErrIs: sl.ErrMalformedResponse,
	},
	{
		name: "stops on a failing page", pages: threePages, fail: map[string]int{"c1": http.StatusServiceUnavailable}, maxPages: 10,
		wantIDs: []string{"T6", "T5"}, wantAsked: []string{"", "c1"}, wantAPIErr: true,
	},
	{
		name: "consumer stops early", pages: threePages, maxPages: 10, stopAfterID: "T4",
		wantIDs: []string{"T6", "T5", "T4"}, wantAsked: []string{"", "c1"},
	},
	{
		name: "no page budget", pages: threePages, maxPages: 0,
		wantAsked: nil, wantErrIs: errAny,
	},
}

// TestAllPOSTransactions ranges over AllPOSTransactions for each of posWalks:
// the transactions yielded, the cursors asked for and the error at the end.
func TestAllPOSTransactions(t *testing.T) {
	for _, tt := range posWalks {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			srv := &posServer{t: t, pages: tt.pages, fail: tt.fail}
			c, _ := newServer(t, srv, sl.WithResponseLimit(sl.DefaultResponseLimit))
			params := sl.ListPOSTransactionsParams{SKU: "8847291", Since: posSince, Limit: ptr(2)}
			if tt.start != "" {
				params.Cursor = ptr(tt.start)
			}
			got := walkPOS(t, c, params, tt.maxPages, tt.stopAfterID)
			if diff := cmp.Diff(tt.wantIDs, got.IDs); diff != "" {
				t.Errorf("transactions (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantAsked, srv.asked()); diff != "" {
				t.Errorf("cursors requested (-want +got):\n%s", diff)
			}
			tt.checkErr(t, got.Err)
		})
	}
}

// walkPOS ranges over AllPOSTransactions, checking that an error comes alone
// and last, and breaks after the transaction stopAfterID.
func walkPOS(t *testing.T, c *sl.ClientWithResponses, params sl.ListPOSTransactionsParams, maxPages int, stopAfterID string) walkResult {
	t.Helper()
	var got walkResult
	for tx, err := range sl.AllPOSTransactions(t.Context(), c, "47", params, maxPages, sl.WithStoreKey(testKey)) {
		if got.Err != nil {
			t.Fatalf("yielded (%+v, %v) after the error %v", tx, err, got.Err)
		}
		if err != nil {
			if tx != (sl.POSTransaction{}) {
				t.Errorf("error %v came with transaction %+v", err, tx)
			}
			got.Err = err
			continue
		}
		got.IDs = append(got.IDs, tx.TransactionID)
		if tx.TransactionID == stopAfterID {
			break
		}
	}
	return got
}

// checkErr checks the error the walk yielded against the case's want.
func (tt posWalk) checkErr(t *testing.T, err error) {
	t.Helper()
	var apiErr *sl.APIError
	switch {
	case tt.wantAPIErr:
		if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusServiceUnavailable || apiErr.RetryAfter != 5*time.Second {
			t.Errorf("error = %v, want the 503 *APIError with its Retry-After", err)
		}
	case tt.wantErrIs == errAny:
		if err == nil {
			t.Error("no error yielded")
		}
	case tt.wantErrIs != nil:
		if !errors.Is(err, tt.wantErrIs) {
			t.Errorf("error = %v, want %v", err, tt.wantErrIs)
		}
	default:
		if err != nil {
			t.Errorf("error = %v, want none", err)
		}
	}
}

// errAny stands for "some error" in the table above.
var errAny = errors.New("any error")
