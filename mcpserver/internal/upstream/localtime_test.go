package upstream

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// localStoreLink answers store 47 with its timezone, and inventory and POS
// with store-local times without an offset. storeReads counts store reads.
func localStoreLink(t *testing.T, timezone string, storeReads *atomic.Int32) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Path {
		case "/v1/stores/47":
			storeReads.Add(1)
			day := `{"closed":false,"opens":"07:00","closes":"22:00"}`
			_, _ = fmt.Fprintf(w, `{"store_id":"47","name":"Store 47","timezone":%q,"opening_hours":{"monday":%s,"tuesday":%s,"wednesday":%s,"thursday":%s,"friday":%s,"saturday":%s,"sunday":{"closed":true}}}`,
				timezone, day, day, day, day, day, day)
		case "/v1/stores/47/inventory":
			_, _ = io.WriteString(w, `{"store_id":"47","sku":"1234","on_hand_units":5,"counted_at":"2026-11-27T06:00:00"}`)
		case "/v1/stores/47/pos":
			// The since echoed is the query's wall clock without offset; the last
			// line falls in the hour repeated on 25 October.
			since, _ := time.Parse(time.RFC3339, r.URL.Query().Get("since"))
			_, _ = io.WriteString(w, `{"store_id":"47","sku":"1234","since":"`+since.Format("2006-01-02T15:04:05")+`","transactions":[`+
				`{"transaction_id":"T2","timestamp":"2026-11-27T10:00:00","units":2},`+
				`{"transaction_id":"T1","timestamp":"2026-10-25T02:30:00","units":1}],"total_count":2}`)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

func withLocalTimes(t *testing.T, on bool) {
	t.Helper()
	was := localTimes
	localTimes = on
	t.Cleanup(func() { localTimes = was })
}

// Without the declaration a time without an offset is refused, and the
// store is not read.
func TestLocalTimesRefusedWithoutTheDeclaration(t *testing.T) {
	withLocalTimes(t, false)
	var reads atomic.Int32
	srv := localStoreLink(t, "Europe/Prague", &reads)
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	// Sales times are a decision field (ADR 0030).
	_, err := c.Sales(context.Background(), "47", "1234", time.Date(2026, 10, 24, 8, 0, 0, 0, time.UTC), 100)
	if ae := apperr.From(err); ae == nil || ae.Code != apperr.UpstreamContractError || !strings.Contains(ae.Message, "not RFC 3339") {
		t.Fatalf("sales: %v", err)
	}
	// The count's time only qualifies the answer: unknown, not misread.
	inv, err := c.Inventory(context.Background(), "47", "1234")
	if err != nil || !inv.CountedAt.IsZero() || !inv.Unknown.Has("inventory.counted_at") {
		t.Fatalf("inventory: %+v, %v", inv, err)
	}
	if n := reads.Load(); n != 0 {
		t.Errorf("%d store reads without the declaration", n)
	}
}

// With the declaration the times are store-local, the repeated autumn hour
// is its first occurrence, and the store is read once per call.
func TestLocalTimesReadInTheStoresZone(t *testing.T) {
	withLocalTimes(t, true)
	var reads atomic.Int32
	srv := localStoreLink(t, "Europe/Prague", &reads)
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	inv, err := c.Inventory(context.Background(), "47", "1234")
	if err != nil {
		t.Fatal(err)
	}
	if want := time.Date(2026, 11, 27, 5, 0, 0, 0, time.UTC); !inv.CountedAt.Equal(want) {
		t.Errorf("counted at %v, want %v", inv.CountedAt, want)
	}
	// Asked in UTC; sent in the store's zone.
	since := time.Date(2026, 10, 24, 8, 0, 0, 0, time.UTC)
	got, err := c.Sales(context.Background(), "47", "1234", since, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 2 {
		t.Fatalf("%d sales", len(got.Items))
	}
	if len(got.Unknown) != 0 {
		t.Errorf("unknown: %v; the since echoed reads back as the query's", got.Unknown)
	}
	for i, want := range []time.Time{time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC), time.Date(2026, 10, 25, 0, 30, 0, 0, time.UTC)} {
		if !got.Items[i].At.Equal(want) {
			t.Errorf("sale %d at %v, want %v", i, got.Items[i].At.UTC(), want)
		}
	}
	if n := reads.Load(); n != 1 {
		t.Errorf("%d store reads for two calls; the cached read serves both", n)
	}
}

// A store whose timezone is no zone: its answer is refused.
func TestLocalTimesNeedTheStoresZone(t *testing.T) {
	withLocalTimes(t, true)
	var reads atomic.Int32
	srv := localStoreLink(t, "Mars/Olympus", &reads)
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	_, err := c.Inventory(context.Background(), "47", "1234")
	if ae := apperr.From(err); ae == nil || ae.Code != apperr.UpstreamContractError {
		t.Fatalf("inventory of a store without a zone: %v", err)
	}
}
