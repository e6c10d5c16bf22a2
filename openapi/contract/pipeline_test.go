package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// throttle answers the first n requests matching match with 429 and the
// given Retry-After, then lets them through.
func throttle(match func(*http.Request) bool, n int32, retryAfter string) (func(http.Handler) http.Handler, *atomic.Int32) {
	var seen atomic.Int32
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if match(r) && seen.Add(1) <= n {
				if retryAfter != "" {
					w.Header().Set("Retry-After", retryAfter)
				}
				writeErr(w, http.StatusTooManyRequests, "rate_limited")
				return
			}
			next.ServeHTTP(w, r)
		})
	}, &seen
}

// isSKURead matches the SKU read with store 47's own key.
func isSKURead(r *http.Request) bool {
	return r.URL.Path == "/v1/skus/"+fakeSKU && r.Header.Get("X-Korral-Store-Key") == newFake().keys["47"]
}

func TestThrottledProbeIsRetriedAfterRetryAfter(t *testing.T) {
	t.Parallel()
	f := newFake()
	wrap, seen := throttle(isSKURead, 2, "0")
	srv := f.serve(t, wrap)
	rep := check(t, config(f, srv.URL))
	p := findProbe(t, rep, opGetSKU, "valid key")
	if p.Verdict != Pass || p.Retries != 2 {
		t.Errorf("probe = %s after %d retries (%q), want pass after 2", p.Verdict, p.Retries, p.Detail)
	}
	if got := seen.Load(); got != 3 {
		t.Errorf("StoreLink saw %d SKU reads, want 3 (two 429s, then the answer)", got)
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d, want 0: %v", rep.ExitCode(), failing(rep))
	}
}

func TestThrottleBeyondTheDeadlineIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	f := newFake()
	wrap, seen := throttle(isSKURead, 100, "3600")
	srv := f.serve(t, wrap)
	cfg := config(f, srv.URL)
	cfg.Deadline = time.Minute
	rep := check(t, cfg)
	p := findProbe(t, rep, opGetSKU, "valid key")
	if p.Verdict != Error || p.Retries != 0 || !strings.Contains(p.Detail, "429") {
		t.Errorf("probe = %s after %d retries (%q), want an error without retries", p.Verdict, p.Retries, p.Detail)
	}
	if got := seen.Load(); got != 1 {
		t.Errorf("StoreLink saw %d SKU reads, want 1", got)
	}
}

func TestThrottleRetriesAreBounded(t *testing.T) {
	t.Parallel()
	f := newFake()
	wrap, seen := throttle(isSKURead, 100, "0")
	srv := f.serve(t, wrap)
	rep := check(t, config(f, srv.URL))
	p := findProbe(t, rep, opGetSKU, "valid key")
	if p.Verdict != Error || p.Retries != maxRetries || !strings.Contains(p.Detail, "after 3 retries") {
		t.Errorf("probe = %s after %d retries (%q)", p.Verdict, p.Retries, p.Detail)
	}
	if got := seen.Load(); got != maxRetries+1 {
		t.Errorf("StoreLink saw %d SKU reads, want %d", got, maxRetries+1)
	}
}

func TestRetryWait(t *testing.T) {
	now := time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)
	ctx, cancel := context.WithDeadline(context.Background(), now.Add(time.Minute))
	defer cancel()
	cases := []struct {
		header string
		want   time.Duration
		ok     bool
	}{
		{"", defaultRetryWait, true},
		{"2", 2 * time.Second, true},
		{now.Add(10 * time.Second).Format(http.TimeFormat), 10 * time.Second, true},
		{now.Add(-time.Hour).Format(http.TimeFormat), 0, true},
		{"garbage", defaultRetryWait, true},
		{"60", time.Minute, false},
		{"59", 59 * time.Second, true},
	}
	for _, tc := range cases {
		h := http.Header{}
		if tc.header != "" {
			h.Set("Retry-After", tc.header)
		}
		got, ok := retryWait(ctx, h, now)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Retry-After %q: (%s, %v), want (%s, %v)", tc.header, got, ok, tc.want, tc.ok)
		}
	}
}

func TestExtraHeadersAreSentAndNeverReported(t *testing.T) {
	t.Parallel()
	f := newFake()
	const secret = "gw-9f8e7d6c5b4a"
	var with, without atomic.Int32
	srv := f.serve(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Gateway-Key") == secret {
				with.Add(1)
				// A careless gateway echoes what it got.
				w.Header().Set("X-Echo", secret)
			} else {
				without.Add(1)
			}
			next.ServeHTTP(w, r)
		})
	})
	cfg := config(f, srv.URL)
	cfg.Headers = http.Header{"X-Gateway-Key": {secret}, "X-Debug": {"1"}}
	rep := check(t, cfg)
	if p := findProbe(t, rep, opGetStore, "no key"); !strings.HasPrefix(p.Request, "GET /v1/stores/") {
		t.Errorf("a short header value garbles the report: %q", p.Request)
	}
	if with.Load() == 0 || without.Load() != 0 {
		t.Errorf("%d requests with the header, %d without; want all with", with.Load(), without.Load())
	}
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := rep.Write(&buf, format); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(buf.String(), secret) {
			t.Errorf("the %s report shows the header's value", format)
		}
	}
}

func TestHeaderConfigErrors(t *testing.T) {
	f := newFake()
	for _, tc := range []struct {
		headers http.Header
		want    string
	}{
		{http.Header{"X-Korral-Store-Key": {"abc"}}, "store key header"},
		{http.Header{"Bad Name": {"abc"}}, "not a valid header name"},
		{http.Header{"X-Gw": {"a\nb"}}, "control characters"},
	} {
		cfg := config(f, "http://127.0.0.1:1")
		cfg.Headers = tc.headers
		_, err := Check(context.Background(), cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("headers %v: error %v, want it to say %q", tc.headers, err, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "abc") {
			t.Errorf("error %q quotes the header's value", err)
		}
	}
}

func TestParseHeader(t *testing.T) {
	for in, want := range map[string][2]string{
		"X-Gateway-Key: abc":      {"X-Gateway-Key", "abc"},
		"x-gateway-key:abc:def":   {"X-Gateway-Key", "abc:def"},
		"Authorization: Bearer t": {"Authorization", "Bearer t"},
	} {
		name, value, err := ParseHeader(in)
		if err != nil || name != want[0] || value != want[1] {
			t.Errorf("ParseHeader(%q) = %q, %q, %v", in, name, value, err)
		}
	}
	for _, bad := range []string{"no colon secret", ": value", "bad name: v"} {
		if _, _, err := ParseHeader(bad); err == nil || strings.Contains(err.Error(), "secret") {
			t.Errorf("ParseHeader(%q) error = %v", bad, err)
		}
	}
}

func TestOperationsSelectProbes(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t)
	cfg := config(f, srv.URL)
	cfg.Operations = []string{opGetSKU, opGetSupplier}
	rep := check(t, cfg)
	ops := map[string]bool{}
	for _, p := range rep.Probes {
		ops[p.Operation] = true
	}
	if diff := cmp.Diff(map[string]bool{opGetSKU: true, opGetSupplier: true}, ops); diff != "" {
		t.Errorf("operations probed (-want +got):\n%s", diff)
	}
	// The supplier probe learns its id from the selected SKU probe.
	if p := findProbe(t, rep, opGetSupplier, "valid key"); p.Verdict != Pass {
		t.Errorf("supplier probe = %s %q", p.Verdict, p.Detail)
	}
	for _, r := range f.sent() {
		if !strings.Contains(r, "/v1/skus/") && !strings.Contains(r, "/v1/suppliers/") {
			t.Errorf("unselected request sent: %s", r)
		}
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d: %v", rep.ExitCode(), failing(rep))
	}

	cfg.Operations = []string{"getStock"}
	if _, err := Check(context.Background(), cfg); err == nil || !strings.Contains(err.Error(), "getInventory") {
		t.Errorf("unknown operation: error %v, want the list of operations", err)
	}
}

func TestReportCarriesTimes(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t)
	before := time.Now().UTC().Truncate(time.Millisecond)
	rep := check(t, config(f, srv.URL))
	if rep.StartedAt.Before(before) || rep.StartedAt.After(time.Now()) {
		t.Errorf("started_at %s is not the time of the check", rep.StartedAt)
	}
	var probed float64
	for _, p := range rep.Probes {
		if p.Verdict == Skipped && p.DurationMS != 0 {
			t.Errorf("skipped probe %s/%s has a duration", p.Operation, p.Probe)
		}
		probed += p.DurationMS
	}
	if probed <= 0 || rep.DurationMS < probed {
		t.Errorf("duration %.3f ms, probes together %.3f ms", rep.DurationMS, probed)
	}
	var back Report
	var buf bytes.Buffer
	if err := rep.WriteJSON(&buf); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(buf.Bytes(), &back); err != nil || !back.StartedAt.Equal(rep.StartedAt) {
		t.Errorf("started_at does not round-trip: %v %s", err, back.StartedAt)
	}
}
