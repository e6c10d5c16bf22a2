package upstream

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	sl "github.com/korral/storelink/storelinkclient"
)

// fakeKeys is a keyring source whose "file" can be rotated by the test.
type fakeKeys struct {
	mu      sync.Mutex
	current map[string]string
	onDisk  map[string]string
}

func (f *fakeKeys) Key(id string) (keyring.Key, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	k, ok := f.current[id]
	return keyring.NewKey(k), ok
}

func (f *fakeKeys) Refresh(id string, stale keyring.Key) (keyring.Key, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.onDisk != nil {
		f.current = f.onDisk
	}
	k, ok := f.current[id]
	if !ok || k == stale.Reveal() {
		return keyring.Key{}, false
	}
	return keyring.NewKey(k), true
}

func newClient(t *testing.T, url string, keys Keys, mutate func(*Options)) (*Client, *mcptest.SyncBuffer) {
	t.Helper()
	logs := &mcptest.SyncBuffer{}
	opts := Options{
		BaseURL: url, Keys: keys, Timeout: 2 * time.Second,
		// At debug, so the tests that look for keys in the logs see every
		// line the client can write.
		Logger:          slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug})),
		BreakerFailures: 3, BreakerCooldown: 200 * time.Millisecond,
	}
	if mutate != nil {
		mutate(&opts)
	}
	c, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c, logs
}

const inventoryBody = `{"store_id":"47","sku":"8847291","on_hand_units":5,"counted_at":"2026-11-27T06:00:00+01:00"}`

func errorBody(code string) string {
	return fmt.Sprintf(`{"error":{"code":%q,"message":"something"}}`, code)
}

func TestKeyHeaderAndCallIDLogged(t *testing.T) {
	var gotKey string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotKey = r.Header.Get("X-Korral-Store-Key")
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, inventoryBody)
	}))
	defer srv.Close()
	c, logs := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "secret-key-47"}}, nil)
	ctx := callid.With(context.Background(), "call-123")
	inv, err := c.Inventory(ctx, "47", "8847291")
	if err != nil {
		t.Fatal(err)
	}
	if n, slowest := callid.Requests(ctx); n != 1 || slowest <= 0 {
		t.Errorf("the call counted %d requests, the slowest %v; want 1 and more than 0", n, slowest)
	}
	if inv.OnHand != 5 || gotKey != "secret-key-47" {
		t.Fatalf("on hand %d, key %q", inv.OnHand, gotKey)
	}
	var line map[string]any
	if err := json.Unmarshal([]byte(strings.TrimSpace(logs.String())), &line); err != nil {
		t.Fatalf("log line: %v: %s", err, logs.String())
	}
	// A request answered at its first attempt is logged at debug (ADR 0046).
	for k, want := range map[string]any{"level": "DEBUG", "msg": "upstream.request", "call_id": "call-123", "route": "/v1/stores/{store_id}/inventory", "status": 200.0, "attempt": 1.0, "breaker": "closed"} {
		if line[k] != want {
			t.Errorf("log %s = %v, want %v", k, line[k], want)
		}
	}
	if strings.Contains(logs.String(), "secret-key-47") {
		t.Fatal("key leaked into the log")
	}
}

func TestKeyRotationOneGuardedRetry(t *testing.T) {
	var requests atomic.Int32
	valid := "new-key"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.Header.Get("X-Korral-Store-Key") != valid {
			w.WriteHeader(401)
			_, _ = io.WriteString(w, errorBody("invalid_key"))
			return
		}
		_, _ = io.WriteString(w, inventoryBody)
	}))
	defer srv.Close()

	t.Run("file unchanged: one request, AUTH_KEY_INVALID", func(t *testing.T) {
		requests.Store(0)
		keys := &fakeKeys{current: map[string]string{"47": "old-key"}}
		c, logs := newClient(t, srv.URL, keys, nil)
		_, err := c.Inventory(context.Background(), "47", "8847291")
		if apperr.CodeOf(err) != apperr.AuthKeyInvalid {
			t.Fatalf("got %v", err)
		}
		if n := requests.Load(); n != 1 {
			t.Fatalf("%d requests, want 1", n)
		}
		if strings.Contains(logs.String(), "old-key") {
			t.Fatal("key leaked")
		}
	})
	t.Run("file rotated: one retry with the new key succeeds", func(t *testing.T) {
		requests.Store(0)
		keys := &fakeKeys{current: map[string]string{"47": "old-key"}, onDisk: map[string]string{"47": "new-key"}}
		c, logs := newClient(t, srv.URL, keys, nil)
		if _, err := c.Inventory(context.Background(), "47", "8847291"); err != nil {
			t.Fatal(err)
		}
		if n := requests.Load(); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
		if strings.Contains(logs.String(), "new-key") {
			t.Fatal("key leaked")
		}
		// The refused attempt is at warn, the retry that was answered at
		// info: a retry is worth a line where a first answer is not (ADR 0046).
		var levels []string
		for _, l := range logLines(t, logs) {
			if l["msg"] == "upstream.request" {
				levels = append(levels, fmt.Sprintf("%v %v", l["attempt"], l["level"]))
			}
		}
		if got := strings.Join(levels, ", "); got != "1 WARN, 2 INFO" {
			t.Errorf("upstream.request lines by attempt and level: %s; want 1 WARN, 2 INFO", got)
		}
	})
	t.Run("file rotated to another wrong key: at most two requests", func(t *testing.T) {
		requests.Store(0)
		keys := &fakeKeys{current: map[string]string{"47": "old-key"}, onDisk: map[string]string{"47": "also-wrong"}}
		c, _ := newClient(t, srv.URL, keys, nil)
		_, err := c.Inventory(context.Background(), "47", "8847291")
		if apperr.CodeOf(err) != apperr.AuthKeyInvalid {
			t.Fatalf("got %v", err)
		}
		if n := requests.Load(); n != 2 {
			t.Fatalf("%d requests, want 2", n)
		}
	})
}

func TestTimeoutReadVersusWrite(t *testing.T) {
	release := make(chan struct{})
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	defer srv.Close()
	defer close(release)
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, func(o *Options) { o.Timeout = 150 * time.Millisecond })
	if _, err := c.Inventory(context.Background(), "47", "8847291"); apperr.CodeOf(err) != apperr.UpstreamTimeout {
		t.Fatalf("GET: %v", err)
	}
	before := requests.Load()
	if _, err := c.CreateOrder(context.Background(), "47", domain.OrderRequest{SKU: "1234", QuantityUnits: 1, Reason: "r"}); apperr.CodeOf(err) != apperr.WriteOutcomeUnknown {
		t.Fatalf("POST: %v", err)
	}
	if n := requests.Load() - before; n != 1 {
		t.Fatalf("POST sent %d times, want exactly 1", n)
	}
}

func TestOversizedBodyIsContractError(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"store_id":"47","sku":"`)
		chunk := bytes.Repeat([]byte("9"), 64<<10)
		for i := 0; i < 200; i++ { // 12.8 MiB, far above the limit
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, func(o *Options) { o.ResponseLimit = 1 << 20 })
	if _, err := c.Inventory(context.Background(), "47", "8847291"); apperr.CodeOf(err) != apperr.UpstreamContractError {
		t.Fatalf("got %v", err)
	}
}

func TestUnknownStoreSendsNothing(t *testing.T) {
	var requests atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { requests.Add(1) }))
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	if _, err := c.Inventory(context.Background(), "55", "1234"); apperr.CodeOf(err) != apperr.StoreNotAuthorized {
		t.Fatalf("got %v", err)
	}
	if requests.Load() != 0 {
		t.Fatal("a request left for a store without a key")
	}
}

func TestSalesWalksPagesAndStopsOnRepeatedCursor(t *testing.T) {
	page := func(cursor string, next string, n int) string {
		var tx []string
		for i := 0; i < n; i++ {
			tx = append(tx, fmt.Sprintf(`{"transaction_id":"T%s-%d","timestamp":"2026-11-27T10:00:00+01:00","units":1}`, cursor, i))
		}
		nc := ""
		if next != "" {
			nc = fmt.Sprintf(`,"next_cursor":%q`, next)
		}
		return fmt.Sprintf(`{"store_id":"47","sku":"1234","since":"2026-11-26T10:00:00+01:00","transactions":[%s],"total_count":6%s}`, strings.Join(tx, ","), nc)
	}
	repeat := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch r.URL.Query().Get("cursor") {
		case "":
			_, _ = io.WriteString(w, page("a", "b", 2))
		case "b":
			next := "c"
			if repeat {
				next = "b"
			}
			_, _ = io.WriteString(w, page("b", next, 2))
		case "c":
			_, _ = io.WriteString(w, page("c", "", 2))
		}
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	// The since every page echoes.
	since := time.Date(2026, 11, 26, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	got, err := c.Sales(context.Background(), "47", "1234", since, 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Items) != 6 || got.Total != 6 || got.Truncated {
		t.Fatalf("walk: %d items, total %d, truncated %v", len(got.Items), got.Total, got.Truncated)
	}
	capped, err := c.Sales(context.Background(), "47", "1234", since, 3)
	if err != nil || len(capped.Items) != 3 || !capped.Truncated {
		t.Fatalf("cap: %v %+v", err, capped)
	}
	repeat = true
	_, err = c.Sales(context.Background(), "47", "1234", since, 100)
	if ae := apperr.From(err); ae == nil || ae.Code != apperr.UpstreamContractError || !strings.Contains(ae.Message, "pos.next_cursor: repeats a cursor already returned (rule pos.cursor)") {
		t.Fatalf("repeated cursor: %v", err)
	}
}

func TestCancelledWriteIsUnknownNotFailed(t *testing.T) {
	arrived := make(chan struct{}, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Reading the body lets the server notice the client hanging up.
		_, _ = io.ReadAll(r.Body)
		arrived <- struct{}{}
		<-r.Context().Done()
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-arrived; cancel() }()
	_, err := c.CreateOrder(ctx, "47", domain.OrderRequest{SKU: "1234", QuantityUnits: 1, Reason: "r"})
	if apperr.CodeOf(err) != apperr.WriteOutcomeUnknown {
		t.Fatalf("a POST cancelled after it left: %v", err)
	}
	if c.BreakerState() != "closed" {
		t.Fatal("a caller's cancellation counted against StoreLink")
	}
}

// TestOrdersTravelOnFreshConnections: reads share pooled connections, but
// every order opens its own.
func TestOrdersTravelOnFreshConnections(t *testing.T) {
	const orderBody = `{"order_id":"o-1","store_id":"47","sku":"8847291","quantity_units":10,"reason":"r","status":"submitted","submitted_at":"2026-11-27T10:00:00+01:00","expected_arrival":"2026-11-29T07:00:00+01:00"}`
	var conns atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
			_, _ = io.WriteString(w, orderBody)
			return
		}
		_, _ = io.WriteString(w, inventoryBody)
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	ctx := context.Background()
	for range 3 {
		if _, err := c.Inventory(ctx, "47", "8847291"); err != nil {
			t.Fatal(err)
		}
	}
	if n := conns.Load(); n != 1 {
		t.Fatalf("three reads opened %d connections, want 1 (pooled)", n)
	}
	for i := range 2 {
		if _, err := c.CreateOrder(ctx, "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 10, Reason: "r"}); err != nil {
			t.Fatal(err)
		}
		if n, want := conns.Load(), int32(2+i); n != want {
			t.Fatalf("after order %d: %d connections, want %d (one new per order)", i+1, n, want)
		}
	}
}

// TestUndeclaredOrderStatus: a read with an undeclared order status is a
// contract error; an order StoreLink took keeps its id and drops the status.
func TestUndeclaredOrderStatus(t *testing.T) {
	const order = `{"order_id":"RO-47-001000","store_id":"47","sku":"8847291","quantity_units":24,"reason":"r",` +
		`"status":"in_transit","submitted_at":"2026-11-27T14:30:00+01:00","expected_arrival":"2026-11-29T07:00:00+01:00"}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		if r.Method == http.MethodPost {
			w.WriteHeader(http.StatusCreated)
		}
		_, _ = io.WriteString(w, order)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	_, err := c.Order(context.Background(), "47", "RO-47-001000")
	if apperr.CodeOf(err) != apperr.UpstreamContractError {
		t.Fatalf("read of an order in status in_transit: %v", err)
	}
	if !strings.Contains(err.Error(), "order.status: not one of the contract's order statuses") || strings.Contains(err.Error(), "in_transit") || strings.Contains(fmt.Sprint(apperr.From(err).Cause), "in_transit") {
		t.Errorf("the error should name the field and rule, never StoreLink's value: %v (cause %v)", err, apperr.From(err).Cause)
	}
	o, err := c.CreateOrder(context.Background(), "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 24, Reason: "r"})
	if err != nil || o.ID != "RO-47-001000" || o.Status != "" {
		t.Fatalf("an order taken in status in_transit: %+v, %v", o, err)
	}
	for _, s := range domain.OrderStatuses() {
		if !sl.OrderStatus(s).Valid() {
			t.Errorf("domain status %s is not the contract's", s)
		}
	}
}
