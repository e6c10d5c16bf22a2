package notify

// Delivery attempts: retries and backoff, timeouts, redirects and network
// errors, each ending in one log line that names no secret.

import (
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// 5xx answers are retried with doubling backoff up to the attempts; other
// 4xx are not; a 429's Retry-After replaces the backoff unless over the cap.
func TestRetryPolicy(t *testing.T) {
	status := func(code int, first int) func(int, http.ResponseWriter, *http.Request) {
		return func(n int, w http.ResponseWriter, _ *http.Request) {
			if first == 0 || n <= first {
				w.WriteHeader(code)
			}
		}
	}
	retryAfter := func(header string) func(int, http.ResponseWriter, *http.Request) {
		return func(n int, w http.ResponseWriter, _ *http.Request) {
			if n == 1 {
				w.Header().Set("Retry-After", header)
				w.WriteHeader(http.StatusTooManyRequests)
			}
		}
	}
	const sent, failed = "approval.webhook_sent", "approval.webhook_failed"
	for _, tc := range []struct {
		name     string
		answer   func(int, http.ResponseWriter, *http.Request)
		requests int
		waits    []time.Duration
		line     string
		fields   map[string]any
	}{
		{"server errors", status(500, 2), 3, []time.Duration{time.Second, 2 * time.Second}, sent, map[string]any{"attempts": 3.0, "status": 200.0}},
		{"gives up after attempts", status(502, 0), 4, []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, failed, map[string]any{"status": 502.0, "attempts": 4.0, "reason": "http_status"}},
		{"no retry on client error", status(400, 0), 1, nil, failed, map[string]any{"status": 400.0, "attempts": 1.0, "reason": "refused"}},
		{"retry-after seconds", retryAfter("7"), 2, []time.Duration{7 * time.Second}, sent, nil},
		{"retry-after http date", retryAfter(now.Add(30 * time.Second).Format(http.TimeFormat)), 2, []time.Duration{30 * time.Second}, sent, nil},
		{"retry-after shorter than the backoff", retryAfter("0"), 2, []time.Duration{time.Second}, sent, nil},
		{"retry-after unreadable", retryAfter("soon"), 2, []time.Duration{time.Second}, sent, nil},
		{"retry-after over the cap", retryAfter("3600"), 1, nil, failed, map[string]any{"reason": "retry_after_too_long"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc, l, s := deliverOne(t, tc.answer, nil)
			got := rc.received()
			if len(got) != tc.requests || !cmp.Equal(got[0], got[len(got)-1]) {
				t.Errorf("received %d notices, want %d, or retries changed the body: %v", len(got), tc.requests, got)
			}
			if diff := cmp.Diff(tc.waits, s.got()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			l.wantOne(t, tc.line, tc.fields)
			if other := map[string]string{sent: failed, failed: sent}[tc.line]; len(l.lines(t, other)) != 0 {
				t.Errorf("a %s line beside the %s line:\n%s", other, tc.line, l)
			}
		})
	}
}

func TestHangingReceiverTimesOutAndFails(t *testing.T) {
	rc, l, _ := deliverOne(t, func(_ int, w http.ResponseWriter, r *http.Request) { <-r.Context().Done() },
		func(o *Options) { o.AttemptTimeout = 20 * time.Millisecond })
	// An attempt may time out before the receiver reads it, so only the
	// notifier's own count is exact.
	if got := len(rc.received()); got < 1 || got > DefaultAttempts {
		t.Errorf("the receiver saw %d attempts, want 1 to %d", got, DefaultAttempts)
	}
	l.wantOne(t, "approval.webhook_failed", map[string]any{"reason": "network", "attempts": 4.0, "status": 0.0, "error": "no answer within 20ms", "level": "WARN"})
}

func TestJitterStaysWithinAQuarter(t *testing.T) {
	_, _, s := deliverOne(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) },
		func(o *Options) { o.Jitter = nil })
	got := s.got()
	if len(got) != 3 {
		t.Fatalf("waits %v", got)
	}
	for i, d := range got {
		base := time.Second << i
		if d < base || d >= base+base/4 {
			t.Errorf("wait %d = %s, want [%s, %s)", i, d, base, base+base/4)
		}
	}
}

func TestRedirectIsNotFollowed(t *testing.T) {
	var mu sync.Mutex
	hits := 0
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits++
		mu.Unlock()
	}))
	defer other.Close()
	rc, l, s := deliverOne(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
	}, nil)
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Errorf("the redirect target got %d requests", hits)
	}
	if got := len(rc.received()); got != 1 || len(s.got()) != 0 {
		t.Errorf("%d requests and waits %v after a redirect, want 1 and none", got, s.got())
	}
	l.wantOne(t, "approval.webhook_failed", map[string]any{"status": 307.0, "reason": "redirect_not_followed"})
}

// The transport's error quotes the whole URL, which must not reach the log.
func TestNetworkErrorLogsOnlyTheHost(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	target := "http://hook:" + userSecret + "@" + addr + "/hook/" + pathSecret + "?token=" + querySecret
	l, s := &logs{}, &sleeps{}
	n := start(t, target, l, s, nil)
	n.Staged(butter(approvalID))
	closeNow(t, n)
	f := l.lines(t, "approval.webhook_failed")
	if len(f) != 1 || f[0]["reason"] != "network" || f[0]["attempts"] != 4.0 || f[0]["host"] != addr {
		t.Fatalf("failed lines: %v", f)
	}
	if e, _ := f[0]["error"].(string); !strings.Contains(e, "connection refused") {
		t.Errorf("error %q does not say what happened", e)
	}
	l.noSecrets(t)
}
