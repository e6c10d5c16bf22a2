package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/upstream"
	"github.com/korral/storelink/storelinkclient"
)

// maxClockSkew is how far the local clock may be from StoreLink's before
// doctor complains: the projection reads "today" and the trading hours off
// the clock, and order times are compared with StoreLink's.
const maxClockSkew = 2 * time.Minute

// checkup prints one line per check and remembers whether any failed.
type checkup struct {
	w      io.Writer
	failed int
}

func (c *checkup) ok(check, format string, args ...any) {
	fmt.Fprintf(c.w, "ok    %s: %s\n", check, fmt.Sprintf(format, args...))
}

// skip is a check that could not run for a failure already reported; it
// does not count again.
func (c *checkup) skip(check, why string) {
	fmt.Fprintf(c.w, "skip  %s: %s\n", check, why)
}

func (c *checkup) fail(check, what, fix string) {
	c.failed++
	fmt.Fprintf(c.w, "FAIL  %s: %s; fix: %s\n", check, what, fix)
}

// Doctor checks what a deployment needs, in the order an operator would
// fix it: the configuration, StoreLink at the base URL, each key, the state
// database, the token file and the clock.
//
// Each check prints one line to w; the result is an *Error with code 1
// when any failed.
func Doctor(ctx context.Context, opts Options, w io.Writer) error {
	c := &checkup{w: w}
	readFile := opts.readFile()
	cfg, err := config.Load(opts.Getenv, readFile)
	if err != nil {
		for _, line := range strings.Split(err.Error(), "\n") {
			c.fail("configuration", line, "correct the variable as the message says (see the README's configuration table)")
		}
		return c.result()
	}
	// Doctor checks the deployment as it runs, on the real clock.
	if err := RefuseMockNow(cfg); err != nil {
		return err
	}
	c.ok("configuration", "loaded (%s)", cfg)
	// The checks below speak for themselves; the client's own log lines
	// would only repeat them, so they are kept out of the operator's way.
	quiet := slog.New(slog.DiscardHandler)

	if cfg.UpstreamBaseURL == "" {
		c.fail("upstream", "UPSTREAM_BASE_URL is not set, so the server would answer from the embedded demo StoreLink's made-up data",
			"set UPSTREAM_BASE_URL to StoreLink's base URL and STORELINK_KEYRING_FILE to its keys")
	} else if first, answered := c.reach(ctx, cfg); answered {
		// Each store and key is checked whenever something answered at
		// the base URL, also when its answer broke the contract: a
		// StoreLink whose error body or fields differ from our spec is
		// still worth a line per store. The upstream line is written
		// after the keys were read, since what they got decides it (a
		// JSON answer anywhere means the address is StoreLink's), and
		// before their lines, in the order an operator fixes things.
		var keyLines strings.Builder
		kc := &checkup{w: &keyLines}
		reads := kc.keys(ctx, cfg, readFile, quiet, first.isJSON)
		c.upstream(cfg, first, reads)
		c.clock(first.date, first.at)
		c.failed += kc.failed
		_, _ = io.WriteString(c.w, keyLines.String())
	} else {
		// Only an address that did not answer, or redirected (where a
		// key must never go), leaves the keys unchecked, and each says
		// so.
		for _, id := range cfg.Keyring.StoreIDs() {
			c.skip("key of store "+id, "not checked: nothing at UPSTREAM_BASE_URL answered as a server should (see upstream above)")
		}
	}

	where, fix := cfg.StatePath, "make STATE_DB_PATH's directory writable by this user, or point STATE_DB_PATH elsewhere"
	if cfg.StateDatabaseURL != "" {
		where, fix = config.RedactURL(cfg.StateDatabaseURL), "check STATE_DATABASE_URL (host, port, credentials) and that PostgreSQL is up; then run storelink-mcp migrate"
	}
	db, err := OpenState(cfg)
	if err != nil {
		c.fail("state database", err.Error(), fix)
	} else {
		c.ok("state database", "%s %s is reachable and at the current schema", DatabaseKind(cfg), where)
		defer db.Close()
	}
	c.outcomeJournal(ctx, cfg, readFile, db)

	if path := cfg.AuthTokensFile; path == "" {
		c.ok("token file", "%s is not set (only serve on a non-loopback address needs it)", envTokensFile)
	} else if f, err := bearer.Open(path, quiet); err != nil {
		c.fail("token file", fmt.Sprintf("%s: %v", envTokensFile, err), "write one \"label token\" line per client, tokens of 32 or more characters")
	} else {
		c.ok("token file", "%s holds %d token(s): %s", path, len(f.Labels()), strings.Join(f.Labels(), ", "))
	}
	return c.result()
}

func (c *checkup) result() error {
	if c.failed > 0 {
		return &Error{Code: 1, Err: fmt.Errorf("doctor: %d check(s) failed", c.failed)}
	}
	return nil
}

// firstAnswer is what GET /v1/stores without a key got: StoreLink
// answers 401 with its error body.
type firstAnswer struct {
	status      int
	contentType string
	// isJSON is set when the body is JSON of any shape; storeLinkError
	// when it is the contract's error object on a 401.
	isJSON, storeLinkError bool
	date                   string
	at                     time.Time
	took                   time.Duration
}

// reach asks StoreLink for the store list without a key: StoreLink answers
// 401 with its error body. It goes through storelinkclient, which follows
// no redirect: one is reported with its status and target host, and
// nothing is sent there. It reports whether something answered at all (a
// redirect does not count), so that the keys are checked after a contract
// error too; what the answer means is decided by upstream, once the keys
// were read.
func (c *checkup) reach(ctx context.Context, cfg *config.Config) (firstAnswer, bool) {
	ctx, cancel := context.WithTimeout(ctx, cfg.UpstreamTimeout)
	defer cancel()
	fix := "set UPSTREAM_BASE_URL to StoreLink's base URL (scheme and host, without /v1), then run doctor again"
	api, err := storelinkclient.NewClient(cfg.UpstreamBaseURL)
	if err != nil {
		c.fail("upstream", err.Error(), fix)
		return firstAnswer{}, false
	}
	start := time.Now()
	resp, err := api.ListStores(ctx, func(_ context.Context, req *http.Request) error {
		req.Header.Set("Accept", "application/json")
		return nil
	})
	var redirect *storelinkclient.RedirectError
	if errors.As(err, &redirect) {
		what := "a redirect"
		if redirect.StatusCode != 0 {
			what = fmt.Sprintf("a %d redirect", redirect.StatusCode)
		}
		if redirect.Host != "" {
			what += " to " + redirect.Host
		}
		c.fail("upstream", fmt.Sprintf("UPSTREAM_BASE_URL=%s answered GET /v1/stores with %s; StoreLink never redirects, and the server follows no redirect (the store key would go with it), so nothing was sent there",
			cfg.UpstreamBaseURL, what), "set UPSTREAM_BASE_URL to StoreLink's own address (scheme and host, without /v1), not one that redirects, then run doctor again")
		return firstAnswer{}, false
	}
	if err != nil {
		c.fail("upstream", fmt.Sprintf("cannot reach UPSTREAM_BASE_URL=%s: %v", cfg.UpstreamBaseURL, err), fix)
		return firstAnswer{}, false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var apiErr *storelinkclient.APIError
	first := firstAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), isJSON: json.Valid(body),
		date: resp.Header.Get("Date"), at: start, took: time.Since(start)}
	first.storeLinkError = errors.As(storelinkclient.CheckResponse(resp, body), &apiErr) && resp.StatusCode == http.StatusUnauthorized && apiErr.Code != ""
	return first, true
}

// upstream writes the line of the address: StoreLink when the keyless
// store list got its 401 error body. Otherwise the address is blamed
// only when no answer at all, keyless or with a key, was JSON; a StoreLink
// that answers in JSON of its own shape is named as one, with what did
// work.
func (c *checkup) upstream(cfg *config.Config, first firstAnswer, reads []storeRead) {
	if first.storeLinkError {
		c.ok("upstream", "StoreLink answers at %s (%s)", cfg.UpstreamBaseURL, first.took.Round(time.Millisecond))
		return
	}
	anyJSON := first.isJSON
	for _, r := range reads {
		anyJSON = anyJSON || r.seen.isJSON
	}
	what := fmt.Sprintf("UPSTREAM_BASE_URL=%s does not answer like StoreLink: GET /v1/stores without a key got %d (%s) where StoreLink answers 401 with its error body",
		cfg.UpstreamBaseURL, first.status, orDash(first.contentType))
	if first.status == http.StatusUnauthorized {
		// A refusal without a key, in another body: most likely a
		// StoreLink whose error body differs from the contract.
		what = fmt.Sprintf("UPSTREAM_BASE_URL=%s refused GET /v1/stores without a key (401) but not with StoreLink's error body {\"error\": {\"code\", \"message\"}}", cfg.UpstreamBaseURL)
	}
	if anyJSON && first.status != http.StatusUnauthorized {
		what = fmt.Sprintf("UPSTREAM_BASE_URL=%s answered GET /v1/stores without a key with %d (%s) where the contract says 401 with StoreLink's error body",
			cfg.UpstreamBaseURL, first.status, orDash(first.contentType))
	}
	if !anyJSON {
		c.fail("upstream", what+"; no answer, with a key or without, was JSON",
			"set UPSTREAM_BASE_URL to StoreLink's base URL (scheme and host, without /v1), then run doctor again")
		return
	}
	c.fail("upstream", what+"; "+whatWorked(reads),
		"the address answers in JSON, so it is most likely StoreLink departing from the contract: run storelink-contract check against it and report the difference to Korral IT")
}

// whatWorked says, for the upstream line, what the stores' reads show
// about a StoreLink whose answers differ from the contract.
func whatWorked(reads []storeRead) string {
	var fine, fields, keys []string
	for _, r := range reads {
		switch {
		case r.err == nil:
			fine = append(fine, r.id)
		case r.keyRefused():
			keys = append(keys, r.id)
		case r.seen.status >= 200 && r.seen.status < 300 && r.seen.isJSON:
			fields = append(fields, r.id)
		}
	}
	var parts []string
	if len(fine) > 0 {
		parts = append(parts, fmt.Sprintf("store data reads fine (%s)", storeList(fine)))
	}
	if len(fields) > 0 {
		parts = append(parts, fmt.Sprintf("store data answers in JSON but its fields differ from the contract (%s)", storeList(fields)))
	}
	if len(keys) > 0 {
		parts = append(parts, fmt.Sprintf("StoreLink refuses the key of %s (see below)", storeList(keys)))
	}
	parts = append(parts, "the error bodies differ from the contract")
	return strings.Join(parts, "; ")
}

func storeList(ids []string) string {
	if len(ids) == 1 {
		return "store " + ids[0]
	}
	return "stores " + strings.Join(ids, ", ")
}

// clock compares the local clock with StoreLink's Date header.
func (c *checkup) clock(date string, local time.Time) {
	theirs, err := http.ParseTime(date)
	if err != nil {
		c.ok("clock", "local time %s; StoreLink sent no Date to compare with", local.UTC().Format(time.RFC3339))
		return
	}
	// Date has whole seconds: compare whole seconds.
	skew := local.Truncate(time.Second).Sub(theirs)
	if skew < -maxClockSkew || skew > maxClockSkew {
		c.fail("clock", fmt.Sprintf("the local clock is %s off StoreLink's", skew), "synchronise the clock (NTP): projections and order times depend on it")
		return
	}
	c.ok("clock", "within %s of StoreLink's", maxClockSkew)
}

// storeRead is how reading one keyring store went: the adapter's error
// (nil when the store read fine) and what StoreLink last answered on the
// store's path.
type storeRead struct {
	id   string
	err  error
	seen seenAnswer
}

// keyRefused reports a 401 or 403: the key is the problem, whatever the
// body's shape.
func (r storeRead) keyRefused() bool {
	return r.seen.status == http.StatusUnauthorized || r.seen.status == http.StatusForbidden
}

// keys reads each keyring store with its own key, through the same client
// the server uses, so a rotated key fails here as it would in a tool call.
// A transport records each answer's status and whether its body is JSON,
// so that a 401 or 403 names the key whatever the body's shape.
// firstJSON says whether the keyless store list was answered in JSON:
// with any JSON answer the address is StoreLink's, and a store's answer
// that is not JSON does not point at UPSTREAM_BASE_URL.
func (c *checkup) keys(ctx context.Context, cfg *config.Config, readFile func(string) ([]byte, error), log *slog.Logger, firstJSON bool) []storeRead {
	ids := cfg.Keyring.StoreIDs()
	seen := &answerLog{next: http.DefaultTransport.(*http.Transport).Clone(), byPath: map[string]seenAnswer{}}
	up, err := upstream.New(upstream.Options{
		BaseURL: cfg.UpstreamBaseURL, Timeout: cfg.UpstreamTimeout, Logger: log, Transport: seen,
		Keys: keyring.NewSource(cfg.Keyring, cfg.KeyringFile, readFile, log),
		// One failing store must not open the breaker for the next.
		BreakerFailures: uint32(len(ids) + 1), BreakerCooldown: cfg.BreakerCooldown,
		// doctor reports what StoreLink answers now, never a kept answer.
		NoCache: true,
	})
	if err != nil {
		c.fail("keys", err.Error(), "check UPSTREAM_BASE_URL")
		return nil
	}
	var reads []storeRead
	anyJSON := firstJSON
	for _, id := range ids {
		_, err := up.Store(ctx, id)
		r := storeRead{id: id, err: err, seen: seen.get("/v1/stores/" + id)}
		reads = append(reads, r)
		anyJSON = anyJSON || r.seen.isJSON
	}
	for _, r := range reads {
		id, err, check := r.id, r.err, "key of store "+r.id
		if err == nil {
			c.ok(check, "read store %s", id)
			continue
		}
		e := apperr.From(err)
		keyFix := fmt.Sprintf("install store %s's current key in the keyring (STORELINK_KEYRING_FILE); keys rotate weekly", id)
		switch {
		case e.Code == apperr.AuthKeyInvalid || e.Code == apperr.StoreNotAuthorized:
			c.fail(check, fmt.Sprintf("StoreLink refused to read store %s: %s: %s", id, e.Code, e.Message), keyFix)
		// A 401 or 403 in an error body of another shape is still the key.
		case r.seen.status == http.StatusUnauthorized:
			c.fail(check, fmt.Sprintf("StoreLink refused store %s's key (401: the key is unknown or rotated)%s", id, bodyNote(e)), keyFix)
		case r.seen.status == http.StatusForbidden:
			c.fail(check, fmt.Sprintf("StoreLink answered 403 to store %s's key: it does not open this store (another store's key, or one no longer issued for it)%s", id, bodyNote(e)), keyFix)
		case e.Code == apperr.UpstreamContractError:
			// The answer is what is wrong, not (as far as it tells) the
			// key: the message names its field and rule, or says the
			// address answers like no StoreLink.
			what := fmt.Sprintf("store %s: %s: %s", id, e.Code, e.Message)
			fix := "the key is not the problem: report the field and rule above to Korral IT (storelink-contract check gives the full report)"
			switch {
			case !anyJSON:
				fix = "check that UPSTREAM_BASE_URL is StoreLink's base URL (scheme and host, without /v1); if it is, report its answer to Korral IT (storelink-contract check gives the full report)"
			case !r.seen.isJSON:
				// Other answers at the address are JSON: StoreLink is there,
				// and something in front of it answered for this store.
				what = fmt.Sprintf("store %s: %s: the answer to GET /v1/stores/%s (%d) is not JSON, although StoreLink's other answers at this address are", id, e.Code, id, r.seen.status)
				fix = "the address is StoreLink's, but something answered for this store instead of it (a gateway or error page): report it to Korral IT with the time (storelink-contract check gives the full report)"
			}
			c.fail(check, what, fix)
		default:
			c.fail(check, fmt.Sprintf("StoreLink refused to read store %s: %s: %s", id, e.Code, e.Message), "check StoreLink's state for this store and run doctor again")
		}
	}
	return reads
}

// bodyNote says that a refusal came in an error body of another shape,
// which the adapter reports as a contract error.
func bodyNote(e *apperr.Error) string {
	if e.Code == apperr.UpstreamContractError {
		return ", in an error body that differs from the contract"
	}
	return ""
}

// seenAnswer is what StoreLink last answered on a path.
type seenAnswer struct {
	status int
	isJSON bool
}

// maxSeenBody bounds how much of an answer answerLog reads to tell JSON;
// a longer body is judged by its Content-Type.
const maxSeenBody = 1 << 20

// answerLog is a transport that records, per path, the status of the
// last answer and whether its body is JSON; the body reaches the client
// unchanged.
type answerLog struct {
	next   http.RoundTripper
	mu     sync.Mutex
	byPath map[string]seenAnswer
}

// RoundTrip implements http.RoundTripper.
func (l *answerLog) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := l.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	head, rerr := io.ReadAll(io.LimitReader(resp.Body, maxSeenBody))
	isJSON := json.Valid(head)
	if len(head) == maxSeenBody {
		isJSON = strings.Contains(resp.Header.Get("Content-Type"), "json")
	}
	rest := resp.Body
	if rerr != nil {
		rest = io.NopCloser(errReader{rerr})
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(head), rest), resp.Body}
	l.mu.Lock()
	l.byPath[req.URL.Path] = seenAnswer{status: resp.StatusCode, isJSON: isJSON}
	l.mu.Unlock()
	return resp, nil
}

// get returns the last answer on the path that ends in suffix (the base
// URL may carry a path of its own).
func (l *answerLog) get(suffix string) seenAnswer {
	l.mu.Lock()
	defer l.mu.Unlock()
	for path, a := range l.byPath {
		if strings.HasSuffix(path, suffix) {
			return a
		}
	}
	return seenAnswer{}
}

// errReader returns its error on every read.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }
