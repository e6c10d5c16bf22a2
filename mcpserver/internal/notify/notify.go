// Package notify POSTs a signed JSON notice to the operator's webhook when an
// order is staged for approval. Delivery runs in the background with a few
// retries and ends in one log line per notice. It must never delay or fail
// the tool call, and a notice must never carry a key, token or other secret.
// Requests are signed with HMAC-SHA256 (see Sign and Verify).
package notify

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/buildinfo"
)

// Defaults of Options' zero values.
const (
	// DefaultAttempts is how many times one notice is sent at most.
	DefaultAttempts = 4
	// DefaultBackoff is the first retry wait; it doubles each time, plus up
	// to a quarter of jitter.
	DefaultBackoff = time.Second
	// DefaultMaxRetryAfter is the longest Retry-After honoured; longer is
	// not retried.
	DefaultMaxRetryAfter = time.Minute
	// DefaultAttemptTimeout bounds one attempt, connection to last byte.
	DefaultAttemptTimeout = 5 * time.Second
	// DefaultQueueSize bounds waiting notices; newer ones are dropped.
	DefaultQueueSize = 100
)

// responseDrainLimit is how much of a response body is drained for reuse.
const responseDrainLimit = 64 << 10

// Options configures a Notifier. URL and Secret are required; other zero
// values mean the defaults.
type Options struct {
	// URL receives the POSTs. It may carry a token: only its host is logged.
	URL string
	// Secret keys the HMAC-SHA256 signature.
	Secret []byte
	// ConsoleURL is the console's public base URL; "" omits the link.
	ConsoleURL string
	// Transport carries the requests; nil means no environment proxy.
	Transport http.RoundTripper
	// Logger receives one line per notice; nil discards them.
	Logger *slog.Logger
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// Sleep waits between attempts, returning early with ctx's error; nil
	// means a timer.
	Sleep func(ctx context.Context, d time.Duration) error
	// Jitter returns the extra added to a backoff of d; nil: up to d/4.
	Jitter func(d time.Duration) time.Duration
	// Attempts bounds the sends of one notice (DefaultAttempts).
	Attempts int
	// Backoff is the first wait between attempts (DefaultBackoff).
	Backoff time.Duration
	// MaxRetryAfter caps a 429's Retry-After (DefaultMaxRetryAfter).
	MaxRetryAfter time.Duration
	// AttemptTimeout bounds one attempt (DefaultAttemptTimeout).
	AttemptTimeout time.Duration
	// QueueSize bounds the notices waiting for delivery (DefaultQueueSize).
	QueueSize int
	// UserAgent names the sender; "" means storelink-mcp/<version>.
	UserAgent string
}

// Notifier delivers notices in the background, one at a time, in staging
// order. A nil *Notifier is valid and does nothing.
type Notifier struct {
	opts   Options
	host   string
	client *http.Client

	mu     sync.Mutex
	closed bool
	queue  chan Notice

	ctx    context.Context // cancelled when Close runs out of time
	cancel context.CancelFunc
	done   chan struct{}
}

// New starts a Notifier's worker. It needs an absolute http(s) URL and a
// secret. Call Close when done.
func New(opts Options) (*Notifier, error) {
	u, err := url.Parse(opts.URL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		// url.Parse's error would repeat the URL, which may hold a token.
		return nil, errors.New("notify: the webhook URL must be an absolute http or https URL")
	}
	if len(opts.Secret) == 0 {
		return nil, errors.New("notify: the webhook needs a signing secret")
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.DiscardHandler)
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Sleep == nil {
		opts.Sleep = sleep
	}
	if opts.Jitter == nil {
		opts.Jitter = func(d time.Duration) time.Duration {
			if d < 4 {
				return 0
			}
			return rand.N(d / 4)
		}
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxRetryAfter <= 0 {
		opts.MaxRetryAfter = DefaultMaxRetryAfter
	}
	if opts.AttemptTimeout <= 0 {
		opts.AttemptTimeout = DefaultAttemptTimeout
	}
	if opts.QueueSize <= 0 {
		opts.QueueSize = DefaultQueueSize
	}
	if opts.UserAgent == "" {
		v := buildinfo.Get().Version
		if v == "(devel)" {
			v = "devel"
		}
		opts.UserAgent = "storelink-mcp/" + v
	}
	opts.ConsoleURL = strings.TrimSuffix(opts.ConsoleURL, "/")
	transport := opts.Transport
	if transport == nil {
		transport = &http.Transport{
			Proxy:               nil, // no environment proxy
			TLSHandshakeTimeout: opts.AttemptTimeout,
			IdleConnTimeout:     90 * time.Second,
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	n := &Notifier{
		opts: opts,
		host: u.Host,
		client: &http.Client{
			Transport: transport,
			// A redirect could carry the notice elsewhere: it counts as a failure.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
		queue:  make(chan Notice, opts.QueueSize),
		ctx:    ctx,
		cancel: cancel,
		done:   make(chan struct{}),
	}
	go n.run()
	return n, nil
}

// Staged queues a newly staged order's notice and returns at once; when the
// queue is full or closed, it is dropped with a warning.
func (n *Notifier) Staged(notice Notice) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	reason := "queue_full"
	if !n.closed {
		select {
		case n.queue <- notice:
			return
		default:
		}
	} else {
		reason = "closed"
	}
	n.opts.Logger.Warn("approval.webhook_dropped", "approval_id", clean(notice.ApprovalID, maxID),
		"reason", reason, "queue_size", n.opts.QueueSize, "host", n.host)
}

// Close stops taking notices and delivers queued ones until ctx ends, then
// logs the rest as failed and returns ctx's error. Later calls return nil.
func (n *Notifier) Close(ctx context.Context) error {
	if n == nil {
		return nil
	}
	n.mu.Lock()
	if n.closed {
		n.mu.Unlock()
		return nil
	}
	n.closed = true
	close(n.queue)
	n.mu.Unlock()
	select {
	case <-n.done:
		n.cancel()
		return nil
	case <-ctx.Done():
		n.cancel()
		<-n.done
		return ctx.Err()
	}
}

func (n *Notifier) run() {
	defer close(n.done)
	for notice := range n.queue {
		n.deliver(notice)
	}
	n.client.CloseIdleConnections()
}

// outcome is what one attempt came to.
type outcome struct {
	status     int           // 0 when no answer came
	retryAfter time.Duration // from a 429, 0 if absent or unreadable
	err        error         // transport error, already stripped of the URL
}

// deliver sends one notice until accepted, refused or out of attempts,
// and logs the outcome.
func (n *Notifier) deliver(notice Notice) {
	id := clean(notice.ApprovalID, maxID)
	body, err := json.Marshal(n.payload(notice))
	if err != nil {
		// Cannot happen, but a notice must still end in a log line.
		n.failed(id, 0, 0, "encode", err)
		return
	}
	for attempt := 1; ; attempt++ {
		if n.ctx.Err() != nil {
			n.failed(id, 0, attempt-1, "shutdown", nil)
			return
		}
		o := n.attempt(body)
		switch {
		case o.err == nil && o.status >= 200 && o.status < 300:
			n.opts.Logger.Info("approval.webhook_sent", "approval_id", id, "status", o.status,
				"attempts", attempt, "host", n.host)
			return
		case n.ctx.Err() != nil:
			n.failed(id, o.status, attempt, "shutdown", nil)
			return
		case o.err == nil && o.status >= 300 && o.status < 400:
			n.failed(id, o.status, attempt, "redirect_not_followed", nil)
			return
		case o.err == nil && o.status != http.StatusTooManyRequests && o.status < 500:
			// The receiver refused this notice; sending it again changes nothing.
			n.failed(id, o.status, attempt, "refused", nil)
			return
		}
		reason := "http_status"
		if o.err != nil {
			reason = "network"
		}
		if attempt >= n.opts.Attempts {
			n.failed(id, o.status, attempt, reason, o.err)
			return
		}
		wait := n.opts.Backoff << (attempt - 1)
		wait += n.opts.Jitter(wait)
		if o.retryAfter > n.opts.MaxRetryAfter {
			n.failed(id, o.status, attempt, "retry_after_too_long", nil)
			return
		}
		wait = max(wait, o.retryAfter)
		if err := n.opts.Sleep(n.ctx, wait); err != nil {
			n.failed(id, o.status, attempt, "shutdown", nil)
			return
		}
	}
}

func (n *Notifier) failed(id string, status, attempts int, reason string, err error) {
	args := []any{"approval_id", id, "status", status, "attempts", attempts, "host", n.host, "reason", reason}
	if err != nil {
		args = append(args, "error", err.Error())
	}
	n.opts.Logger.Warn("approval.webhook_failed", args...)
}

// attempt POSTs body once, freshly signed.
func (n *Notifier) attempt(body []byte) outcome {
	ctx, cancel := context.WithTimeout(n.ctx, n.opts.AttemptTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, n.opts.URL, bytes.NewReader(body))
	if err != nil {
		return outcome{err: errors.New("cannot build the request")}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", n.opts.UserAgent)
	// Signed at each attempt, so a late retry stays within tolerance.
	req.Header.Set(SignatureHeader, Sign(n.opts.Secret, n.opts.Now(), body))
	resp, err := n.client.Do(req)
	if err != nil {
		return outcome{err: n.scrub(err)}
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, responseDrainLimit))
	o := outcome{status: resp.StatusCode}
	if resp.StatusCode == http.StatusTooManyRequests {
		o.retryAfter = retryAfter(resp.Header.Get("Retry-After"), n.opts.Now())
	}
	return o
}

// scrub removes the URL, which may hold a token, from a transport error,
// keeping its host.
func (n *Notifier) scrub(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("no answer within %s", n.opts.AttemptTimeout)
	}
	msg := err.Error()
	if u, perr := url.Parse(n.opts.URL); perr == nil {
		for _, s := range []string{n.opts.URL, u.RawQuery, u.User.String(), u.EscapedPath(), u.Path} {
			if len(s) > 1 {
				msg = strings.ReplaceAll(msg, s, "…")
			}
		}
	}
	return errors.New(msg)
}

// retryAfter reads a Retry-After header (seconds or HTTP date); anything
// else, or a past date, is 0.
func retryAfter(v string, now time.Time) time.Duration {
	if v == "" {
		return 0
	}
	if s, err := strconv.ParseInt(v, 10, 64); err == nil {
		switch {
		case s < 0:
			return 0
		case s > int64(24*time.Hour/time.Second):
			// Clamped rather than overflowed; the caller's cap refuses it.
			return 24 * time.Hour
		}
		return time.Duration(s) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil && t.After(now) {
		return t.Sub(now)
	}
	return 0
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
