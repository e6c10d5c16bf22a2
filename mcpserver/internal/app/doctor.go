package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/config"
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

	answered := false
	if cfg.UpstreamBaseURL == "" {
		c.fail("upstream", "UPSTREAM_BASE_URL is not set, so the server would answer from the embedded demo StoreLink's made-up data",
			"set UPSTREAM_BASE_URL to StoreLink's base URL and STORELINK_KEYRING_FILE to its keys")
	} else {
		answered = c.reach(ctx, cfg)
	}
	// Each store and key is checked whenever something answered at the
	// base URL, also when its answer broke the contract: a StoreLink whose
	// error body or fields differ from our spec is still worth a line per
	// store. Only an address that did not answer, or redirected (where a
	// key must never go), leaves them unchecked, and each says so.
	if answered {
		c.keys(ctx, cfg, readFile, quiet)
	} else if cfg.UpstreamBaseURL != "" {
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

// reach asks StoreLink for the store list without a key: StoreLink answers
// 401 with its error body, anything else is not StoreLink (or not its base
// URL), or a StoreLink whose errors differ from the contract. The answer's
// Date header also tells whether the clocks agree. It goes through
// storelinkclient, which follows no redirect: one is reported with its
// status and target host, and nothing is sent there. It reports whether
// something answered at all (a redirect does not count), so that the keys
// are checked after a contract error too.
func (c *checkup) reach(ctx context.Context, cfg *config.Config) bool {
	ctx, cancel := context.WithTimeout(ctx, cfg.UpstreamTimeout)
	defer cancel()
	fix := "set UPSTREAM_BASE_URL to StoreLink's base URL (scheme and host, without /v1), then run doctor again"
	api, err := storelinkclient.NewClient(cfg.UpstreamBaseURL)
	if err != nil {
		c.fail("upstream", err.Error(), fix)
		return false
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
		return false
	}
	if err != nil {
		c.fail("upstream", fmt.Sprintf("cannot reach UPSTREAM_BASE_URL=%s: %v", cfg.UpstreamBaseURL, err), fix)
		return false
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	var apiErr *storelinkclient.APIError
	if !errors.As(storelinkclient.CheckResponse(resp, body), &apiErr) || resp.StatusCode != http.StatusUnauthorized || apiErr.Code == "" {
		what := fmt.Sprintf("UPSTREAM_BASE_URL=%s does not answer like StoreLink: GET /v1/stores without a key got %d (%s) where StoreLink answers 401 with its error body",
			cfg.UpstreamBaseURL, resp.StatusCode, orDash(resp.Header.Get("Content-Type")))
		if resp.StatusCode == http.StatusUnauthorized {
			// A refusal without a key, in another body: most likely a
			// StoreLink whose error body differs from the contract.
			what = fmt.Sprintf("UPSTREAM_BASE_URL=%s refused GET /v1/stores without a key (401) but not with StoreLink's error body {\"error\": {\"code\", \"message\"}}", cfg.UpstreamBaseURL)
			fix = "if this is StoreLink, its error body differs from the contract: run storelink-contract check and report the difference to Korral IT; otherwise " + fix
		}
		c.fail("upstream", what, fix)
		c.clock(resp.Header.Get("Date"), start)
		return true
	}
	c.ok("upstream", "StoreLink answers at %s (%s)", cfg.UpstreamBaseURL, time.Since(start).Round(time.Millisecond))
	c.clock(resp.Header.Get("Date"), start)
	return true
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

// keys reads each keyring store with its own key, through the same client
// the server uses, so a rotated key fails here as it would in a tool call.
func (c *checkup) keys(ctx context.Context, cfg *config.Config, readFile func(string) ([]byte, error), log *slog.Logger) {
	ids := cfg.Keyring.StoreIDs()
	up, err := upstream.New(upstream.Options{
		BaseURL: cfg.UpstreamBaseURL, Timeout: cfg.UpstreamTimeout, Logger: log,
		Keys: mcpserver.NewKeySource(cfg.Keyring, cfg.KeyringFile, readFile, log),
		// One failing store must not open the breaker for the next.
		BreakerFailures: uint32(len(ids) + 1), BreakerCooldown: cfg.BreakerCooldown,
		// doctor reports what StoreLink answers now, never a kept answer.
		NoCache: true,
	})
	if err != nil {
		c.fail("keys", err.Error(), "check UPSTREAM_BASE_URL")
		return
	}
	for _, id := range ids {
		check := "key of store " + id
		if _, err := up.Store(ctx, id); err != nil {
			e := apperr.From(err)
			fix := "check StoreLink's state for this store and run doctor again"
			if e.Code == apperr.AuthKeyInvalid || e.Code == apperr.StoreNotAuthorized {
				fix = fmt.Sprintf("install store %s's current key in the keyring (STORELINK_KEYRING_FILE); keys rotate weekly", id)
			}
			if e.Code == apperr.UpstreamContractError {
				// The answer is what is wrong, not (as far as it tells) the
				// key: the message names its field and rule, or says the
				// address answers like no StoreLink.
				fix := "the key is not the problem: report the field and rule above to Korral IT (storelink-contract check gives the full report)"
				if e.Remediation == upstream.RemediationBaseURL {
					fix = "check that UPSTREAM_BASE_URL is StoreLink's base URL (scheme and host, without /v1); if it is, report its answer to Korral IT (storelink-contract check gives the full report)"
				}
				c.fail(check, fmt.Sprintf("store %s: %s: %s", id, e.Code, e.Message), fix)
				continue
			}
			c.fail(check, fmt.Sprintf("StoreLink refused to read store %s: %s: %s", id, e.Code, e.Message), fix)
			continue
		}
		c.ok(check, "read store %s", id)
	}
}
