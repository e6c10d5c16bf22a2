// Package doctor checks a deployment before it serves (storelink-mcp
// doctor): configuration, StoreLink, each store key, the state database, the
// outcome journal, the token file and the clock, one line each. It speaks to
// StoreLink only through internal/upstream and closes what it opens.
package doctor

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
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/upstream"
)

// maxClockSkew is how far the local clock may be from StoreLink's.
const maxClockSkew = 2 * time.Minute

// checkup prints one line per check and remembers whether any failed.
type checkup struct {
	w      io.Writer
	failed int
}

func (c *checkup) ok(check, format string, args ...any) {
	fmt.Fprintf(c.w, "ok    %s: %s\n", check, fmt.Sprintf(format, args...))
}

// skip is a check not run because of a failure already reported.
func (c *checkup) skip(check, why string) {
	fmt.Fprintf(c.w, "skip  %s: %s\n", check, why)
}

func (c *checkup) fail(check, what, fix string) {
	c.failed++
	fmt.Fprintf(c.w, "FAIL  %s: %s; fix: %s\n", check, what, fix)
}

// Options are the deployment to check and the parts the checks build.
type Options struct {
	Config *config.Config
	// Keys is the keyring the StoreLink clients read store keys from.
	Keys func(log *slog.Logger) upstream.Keys
	// OpenState opens the state database the configuration names.
	OpenState func(*config.Config) (state.Store, error)
	// DatabaseKind names the state database's backend.
	DatabaseKind string
}

// ConfigFailed writes one failed check per problem and returns the count.
func ConfigFailed(w io.Writer, err error) int {
	c := &checkup{w: w}
	for _, line := range strings.Split(err.Error(), "\n") {
		c.fail("configuration", line, "correct the variable as the message says (see the README's configuration table)")
	}
	return c.failed
}

// Run runs every check, writes one line each to w and returns the failures.
func Run(ctx context.Context, w io.Writer, o Options) int {
	c := &checkup{w: w}
	cfg := o.Config
	c.ok("configuration", "loaded (%s)", cfg)
	// The check lines already say what the client would log.
	quiet := slog.New(slog.DiscardHandler)
	c.upstreamAndKeys(ctx, cfg, o.Keys(quiet))
	db := c.stateDatabase(cfg, o)
	if db != nil {
		defer db.Close()
	}
	c.outcomeJournal(ctx, cfg, o.Keys(quiet), db)
	c.tokenFile(cfg.AuthTokensFile, quiet)
	return c.failed
}

// upstreamAndKeys checks StoreLink at the base URL, then each store's key.
func (c *checkup) upstreamAndKeys(ctx context.Context, cfg *config.Config, keys upstream.Keys) {
	if cfg.UpstreamBaseURL == "" {
		c.fail("upstream", "UPSTREAM_BASE_URL is not set, so the server would answer from the embedded demo StoreLink's made-up data",
			"set UPSTREAM_BASE_URL to StoreLink's base URL and STORELINK_KEYRING_FILE to its keys")
		return
	}
	first, answered := c.reach(ctx, cfg)
	if !answered {
		// Only no answer, or a redirect, leaves the keys unchecked.
		for _, id := range cfg.Keyring.StoreIDs() {
			c.skip("key of store "+id, "not checked: nothing at UPSTREAM_BASE_URL answered as a server should (see upstream above)")
		}
		return
	}
	// Key lines are collected first: the upstream line depends on them.
	var keyLines strings.Builder
	kc := &checkup{w: &keyLines}
	reads := kc.keys(ctx, cfg, keys, first.JSON)
	c.upstream(cfg, first, reads)
	c.clock(first.Date, first.At)
	c.failed += kc.failed
	_, _ = io.WriteString(c.w, keyLines.String())
}

// stateDatabase checks that the database opens at the current schema and
// returns it, or nil.
func (c *checkup) stateDatabase(cfg *config.Config, o Options) state.Store {
	where, fix := cfg.StatePath, "make STATE_DB_PATH's directory writable by this user, or point STATE_DB_PATH elsewhere"
	if cfg.StateDatabaseURL != "" {
		where, fix = config.RedactURL(cfg.StateDatabaseURL), "check STATE_DATABASE_URL (host, port, credentials) and that PostgreSQL is up; then run storelink-mcp migrate"
	}
	db, err := o.OpenState(cfg)
	if err != nil {
		c.fail("state database", err.Error(), fix)
		return nil
	}
	c.ok("state database", "%s %s is reachable and at the current schema", o.DatabaseKind, where)
	return db
}

// tokenFile checks the bearer token file, when one is set.
func (c *checkup) tokenFile(path string, log *slog.Logger) {
	if path == "" {
		c.ok("token file", "MCP_AUTH_TOKENS_FILE is not set (only serve on a non-loopback address needs it)")
	} else if f, err := bearer.Open(path, log); err != nil {
		c.fail("token file", fmt.Sprintf("MCP_AUTH_TOKENS_FILE: %v", err), "write one \"label token\" line per client, tokens of 32 or more characters")
	} else {
		c.ok("token file", "%s holds %d token(s): %s", path, len(f.Labels()), strings.Join(f.Labels(), ", "))
	}
}

// reach asks StoreLink for the store list without a key
// (upstream.ProbeKeyless). A redirect is reported with its status and
// target host and not followed. It reports whether anything other than a
// redirect answered.
func (c *checkup) reach(ctx context.Context, cfg *config.Config) (upstream.Probe, bool) {
	ctx, cancel := context.WithTimeout(ctx, cfg.UpstreamTimeout)
	defer cancel()
	fix := "set UPSTREAM_BASE_URL to StoreLink's base URL (scheme and host, without /v1), then run doctor again"
	p, err := upstream.ProbeKeyless(ctx, cfg.UpstreamBaseURL)
	var bad *upstream.BaseURLError
	switch {
	case errors.As(err, &bad):
		c.fail("upstream", err.Error(), fix)
		return p, false
	case err != nil:
		c.fail("upstream", fmt.Sprintf("cannot reach UPSTREAM_BASE_URL=%s: %v", cfg.UpstreamBaseURL, err), fix)
		return p, false
	case p.Redirect != "":
		c.fail("upstream", fmt.Sprintf("UPSTREAM_BASE_URL=%s answered GET /v1/stores with %s; StoreLink never redirects, and the server follows no redirect (the store key would go with it), so nothing was sent there",
			cfg.UpstreamBaseURL, p.Redirect), "set UPSTREAM_BASE_URL to StoreLink's own address (scheme and host, without /v1), not one that redirects, then run doctor again")
		return p, false
	}
	return p, true
}

// upstream writes the address line: StoreLink when the keyless store list
// got its 401 error body. Otherwise the address is blamed only when no
// answer was JSON.
func (c *checkup) upstream(cfg *config.Config, first upstream.Probe, reads []storeRead) {
	if first.StoreLinkError {
		c.ok("upstream", "StoreLink answers at %s (%s)", cfg.UpstreamBaseURL, first.Took.Round(time.Millisecond))
		return
	}
	anyJSON := first.JSON
	for _, r := range reads {
		anyJSON = anyJSON || r.seen.isJSON
	}
	what := fmt.Sprintf("UPSTREAM_BASE_URL=%s does not answer like StoreLink: GET /v1/stores without a key got %d (%s) where StoreLink answers 401 with its error body",
		cfg.UpstreamBaseURL, first.Status, dash(first.ContentType))
	if first.Status == http.StatusUnauthorized {
		// A refusal in another body: probably a non-contract error body.
		what = fmt.Sprintf("UPSTREAM_BASE_URL=%s refused GET /v1/stores without a key (401) but not with StoreLink's error body {\"error\": {\"code\", \"message\"}}", cfg.UpstreamBaseURL)
	}
	if anyJSON && first.Status != http.StatusUnauthorized {
		what = fmt.Sprintf("UPSTREAM_BASE_URL=%s answered GET /v1/stores without a key with %d (%s) where the contract says 401 with StoreLink's error body",
			cfg.UpstreamBaseURL, first.Status, dash(first.ContentType))
	}
	if !anyJSON {
		c.fail("upstream", what+"; no answer, with a key or without, was JSON",
			"set UPSTREAM_BASE_URL to StoreLink's base URL (scheme and host, without /v1), then run doctor again")
		return
	}
	c.fail("upstream", what+"; "+whatWorked(reads),
		"the address answers in JSON, so it is most likely StoreLink departing from the contract: run storelink-contract check against it and report the difference to Korral IT")
}

// whatWorked describes what the stores' reads show.
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

// storeRead is one store's adapter error and StoreLink's last answer.
type storeRead struct {
	id   string
	err  error
	seen seenAnswer
}

// keyRefused reports a 401 or 403, whatever the body's shape.
func (r storeRead) keyRefused() bool {
	return r.seen.status == http.StatusUnauthorized || r.seen.status == http.StatusForbidden
}

// keys reads each keyring store with its own key through the server's
// client, so a rotated key fails here as in a tool call. firstJSON says
// whether the keyless store list was answered in JSON; if so, a store's
// non-JSON answer does not point at UPSTREAM_BASE_URL.
func (c *checkup) keys(ctx context.Context, cfg *config.Config, keys upstream.Keys, firstJSON bool) []storeRead {
	ids := cfg.Keyring.StoreIDs()
	seen := &answerLog{next: http.DefaultTransport.(*http.Transport).Clone(), byPath: map[string]seenAnswer{}}
	up, err := upstream.New(upstream.Options{
		BaseURL: cfg.UpstreamBaseURL, Timeout: cfg.UpstreamTimeout, Logger: slog.New(slog.DiscardHandler), Transport: seen,
		Keys: keys,
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
			// The answer, not the key, is what is wrong.
			what := fmt.Sprintf("store %s: %s: %s", id, e.Code, e.Message)
			fix := "the key is not the problem: report the field and rule above to Korral IT (storelink-contract check gives the full report)"
			switch {
			case !anyJSON:
				fix = "check that UPSTREAM_BASE_URL is StoreLink's base URL (scheme and host, without /v1); if it is, report its answer to Korral IT (storelink-contract check gives the full report)"
			case !r.seen.isJSON:
				// Other answers are JSON: something in front of StoreLink answered.
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

// bodyNote notes a refusal in an error body of another shape.
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

// maxSeenBody bounds how much of a body answerLog reads to detect JSON.
const maxSeenBody = 1 << 20

// answerLog is a transport recording each path's last status and whether
// its body is JSON.
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

// get returns the last answer on a path ending in suffix.
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

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
