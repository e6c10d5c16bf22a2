package notify

// Test harness: a verifying webhook receiver, a notifier on a fixed clock
// with recorded sleeps, and its log lines.

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
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

// sleeps records the waits between attempts and returns at once.
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
// and keeps what it received.
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

// url is the receiver's URL with a token wherever a chat webhook might
// keep one.
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

// start builds a notifier for target with a fixed clock, recorded sleeps
// and no jitter, closed at the end of the test.
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

// deliverOne stages one notice and closes the notifier, so every attempt
// has ended.
func deliverOne(t *testing.T, answer func(int, http.ResponseWriter, *http.Request), edit func(*Options)) (*receiver, *logs, *sleeps) {
	t.Helper()
	rc := newReceiver(t, answer)
	l, s := &logs{}, &sleeps{}
	n := start(t, rc.url(), l, s, edit)
	n.Staged(butter(approvalID))
	closeNow(t, n)
	return rc, l, s
}

// wantOne fails unless the log holds exactly one line msg, with fields.
func (l *logs) wantOne(t *testing.T, msg string, fields map[string]any) {
	t.Helper()
	got := l.lines(t, msg)
	if len(got) != 1 {
		t.Errorf("%d %s lines, want 1:\n%s", len(got), msg, l)
		return
	}
	for k, want := range fields {
		if got[0][k] != want {
			t.Errorf("%s: %s = %v, want %v", msg, k, got[0][k], want)
		}
	}
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
