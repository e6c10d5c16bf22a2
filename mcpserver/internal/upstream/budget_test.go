package upstream

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callerlimit"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	sl "github.com/korral/storelink/storelinkclient"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// countingStoreLink answers inventory reads, counting the requests open at
// once and their arrival order.
type countingStoreLink struct {
	throttle atomic.Bool // answer 429 with Retry-After
	// hold, when set, keeps every request open until release.
	hold     chan struct{}
	released sync.Once
	// gathered, when set, keeps each request open until gather requests are
	// open at once (or a few seconds pass), so a peak does not depend on how
	// the scheduler happens to interleave a burst.
	gather   int
	gathered chan struct{}
	gatherOK sync.Once

	mu       sync.Mutex
	inFlight int
	peak     int
	arrivals []string // the call id of each request, in arrival order
}

func (s *countingStoreLink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.arrivals = append(s.arrivals, r.Header.Get("X-Test-Call"))
	if s.gathered != nil && s.inFlight >= s.gather {
		s.gatherOK.Do(func() { close(s.gathered) })
	}
	gathered := s.gathered
	s.mu.Unlock()
	if s.hold != nil {
		<-s.hold
	}
	if gathered != nil {
		// The bound only ends a test whose budget never lets gather
		// requests through; its peak check then fails.
		select {
		case <-gathered:
		case <-time.After(5 * time.Second):
		}
	}
	// Long enough for a burst's requests to overlap; no timing is asserted.
	time.Sleep(2 * time.Millisecond)
	s.mu.Lock()
	s.inFlight--
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if s.throttle.Load() {
		w.Header().Set("Retry-After", "1")
		w.WriteHeader(http.StatusTooManyRequests)
		_, _ = io.WriteString(w, errorBody("rate_limited"))
		return
	}
	_, _ = io.WriteString(w, inventoryBody)
}

// release lets the held requests answer; deferred so a failing test ends
// instead of hanging.
func (s *countingStoreLink) release() { s.released.Do(func() { close(s.hold) }) }

// burst sends n inventory reads at once under call and waits for all.
func (s *countingStoreLink) burst(c *Client, call string, n int) {
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { _, _ = c.Inventory(callid.With(context.Background(), call), "47", "8847291") })
	}
	wg.Wait()
}

// resetPeak starts a new observation and returns the last one's peak.
func (s *countingStoreLink) resetPeak() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.peak
	s.peak = 0
	return p
}

// tagCall puts the call id on each request.
type tagCall struct{ next http.RoundTripper }

func (t tagCall) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("X-Test-Call", callid.From(r.Context()))
	return t.next.RoundTrip(r)
}

// budgetClient is a client of srv with a budget of most, logging at debug.
func budgetClient(t *testing.T, srv *httptest.Server, most int) (*Client, *mcptest.SyncBuffer) {
	t.Helper()
	logs := &mcptest.SyncBuffer{}
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, func(o *Options) {
		o.MaxInFlight = most
		o.Transport = tagCall{next: &http.Transport{MaxIdleConnsPerHost: 64}}
		o.Logger = slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	})
	return c, logs
}

// TestBudgetNeverExceedsItsMaximum: 200 reads at once from four calls meet
// StoreLink at most MaxInFlight at a time, and the budget is used.
func TestBudgetNeverExceedsItsMaximum(t *testing.T) {
	s := &countingStoreLink{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	if s.hold != nil {
		defer s.release()
	}
	const most = 5
	c, _ := budgetClient(t, srv, most)
	var wg sync.WaitGroup
	for _, call := range []string{"a", "b", "c", "d"} {
		wg.Go(func() { s.burst(c, call, 50) })
	}
	wg.Wait()
	if len(s.arrivals) != 200 {
		t.Fatalf("%d requests reached StoreLink, want 200", len(s.arrivals))
	}
	if p := s.resetPeak(); p > most || p < 2 {
		t.Fatalf("StoreLink saw %d requests open at once, want 2..%d", p, most)
	}
	if l, n, q := c.budget.state(); l != most || n != 0 || q != 0 {
		t.Fatalf("after the burst: limit %d, in flight %d, queued %d; want %d, 0, 0", l, n, q, most)
	}
}

// TestBudgetShrinksOnThrottleAndRecovers: 429s with Retry-After take the
// limit to 1; served answers bring it back to the maximum, never beyond.
func TestBudgetShrinksOnThrottleAndRecovers(t *testing.T) {
	s := &countingStoreLink{}
	srv := httptest.NewServer(s)
	defer srv.Close()
	if s.hold != nil {
		defer s.release()
	}
	const most = 8
	c, logs := budgetClient(t, srv, most)
	s.gather, s.gathered = most, make(chan struct{})
	s.burst(c, "warm", 64)
	s.gathered = nil
	if p := s.resetPeak(); p != most {
		t.Fatalf("before any 429: StoreLink saw %d requests open at once, want %d", p, most)
	}

	s.throttle.Store(true)
	s.burst(c, "throttled", 64)
	s.resetPeak()
	if l, _, _ := c.budget.state(); l != 1 {
		t.Fatalf("after 64 answers of 429: limit %d, want 1", l)
	}
	for _, want := range []string{`"from":8,"to":4,"max":8,"reason":"throttled"`, `"from":2,"to":1,"max":8,"reason":"throttled"`} {
		if !strings.Contains(logs.String(), `"msg":"upstream.budget",`+want) {
			t.Fatalf("no debug line upstream.budget with %s in:\n%s", want, logs.String())
		}
	}

	// The limit starts at 1 and grows by one per window of served answers.
	s.throttle.Store(false)
	s.burst(c, "after", most)
	if p := s.resetPeak(); p >= most {
		t.Fatalf("after the 429s: StoreLink saw %d requests open at once, want fewer than %d", p, most)
	}
	// 1+2+...+8 = 36 served answers take it back to the maximum.
	s.burst(c, "recovering", 64)
	s.resetPeak()
	if l, _, _ := c.budget.state(); l != most {
		t.Fatalf("after 72 served answers: limit %d, want %d", l, most)
	}
	s.burst(c, "recovered", 64)
	if p := s.resetPeak(); p != most {
		t.Fatalf("recovered: StoreLink saw %d requests open at once, want %d", p, most)
	}
}

// TestBudgetIsFairAcrossCalls: a call of 80 requests does not hold up a
// later call of 4: their requests alternate, and both complete.
func TestBudgetIsFairAcrossCalls(t *testing.T) {
	s := &countingStoreLink{hold: make(chan struct{})}
	srv := httptest.NewServer(s)
	defer srv.Close()
	if s.hold != nil {
		defer s.release()
	}
	const most = 2
	c, _ := budgetClient(t, srv, most)
	var big, small sync.WaitGroup
	big.Go(func() { s.burst(c, "big", 80) })
	waitQueued(t, c, 80-most)
	small.Go(func() { s.burst(c, "small", 4) })
	waitQueued(t, c, 80-most+4)
	s.release()
	small.Wait()
	big.Wait()
	last := -1
	for i, call := range s.arrivals {
		if call == "small" {
			last = i
		}
	}
	// In turns: big, small, big, small... after the two held at the start.
	if last < 0 || last > most+2*4+2 {
		t.Fatalf("the small call's last request reached StoreLink %dth of %d, want by the %dth", last+1, len(s.arrivals), most+2*4+3)
	}
	if len(s.arrivals) != 84 {
		t.Fatalf("%d requests reached StoreLink, want 84", len(s.arrivals))
	}
}

// waitQueued waits until n requests wait for a place.
func waitQueued(t *testing.T, c *Client, n int) {
	t.Helper()
	for i := 0; ; i++ {
		if _, _, q := c.budget.state(); q == n {
			return
		}
		if i == 10000 {
			t.Fatalf("%d requests never queued", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBudgetGivesUpWithoutSending: a request whose call ends while waiting
// leaves the queue and sends nothing; a write so stopped is not sent.
func TestBudgetGivesUpWithoutSending(t *testing.T) {
	s := &countingStoreLink{hold: make(chan struct{})}
	srv := httptest.NewServer(s)
	defer srv.Close()
	if s.hold != nil {
		defer s.release()
	}
	c, _ := budgetClient(t, srv, 1)
	var wg sync.WaitGroup
	wg.Go(func() { s.burst(c, "first", 1) })
	waitArrivals(t, s, 1)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.CreateOrder(ctx, "47", domain.OrderRequest{SKU: "8847291", QuantityUnits: 12, Reason: "test"})
		errc <- err
	}()
	waitQueued(t, c, 1)
	cancel()
	var ae *apperr.Error
	if err := <-errc; !errors.As(err, &ae) || ae.Reach != apperr.ReachNotSent || ae.Code != apperr.UpstreamUnavailable {
		t.Fatalf("an order stopped in the queue: %v, want UPSTREAM_UNAVAILABLE and not sent", err)
	}
	s.release()
	wg.Wait()
	if _, n, q := c.budget.state(); n != 0 || q != 0 {
		t.Fatalf("in flight %d, queued %d after all ended; want 0, 0", n, q)
	}
	if len(s.arrivals) != 1 {
		t.Fatalf("%d requests reached StoreLink, want 1", len(s.arrivals))
	}
}

func waitArrivals(t *testing.T, s *countingStoreLink, n int) {
	t.Helper()
	for i := 0; ; i++ {
		s.mu.Lock()
		got := len(s.arrivals)
		s.mu.Unlock()
		if got >= n {
			return
		}
		if i == 10000 {
			t.Fatalf("%d requests never arrived", n)
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBudgetHalvesOncePerBurst: eight 429s under one limit halve it once.
func TestBudgetHalvesOncePerBurst(t *testing.T) {
	s := &countingStoreLink{hold: make(chan struct{})}
	s.throttle.Store(true)
	srv := httptest.NewServer(s)
	defer srv.Close()
	if s.hold != nil {
		defer s.release()
	}
	const most = 8
	c, _ := budgetClient(t, srv, most)
	var wg sync.WaitGroup
	wg.Go(func() { s.burst(c, "burst", most) })
	waitArrivals(t, s, most)
	s.release()
	wg.Wait()
	if l, _, _ := c.budget.state(); l != most/2 {
		t.Fatalf("after %d 429s sent under one limit: limit %d, want %d", most, l, most/2)
	}
}

// TestSalesAsksForTheLargestPage: a walk asks for pages of 1000, the
// contract's largest.
func TestSalesAsksForTheLargestPage(t *testing.T) {
	var asked atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Store(r.URL.Query().Get("limit"))
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"store_id":"47","sku":"1234","since":"2026-11-26T10:00:00+01:00","transactions":[],"total_count":0}`)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, nil)
	since := time.Date(2026, 11, 26, 10, 0, 0, 0, time.FixedZone("CET", 3600))
	if _, err := c.Sales(context.Background(), "47", "1234", since, 100); err != nil {
		t.Fatal(err)
	}
	if got := asked.Load(); got != "1000" {
		t.Fatalf("asked for pages of %v transactions, want 1000", got)
	}
}

// TestLoadSignal: which answers move the budget. A 503 says "less" only
// with a Retry-After.
func TestLoadSignal(t *testing.T) {
	for _, tc := range []struct {
		name   string
		status int
		err    error
		want   signal
	}{
		{"200", 200, nil, served},
		{"404", 404, &sl.APIError{StatusCode: 404}, served},
		{"429", 429, &sl.APIError{StatusCode: 429}, throttled},
		{"503 with Retry-After", 503, &sl.APIError{StatusCode: 503, RetryAfter: time.Second}, throttled},
		{"503 without", 503, &sl.APIError{StatusCode: 503}, neutral},
		{"500", 500, &sl.APIError{StatusCode: 500}, neutral},
		{"no answer", 0, context.DeadlineExceeded, neutral},
	} {
		if got := loadSignal(tc.status, tc.err); got != tc.want {
			t.Errorf("%s: signal %d, want %d", tc.name, got, tc.want)
		}
	}
}

// TestBudgetMetrics: the gauges and decrease counter reach the
// MeterProvider, labelled by upstream.
func TestBudgetMetrics(t *testing.T) {
	s := &countingStoreLink{}
	s.throttle.Store(true)
	srv := httptest.NewServer(s)
	defer srv.Close()
	if s.hold != nil {
		defer s.release()
	}
	reader := sdkmetric.NewManualReader()
	c, _ := newClient(t, srv.URL, &fakeKeys{current: map[string]string{"47": "k"}}, func(o *Options) {
		o.MaxInFlight = 6
		o.UpstreamName = "eu"
		o.MeterProvider = sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	})
	_, _ = c.Inventory(context.Background(), "47", "8847291")
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	got := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			var points []metricdata.DataPoint[int64]
			switch d := m.Data.(type) {
			case metricdata.Gauge[int64]:
				points = d.DataPoints
			case metricdata.Sum[int64]:
				points = d.DataPoints
			}
			for _, dp := range points {
				if up, _ := dp.Attributes.Value("storelink.upstream"); up.AsString() == "eu" && strings.HasPrefix(m.Name, "storelink.upstream.budget.") {
					got[m.Name] = dp.Value
				}
			}
		}
	}
	want := map[string]int64{"storelink.upstream.budget.limit": 3, "storelink.upstream.budget.in_flight": 0,
		"storelink.upstream.budget.queued": 0, "storelink.upstream.budget.decreases": 1}
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			t.Errorf("%s = %d (reported: %v), want %d", k, g, ok, v)
		}
	}
}

// steppedStoreLink answers inventory reads one at a time: each request
// waits for a token on step (or for step to close). It notes, for each
// request of "other", how many requests were open at StoreLink with it.
type steppedStoreLink struct {
	step chan struct{}

	mu        sync.Mutex
	open      int
	otherOpen []int
}

func (s *steppedStoreLink) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.open++
	if r.Header.Get("X-Test-Call") == "other" {
		s.otherOpen = append(s.otherOpen, s.open)
	}
	s.mu.Unlock()
	<-s.step
	s.mu.Lock()
	s.open--
	s.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, inventoryBody)
}

// callerBurst sends n reads at once as caller (also the call id) and waits.
func callerBurst(c *Client, caller string, n int) {
	ctx := callerlimit.With(callid.With(context.Background(), caller), caller)
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() { _, _ = c.Inventory(ctx, "47", "8847291") })
	}
	wg.Wait()
}

// held is the budget's places held by caller and the requests of caller
// waiting, and all requests open or waiting.
func held(c *Client, caller string) (open, waiting, outstanding int) {
	b := c.budget
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, q := range b.queues {
		for _, w := range q {
			if w.caller == caller {
				waiting++
			}
		}
	}
	return b.held[caller], waiting, b.inFlight + b.queued
}

// stepOne lets one request answer and waits until the budget has given
// its place back (and to whom it went).
func stepOne(t *testing.T, s *steppedStoreLink, c *Client) {
	t.Helper()
	_, _, before := held(c, "")
	select {
	case s.step <- struct{}{}:
	case <-time.After(5 * time.Second):
		// A bound, not a timing: nothing was open at StoreLink to answer.
		t.Fatal("no request was open at StoreLink while some waited")
	}
	for i := 0; ; i++ {
		if _, _, now := held(c, ""); now == before-1 {
			return
		}
		if i == 10000 {
			t.Fatal("an answered request never gave its place back")
		}
		time.Sleep(time.Millisecond)
	}
}

// TestBudgetShareHoldsWhileAnotherCallerWaits: a lone caller holds the whole
// budget of 4. Once another caller waits, the first gets no further place
// while it holds its share (2) or more, the second is served within two answers, holds at most its share (2),
// and never takes the last place (it starts with at most 3 open at
// StoreLink); alone again, the first has the whole budget.
func TestBudgetShareHoldsWhileAnotherCallerWaits(t *testing.T) {
	s := &steppedStoreLink{step: make(chan struct{})}
	srv := httptest.NewServer(s)
	defer srv.Close()
	var stepped sync.Once
	defer stepped.Do(func() { close(s.step) })
	const most, share = 4, 2
	c, _ := budgetClient(t, srv, most)
	var wg sync.WaitGroup
	wg.Go(func() { callerBurst(c, "sweeper", 40) })
	waitQueued(t, c, 40-most)
	if n, _, _ := held(c, "sweeper"); n != most {
		t.Fatalf("a lone caller holds %d of the budget's %d", n, most)
	}
	wg.Go(func() { callerBurst(c, "other", 6) })
	waitQueued(t, c, 40-most+6)

	sweeperHeld, steps := most, 0
	for {
		_, waiting, _ := held(c, "other")
		if waiting == 0 {
			break
		}
		stepOne(t, s, c)
		steps++
		sw, _, _ := held(c, "sweeper")
		ot, _, _ := held(c, "other")
		if sw > sweeperHeld && sweeperHeld >= share {
			t.Fatalf("step %d: the sweeper went from %d to %d places while the other caller waited, share %d", steps, sweeperHeld, sw, share)
		}
		if ot > share {
			t.Fatalf("step %d: the other caller holds %d places while the sweeper waits, share %d", steps, ot, share)
		}
		if steps == 2 && ot == 0 {
			t.Fatal("the other caller was not served within two answers")
		}
		sweeperHeld = sw
	}
	s.mu.Lock()
	otherOpen := slices.Clone(s.otherOpen)
	s.mu.Unlock()
	for i, n := range otherOpen {
		if n > most-1 {
			t.Fatalf("the other caller's request %d started with %d open at StoreLink: it took the last place of %d", i+1, n, most)
		}
	}
	// Once the other caller is done, the sweeper has the whole budget again.
	for {
		if ot, _, _ := held(c, "other"); ot == 0 {
			break
		}
		stepOne(t, s, c)
	}
	if sw, _, _ := held(c, "sweeper"); sw != most {
		t.Fatalf("alone again, the sweeper holds %d of %d", sw, most)
	}
	stepped.Do(func() { close(s.step) })
	wg.Wait()
}
