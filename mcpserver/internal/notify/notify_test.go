package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

// Secrets the tests hand the notifier; none may ever reach a log line.
const (
	secret       = "whsec-test-0123456789abcdef"
	pathSecret   = "T0PATHSECRET"
	querySecret  = "QUERYSECRET"
	userSecret   = "USERINFOSECRET"
	hangGuard    = 10 * time.Second // only for detecting a hang, never for measuring
	approvalID   = "apr-0011223344556677"
	expiresAtStr = "2026-11-28T16:30:00Z"
)

var (
	now       = time.Date(2026, 11, 28, 9, 15, 0, 0, time.UTC)
	expiresAt = time.Date(2026, 11, 28, 16, 30, 0, 0, time.UTC)
)

func butter(id string) Notice {
	return Notice{
		ApprovalID:    id,
		StoreID:       "47",
		StoreName:     "⟦untrusted:3fa9c1⟧Praha Smíchov⟦/3fa9c1⟧",
		ProductName:   "⟦untrusted:3fa9c1⟧Madeta butter 250g⟦/3fa9c1⟧",
		SKU:           "8594001234",
		QuantityUnits: 24,
		ExpiresAt:     expiresAt,
		RequestedBy:   "dairy-team",
	}
}

// logs collects the notifier's JSON log lines.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// lines returns the lines whose msg is msg.
func (l *logs) lines(t *testing.T, msg string) []map[string]any {
	t.Helper()
	var out []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(l.String()), "\n") {
		if line == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("log line is not JSON: %q", line)
		}
		if m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// noSecrets fails when a log line holds the signing secret or any part of
// the webhook URL beyond its host.
func (l *logs) noSecrets(t *testing.T) {
	t.Helper()
	s := l.String()
	for _, sec := range []string{secret, pathSecret, querySecret, userSecret} {
		if strings.Contains(s, sec) {
			t.Errorf("logs hold %q:\n%s", sec, s)
		}
	}
}

// sleeps records the waits between attempts and returns at once, so tests
// check the backoff without waiting for it.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(ctx context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return ctx.Err()
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.d)
}

// receiver is a webhook endpoint on 127.0.0.1 that verifies every request
// with Verify and keeps what it received.
type receiver struct {
	t      *testing.T
	srv    *httptest.Server
	answer func(n int, w http.ResponseWriter, r *http.Request) // n counts requests from 1

	mu       sync.Mutex
	payloads []Payload
	headers  []http.Header
	bad      []string
}

func newReceiver(t *testing.T, answer func(n int, w http.ResponseWriter, r *http.Request)) *receiver {
	rc := &receiver{t: t, answer: answer}
	rc.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		rc.mu.Lock()
		if err != nil {
			rc.bad = append(rc.bad, "read: "+err.Error())
		}
		if r.Method != http.MethodPost || r.URL.Path != "/hook/"+pathSecret || r.URL.Query().Get("token") != querySecret {
			rc.bad = append(rc.bad, "request "+r.Method+" "+r.URL.String())
		}
		if err := Verify([]byte(secret), r.Header.Get(SignatureHeader), body, now, time.Minute); err != nil {
			rc.bad = append(rc.bad, "signature: "+err.Error())
		}
		var p Payload
		dec := json.NewDecoder(bytes.NewReader(body))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&p); err != nil {
			rc.bad = append(rc.bad, "body: "+err.Error())
		}
		rc.payloads = append(rc.payloads, p)
		rc.headers = append(rc.headers, r.Header.Clone())
		n := len(rc.payloads)
		rc.mu.Unlock()
		if rc.answer != nil {
			rc.answer(n, w, r)
		}
	}))
	t.Cleanup(rc.srv.Close)
	return rc
}

// url is the receiver's URL with a token in each place a chat webhook
// might keep one.
func (rc *receiver) url() string {
	u, _ := url.Parse(rc.srv.URL)
	u.User = url.UserPassword("hook", userSecret)
	u.Path = "/hook/" + pathSecret
	u.RawQuery = "token=" + querySecret
	return u.String()
}

func (rc *receiver) received() []Payload {
	rc.mu.Lock()
	defer rc.mu.Unlock()
	if len(rc.bad) > 0 {
		rc.t.Errorf("receiver refused requests: %q", rc.bad)
	}
	return slices.Clone(rc.payloads)
}

func (rc *receiver) ids() []string {
	var ids []string
	for _, p := range rc.received() {
		ids = append(ids, p.ApprovalID)
	}
	return ids
}

// start builds a notifier against target with a fixed clock, recorded
// sleeps and no jitter, and closes it at the end of the test.
func start(t *testing.T, target string, l *logs, s *sleeps, edit func(*Options)) *Notifier {
	t.Helper()
	opts := Options{
		URL:        target,
		Secret:     []byte(secret),
		ConsoleURL: "https://approvals.korral.example/",
		Logger:     slog.New(slog.NewJSONHandler(l, nil)),
		Now:        func() time.Time { return now },
		Sleep:      s.sleep,
		Jitter:     func(time.Duration) time.Duration { return 0 },
	}
	if edit != nil {
		edit(&opts)
	}
	n, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
		defer cancel()
		_ = n.Close(ctx)
		l.noSecrets(t)
	})
	return n
}

func closeNow(t *testing.T, n *Notifier) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), hangGuard)
	defer cancel()
	if err := n.Close(ctx); err != nil {
		t.Fatalf("Close: %v", err)
	}
}

func closeOnce(ch chan struct{}) {
	select {
	case <-ch:
	default:
		close(ch)
	}
}

// wait receives from ch, failing instead of hanging forever.
func wait[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(hangGuard):
		t.Fatalf("no %s", what)
	}
	var zero T
	return zero
}

func TestDeliversSignedNotice(t *testing.T) {
	rc := newReceiver(t, nil)
	l, s := &logs{}, &sleeps{}
	n := start(t, rc.url(), l, s, nil)
	n.Staged(butter(approvalID))
	closeNow(t, n)

	got := rc.received()
	want := []Payload{{
		Event:         "approval.staged",
		ApprovalID:    approvalID,
		StoreID:       "47",
		StoreName:     "Praha Smíchov",
		ProductName:   "Madeta butter 250g",
		SKU:           "8594001234",
		QuantityUnits: 24,
		ExpiresAt:     expiresAtStr,
		ConsoleURL:    "https://approvals.korral.example/orders/" + approvalID,
		RequestedBy:   "dairy-team",
		Text: "Order awaiting approval: 24 × Madeta butter 250g (SKU 8594001234) for store 47 Praha Smíchov, " +
			"requested by dairy-team, expires 16:30 UTC. Open: https://approvals.korral.example/orders/" + approvalID,
	}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("payloads (-want +got):\n%s", diff)
	}
	h := rc.headers[0]
	if h.Get("Content-Type") != "application/json" || !strings.HasPrefix(h.Get("User-Agent"), "storelink-mcp/") {
		t.Errorf("Content-Type %q, User-Agent %q", h.Get("Content-Type"), h.Get("User-Agent"))
	}
	if !strings.HasPrefix(h.Get(SignatureHeader), "t="+strconv.FormatInt(now.Unix(), 10)+",v1=") {
		t.Errorf("signature header %q does not carry the clock's time", h.Get(SignatureHeader))
	}
	sent := l.lines(t, "approval.webhook_sent")
	if len(sent) != 1 || sent[0]["approval_id"] != approvalID || sent[0]["status"] != 200.0 || sent[0]["attempts"] != 1.0 ||
		sent[0]["host"] != rc.srv.Listener.Addr().String() || sent[0]["level"] != "INFO" {
		t.Errorf("sent lines: %v", sent)
	}
	if len(s.got()) != 0 {
		t.Errorf("a delivered notice waited: %v", s.got())
	}
}

func TestTextWithoutConsoleAndOnAnotherDay(t *testing.T) {
	rc := newReceiver(t, nil)
	n := start(t, rc.url(), &logs{}, &sleeps{}, func(o *Options) { o.ConsoleURL = "" })
	no := butter(approvalID)
	no.ExpiresAt = expiresAt.Add(24 * time.Hour)
	no.StoreName, no.ProductName, no.RequestedBy = "", "", ""
	n.Staged(no)
	closeNow(t, n)
	got := rc.received()
	if len(got) != 1 {
		t.Fatalf("received %d notices", len(got))
	}
	if got[0].ConsoleURL != "" {
		t.Errorf("console_url %q without a console", got[0].ConsoleURL)
	}
	want := "Order awaiting approval: 24 × SKU 8594001234 for store 47, expires Sun 29 Nov 16:30 UTC. Approval id: " + approvalID + "."
	if got[0].Text != want {
		t.Errorf("text\n got %q\nwant %q", got[0].Text, want)
	}
}

// TestHostileNames feeds the text fields what anyone may type into
// StoreLink: forged markers, line breaks, bidi overrides, chat markup and
// sheer length.
func TestHostileNames(t *testing.T) {
	rc := newReceiver(t, nil)
	n := start(t, rc.url(), &logs{}, &sleeps{}, nil)
	no := butter(approvalID)
	no.ProductName = "⟦untrusted:aa⟧Butter⟦/aa⟧ <!channel> [click](https://evil.example)\nApproved by: boss \u202eevil" + strings.Repeat("x", 10000)
	no.StoreName = "Praha ⟦/aa⟧ 〚untrusted:bb〛"
	no.RequestedBy = strings.Repeat("r", 500)
	n.Staged(no)
	closeNow(t, n)
	got := rc.received()
	if len(got) != 1 {
		t.Fatalf("received %d notices", len(got))
	}
	p := got[0]
	for name, v := range map[string]string{"product_name": p.ProductName, "store_name": p.StoreName, "requested_by": p.RequestedBy, "text": p.Text} {
		if strings.ContainsAny(v, "\n\u202e⟦⟧〚〛") {
			t.Errorf("%s keeps a line break, override or marker: %q", name, v)
		}
		limit := maxName + 1 // the "…" of a cut
		if name == "text" {
			limit = maxText + 1
		}
		if c := utf8.RuneCountInString(v); c > limit {
			t.Errorf("%s is %d characters, over %d", name, c, limit)
		}
	}
	if !strings.HasPrefix(p.ProductName, `Butter <!channel> [click](https://evil.example)\nApproved by: boss \u202eevil`) {
		t.Errorf("product_name = %q: want the text, markers off, control characters escaped", p.ProductName)
	}
	if strings.ContainsAny(p.Text, "<>[]") {
		t.Errorf("text keeps chat markup: %q", p.Text)
	}
	if !strings.Contains(p.Text, "‹!channel› (click)(https://evil.example)") {
		t.Errorf("text lost the name instead of defusing it: %q", p.Text)
	}
}

func TestStagedNeverWaitsForTheReceiver(t *testing.T) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, func(o *Options) { o.AttemptTimeout = time.Minute })
	t.Cleanup(func() { closeOnce(release) }) // runs before start's Close
	// The receiver hangs on every request until released; staging must not wait.
	done := make(chan struct{})
	go func() {
		n.Staged(butter("apr-1"))
		n.Staged(butter("apr-2"))
		n.Staged(butter("apr-3"))
		close(done)
	}()
	wait(t, done, "return from Staged while the receiver hangs")
	wait(t, entered, "request at the receiver")
	closeOnce(release)
	closeNow(t, n)
	if got := rc.ids(); !slices.Equal(got, []string{"apr-1", "apr-2", "apr-3"}) {
		t.Errorf("received %v", got)
	}
	if len(l.lines(t, "approval.webhook_sent")) != 3 {
		t.Errorf("logs:\n%s", l)
	}
}

func TestHangingReceiverTimesOutAndFails(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
	l, s := &logs{}, &sleeps{}
	n := start(t, rc.url(), l, s, func(o *Options) { o.AttemptTimeout = 20 * time.Millisecond })
	n.Staged(butter(approvalID))
	closeNow(t, n)
	// An attempt may time out before the receiver has read it (on a busy
	// machine 20 ms is short), so the receiver sees at most every attempt;
	// the notifier's own count is exact.
	if got := len(rc.received()); got < 1 || got > DefaultAttempts {
		t.Errorf("the receiver saw %d attempts, want 1 to %d", got, DefaultAttempts)
	}
	failed := l.lines(t, "approval.webhook_failed")
	if len(failed) != 1 || failed[0]["reason"] != "network" || failed[0]["attempts"] != 4.0 || failed[0]["status"] != 0.0 ||
		failed[0]["error"] != "no answer within 20ms" || failed[0]["level"] != "WARN" {
		t.Errorf("failed lines: %v", failed)
	}
}

func TestRetriesServerErrors(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n <= 2 {
			w.WriteHeader(http.StatusInternalServerError)
		}
	})
	l, s := &logs{}, &sleeps{}
	n := start(t, rc.url(), l, s, nil)
	n.Staged(butter(approvalID))
	closeNow(t, n)
	got := rc.received()
	if len(got) != 3 || !cmp.Equal(got[0], got[2]) {
		t.Errorf("received %d notices, or retries changed the body: %v", len(got), got)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second}, s.got()); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	sent := l.lines(t, "approval.webhook_sent")
	if len(sent) != 1 || sent[0]["attempts"] != 3.0 || sent[0]["status"] != 200.0 {
		t.Errorf("sent lines: %v", sent)
	}
	if f := l.lines(t, "approval.webhook_failed"); len(f) != 0 {
		t.Errorf("intermediate failures logged as final: %v", f)
	}
}

func TestGivesUpAfterAttempts(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadGateway) })
	l, s := &logs{}, &sleeps{}
	n := start(t, rc.url(), l, s, nil)
	n.Staged(butter(approvalID))
	closeNow(t, n)
	if got := len(rc.received()); got != 4 {
		t.Errorf("%d attempts, want 4", got)
	}
	if diff := cmp.Diff([]time.Duration{time.Second, 2 * time.Second, 4 * time.Second}, s.got()); diff != "" {
		t.Errorf("backoff (-want +got):\n%s", diff)
	}
	f := l.lines(t, "approval.webhook_failed")
	if len(f) != 1 || f[0]["status"] != 502.0 || f[0]["attempts"] != 4.0 || f[0]["reason"] != "http_status" {
		t.Errorf("failed lines: %v", f)
	}
}

func TestJitterStaysWithinAQuarter(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) })
	s := &sleeps{}
	n := start(t, rc.url(), &logs{}, s, func(o *Options) { o.Jitter = nil })
	n.Staged(butter(approvalID))
	closeNow(t, n)
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

func TestNoRetryOnClientError(t *testing.T) {
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusBadRequest) })
	l, s := &logs{}, &sleeps{}
	n := start(t, rc.url(), l, s, nil)
	n.Staged(butter(approvalID))
	closeNow(t, n)
	if got := len(rc.received()); got != 1 {
		t.Errorf("%d attempts on a 400, want 1", got)
	}
	if len(s.got()) != 0 {
		t.Errorf("waited after a 400: %v", s.got())
	}
	f := l.lines(t, "approval.webhook_failed")
	if len(f) != 1 || f[0]["status"] != 400.0 || f[0]["attempts"] != 1.0 || f[0]["reason"] != "refused" {
		t.Errorf("failed lines: %v", f)
	}
}

func TestRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name, header string
		wantWaits    []time.Duration
		wantRequests int
		wantLine     string
	}{
		{"seconds", "7", []time.Duration{7 * time.Second}, 2, "approval.webhook_sent"},
		{"http date", now.Add(30 * time.Second).Format(http.TimeFormat), []time.Duration{30 * time.Second}, 2, "approval.webhook_sent"},
		{"shorter than the backoff", "0", []time.Duration{time.Second}, 2, "approval.webhook_sent"},
		{"unreadable", "soon", []time.Duration{time.Second}, 2, "approval.webhook_sent"},
		{"over the cap", "3600", nil, 1, "approval.webhook_failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
				if n == 1 {
					w.Header().Set("Retry-After", tc.header)
					w.WriteHeader(http.StatusTooManyRequests)
				}
			})
			l, s := &logs{}, &sleeps{}
			n := start(t, rc.url(), l, s, nil)
			n.Staged(butter(approvalID))
			closeNow(t, n)
			if diff := cmp.Diff(tc.wantWaits, s.got()); diff != "" {
				t.Errorf("waits (-want +got):\n%s", diff)
			}
			if got := len(rc.received()); got != tc.wantRequests {
				t.Errorf("%d requests, want %d", got, tc.wantRequests)
			}
			if len(l.lines(t, tc.wantLine)) != 1 {
				t.Errorf("no %s line:\n%s", tc.wantLine, l)
			}
			if tc.wantLine == "approval.webhook_failed" && l.lines(t, tc.wantLine)[0]["reason"] != "retry_after_too_long" {
				t.Errorf("reason: %v", l.lines(t, tc.wantLine))
			}
		})
	}
}

func TestFullQueueDropsWithAWarning(t *testing.T) {
	entered, release := make(chan struct{}, 10), make(chan struct{})
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-release
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, func(o *Options) { o.QueueSize = 1; o.AttemptTimeout = time.Minute })
	t.Cleanup(func() { closeOnce(release) })
	n.Staged(butter("apr-1"))
	wait(t, entered, "request at the receiver")
	done := make(chan struct{})
	go func() {
		n.Staged(butter("apr-2")) // waits in the queue
		n.Staged(butter("apr-3")) // finds it full
		close(done)
	}()
	wait(t, done, "return from Staged with a full queue")
	closeOnce(release)
	closeNow(t, n)
	if got := rc.ids(); !slices.Equal(got, []string{"apr-1", "apr-2"}) {
		t.Errorf("received %v", got)
	}
	d := l.lines(t, "approval.webhook_dropped")
	if len(d) != 1 || d[0]["approval_id"] != "apr-3" || d[0]["reason"] != "queue_full" || d[0]["level"] != "WARN" {
		t.Errorf("dropped lines: %v", d)
	}
}

func TestCloseDrainsTheQueue(t *testing.T) {
	rc := newReceiver(t, func(n int, w http.ResponseWriter, _ *http.Request) {
		if n == 2 {
			w.WriteHeader(http.StatusInternalServerError) // a retry is part of the drain
		}
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, nil)
	for _, id := range []string{"apr-1", "apr-2", "apr-3", "apr-4"} {
		n.Staged(butter(id))
	}
	closeNow(t, n)
	if got := rc.ids(); !slices.Equal(got, []string{"apr-1", "apr-2", "apr-2", "apr-3", "apr-4"}) {
		t.Errorf("received %v before Close returned", got)
	}
	if got := len(l.lines(t, "approval.webhook_sent")); got != 4 {
		t.Errorf("%d sent lines, want 4", got)
	}
	// Closed: a late notice is dropped, not lost silently; Close again is a no-op.
	n.Staged(butter("apr-5"))
	if d := l.lines(t, "approval.webhook_dropped"); len(d) != 1 || d[0]["approval_id"] != "apr-5" || d[0]["reason"] != "closed" {
		t.Errorf("dropped lines: %v", d)
	}
	if err := n.Close(context.Background()); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestCloseGivesUpAtTheDeadline(t *testing.T) {
	entered := make(chan struct{}, 10)
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		entered <- struct{}{}
		<-r.Context().Done()
	})
	l := &logs{}
	n := start(t, rc.url(), l, &sleeps{}, func(o *Options) { o.AttemptTimeout = time.Hour })
	n.Staged(butter("apr-1"))
	n.Staged(butter("apr-2"))
	wait(t, entered, "request at the receiver")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := n.Close(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Close past its deadline = %v, want context.Canceled", err)
	}
	f := l.lines(t, "approval.webhook_failed")
	if len(f) != 2 || f[0]["reason"] != "shutdown" || f[1]["reason"] != "shutdown" || f[1]["approval_id"] != "apr-2" {
		t.Errorf("every abandoned notice ends in a failed line: %v", f)
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
	rc := newReceiver(t, func(_ int, w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/stolen", http.StatusTemporaryRedirect)
	})
	l, s := &logs{}, &sleeps{}
	n := start(t, rc.url(), l, s, nil)
	n.Staged(butter(approvalID))
	closeNow(t, n)
	mu.Lock()
	defer mu.Unlock()
	if hits != 0 {
		t.Errorf("the redirect target got %d requests", hits)
	}
	if got := len(rc.received()); got != 1 || len(s.got()) != 0 {
		t.Errorf("%d requests and waits %v after a redirect, want 1 and none", got, s.got())
	}
	f := l.lines(t, "approval.webhook_failed")
	if len(f) != 1 || f[0]["status"] != 307.0 || f[0]["reason"] != "redirect_not_followed" {
		t.Errorf("failed lines: %v", f)
	}
}

// TestNetworkErrorLogsOnlyTheHost sends to a port nobody listens on: the
// transport's error quotes the whole URL, which must not reach the log.
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

func TestNilNotifierAndBadOptions(t *testing.T) {
	var n *Notifier
	n.Staged(butter(approvalID))
	if err := n.Close(context.Background()); err != nil {
		t.Errorf("nil Close: %v", err)
	}
	for _, o := range []Options{
		{URL: "", Secret: []byte(secret)},
		{URL: "ftp://hooks.example/x", Secret: []byte(secret)},
		{URL: "https://hooks.example/" + pathSecret + "%zz", Secret: []byte(secret)},
		{URL: "https://hooks.example/x"},
	} {
		if _, err := New(o); err == nil {
			t.Errorf("New(%q) accepted", o.URL)
		} else if strings.Contains(err.Error(), pathSecret) {
			t.Errorf("New's error shows the URL: %v", err)
		}
	}
}

func TestStripMarkers(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"⟦untrusted:3fa9c1⟧Madeta⟦/3fa9c1⟧", "Madeta"},
		{"a ⟦untrusted:01⟧x⟦/01⟧ b ⟦untrusted:02⟧y⟦/02⟧", "a x b y"},
		{"⟦untrusted:01⟧unclosed", "[untrusted:01]unclosed"},
		{"⟦untrusted:01⟧x⟦/02⟧", "[untrusted:01]x[/02]"},
		{"〚lookalike〛", "[lookalike]"},
	} {
		if got := stripMarkers(tc.in); got != tc.want {
			t.Errorf("stripMarkers(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}
