// Package config reads the MCP server's configuration from the environment,
// in one place, and refuses to start on any value it does not understand.
// No other package of the module reads an environment variable (a test in
// the module's root package scans the sources for that), so the settings
// table (Settings), and the README table and help text generated from it,
// list every variable there is. Every setting that is not a secret also
// has a flag by rule (AddFlags).
//
// Every problem is reported at once (errors.Join), each naming the variable
// and the fix, so an operator corrects the whole configuration in one pass.
// Secret values (the keyring, the approver's secret, the webhook secret)
// are never echoed.
// Values are taken exactly as given: nothing is trimmed, case-folded or
// guessed, except that a file read through a _FILE variable may end in one
// newline. A secret file (every _FILE variable, HOST_CONSENT_KEY_FILE and
// the token files) that users other than its owner may read is refused,
// naming its mode and `chmod 600` (package secretfile has the rule).
package config

import (
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/consent"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/secretfile"
)

// Approval modes for WRITE_APPROVAL.
const (
	ApprovalNone     = "none"
	ApprovalRequired = "required"
	// ApprovalHost asks the person at the host (MCP elicitation) to confirm
	// each order, typing its quantity, before it is sent.
	ApprovalHost = "host"
)

// MinWebhookSecretLen is the shortest webhook signing secret accepted: a
// receiver trusts any notice signed with it.
const MinWebhookSecretLen = 16

// Config is the server's configuration.
type Config struct {
	// UpstreamBaseURL is StoreLink's base URL; "" runs against the embedded mock.
	UpstreamBaseURL string
	// Keyring holds the store keys. It is nil only when UpstreamBaseURL is ""
	// and no keyring was given; the caller then uses the mock's own keyring.
	Keyring *keyring.Keyring
	// KeyringFile is the path from STORELINK_KEYRING_FILE, kept so the file
	// can be re-read after a key rotation; "" when the keyring came inline.
	KeyringFile string
	// MockNow, when not zero, pins the clock of the embedded demo
	// StoreLink and of the server running it (STORELINK_MOCK_NOW). Every
	// command that does not run the embedded demo refuses it, a server with
	// UpstreamBaseURL too: against a real StoreLink a pinned clock would
	// release lapsed approvals and backdate the audit trail.
	MockNow time.Time
	// DefaultLookbackDays is korral_check_stock_risk's default lookback (1..28).
	DefaultLookbackDays int
	// LogLevel is the minimum level logged to stderr.
	LogLevel slog.Level
	// LogFile, when set, receives the logs instead of stderr.
	LogFile string
	// UpstreamTimeout bounds each StoreLink request.
	UpstreamTimeout time.Duration
	// UpstreamMaxInFlight is the most StoreLink requests open at once
	// across every call of the replica, the concurrency budget's maximum.
	UpstreamMaxInFlight int
	// AllowWrites lets a confirmed order reach StoreLink.
	AllowWrites bool
	// MaxOrderUnits is the hard ceiling on one order's quantity.
	MaxOrderUnits int
	// ReadOnly removes the write tool altogether.
	ReadOnly bool
	// WriteApproval is ApprovalNone, ApprovalRequired (a confirmed order is
	// staged until a named approver releases it) or ApprovalHost (the person
	// at the host confirms it before it is sent).
	WriteApproval string
	// HostConsentKey seals the state of host consent questions (AES-256,
	// from HOST_CONSENT_KEY_FILE); set exactly when WriteApproval is
	// ApprovalHost. Never log it: String and LogValue omit it.
	HostConsentKey []byte
	// ApprovalTTL is how long a staged order waits for release.
	ApprovalTTL time.Duration
	// StatePath is the durable state database (ledger, staged orders); ""
	// when StateDatabaseURL is set.
	StatePath string
	// StateDatabaseURL is the PostgreSQL database holding the state of
	// every replica (postgres:// or postgresql://); "" keeps it in the
	// SQLite file StatePath. It may hold a password: never log it, use
	// RedactURL.
	StateDatabaseURL string
	// StateMaxConns caps this process's PostgreSQL connections.
	StateMaxConns int
	// JournalPath is the outcome journal, the local file that keeps what
	// StoreLink answered to an order until the ledger has recorded it (ADR
	// 0006). "" only where no default exists and writes are off.
	JournalPath string
	// BreakerFailures is how many consecutive upstream failures open the
	// circuit breaker.
	BreakerFailures int
	// BreakerCooldown is how long the breaker stays open before a probe.
	BreakerCooldown time.Duration
	// MasterDataTTL is how long store, SKU and supplier master data are
	// reused; 0 turns the reuse off.
	MasterDataTTL time.Duration
	// StdioMaxLineBytes bounds one incoming line of the stdio transport.
	StdioMaxLineBytes int
	// HTTPMaxSessions caps the open MCP sessions of `serve --http`;
	// HTTPMaxSessionsPerToken caps those of one bearer token.
	HTTPMaxSessions         int
	HTTPMaxSessionsPerToken int
	// HTTPSessionIdleTimeout closes an HTTP session nobody used for so long.
	HTTPSessionIdleTimeout time.Duration
	// AuthTokensFile is the bearer token file of `serve --http`; "" serves
	// without tokens where the address allows it. The file is read by the
	// commands that use it (package bearer), so a command that does not
	// need it does not fail on it.
	AuthTokensFile string
	// HTTPInsecure is --insecure-no-auth given through the environment.
	HTTPInsecure bool
	// ApproverSecret is the secret the person running `approvals` presents
	// with --approver, when no --secret-file or --secret-stdin gives it;
	// it is checked against the approver register. Never log it: it is
	// left out of String and LogValue.
	ApproverSecret string
	// ApprovalWebhookURL receives a signed notice of every staged order;
	// "" sends none. Its path, query or user info may hold the receiver's
	// token: log only its host (WebhookHost).
	ApprovalWebhookURL string
	// ApprovalWebhookSecret signs the notices; set exactly when
	// ApprovalWebhookURL is. Never log it: String and LogValue omit it.
	ApprovalWebhookSecret string
	// ConsolePublicURL is the approvals console's base URL as people open
	// it, without a trailing slash; "" when not configured.
	ConsolePublicURL string
	// MCPPublicURL is the base URL at which clients reach `serve --http`,
	// without a trailing slash; "" when not configured. Its /mcp is the
	// server's resource identifier, OAuthAudience's default.
	MCPPublicURL string
	// OAuthIssuer is the identity provider whose access tokens `serve
	// --http` accepts (the issuer identifier, taken exactly); "" accepts
	// none.
	OAuthIssuer string
	// OAuthAudience is the resource identifier an access token must be
	// issued for (its aud), and the resource of the protected resource
	// metadata; set exactly when OAuthIssuer is.
	OAuthAudience string
	// Telemetry is the OpenTelemetry export (the OTEL_* variables).
	Telemetry Telemetry
	// MetricsTokenFile holds the bearer token of `serve --metrics`; "" when
	// the metrics listener is loopback and needs none.
	MetricsTokenFile string
}

// loader accumulates problems instead of stopping at the first.
type loader struct {
	getenv   func(string) string
	readFile func(string) ([]byte, error)
	errs     []error
	// next is the first row of the settings table walk has not parsed.
	next int

	// What the walk read for the rules that span several settings.
	audience string // OAUTH_AUDIENCE, when valid
	otlp     struct {
		base            string // OTEL_EXPORTER_OTLP_ENDPOINT
		traces, metrics struct {
			url string // the signal's own endpoint
			on  bool   // its exporter is otlp
		}
	}
}

// walk parses, each on its own, the settings of the table from the first
// not yet parsed through the one named through ("" for the rest). Settings
// that only a rule spanning several settings reads have no parser of their
// own and are passed over.
func (l *loader) walk(c *Config, through string) {
	for l.next < len(settings) {
		s := settings[l.next]
		l.next++
		if s.kind.read != nil {
			s.kind.read(l, c, s.Name)
		}
		if s.Name == through {
			return
		}
	}
}

func (l *loader) fail(format string, args ...any) {
	l.errs = append(l.errs, fmt.Errorf(format, args...))
}

// Load reads the configuration through getenv and readFile (os.Getenv and
// os.ReadFile in production), so tests need no process environment.
func Load(getenv func(string) string, readFile func(string) ([]byte, error)) (*Config, error) {
	l := &loader{getenv: getenv, readFile: readFile}
	c := &Config{}
	// Each setting on its own, in the table's order; the rules that span
	// several settings come where they always came in that order, so a
	// broken configuration's problems are listed as they always were.
	l.walk(c, "STORELINK_MOCK_NOW")

	c.StateDatabaseURL = l.databaseURL("STATE_DATABASE_URL")
	if c.StateDatabaseURL == "" {
		c.StatePath = l.statePath()
	} else if l.getenv("STATE_DB_PATH") != "" {
		l.fail("STATE_DB_PATH and STATE_DATABASE_URL are both set: the state lives in one place; unset STATE_DB_PATH to use PostgreSQL")
	}

	c.JournalPath = l.journalPath(c)

	raw, from, file, ok := l.secret("STORELINK_KEYRING")
	if ok && raw != "" {
		kr, err := keyring.Parse([]byte(raw))
		if err != nil {
			l.fail("%s: %v", from, err)
		} else {
			c.Keyring, c.KeyringFile = kr, file
		}
	} else if ok && c.UpstreamBaseURL != "" {
		l.fail("STORELINK_KEYRING or STORELINK_KEYRING_FILE is required when UPSTREAM_BASE_URL is set: give the keys of the stores this deployment serves, as JSON like {\"47\": \"<key>\"}")
	}

	// The shared approval credential is gone: a server that still has it
	// would let an operator believe it protects something.
	for _, old := range Removed {
		if l.getenv(old) != "" {
			l.fail("%s", LegacyApprovalMessage(old))
		}
	}

	l.walk(c, "APPROVAL_WEBHOOK_URL")
	hook, from, hookFile, ok := l.secret("APPROVAL_WEBHOOK_SECRET")
	if ok {
		if hookFile != "" {
			hook = strings.TrimSuffix(strings.TrimSuffix(hook, "\n"), "\r")
		}
		switch {
		case hook == "" && l.getenv("APPROVAL_WEBHOOK_URL") != "":
			l.fail("APPROVAL_WEBHOOK_URL needs APPROVAL_WEBHOOK_SECRET or APPROVAL_WEBHOOK_SECRET_FILE: receivers check every notice's signature with it; generate one with `openssl rand -hex 32`")
		case hook != "" && l.getenv("APPROVAL_WEBHOOK_URL") == "":
			l.fail("%s is set but APPROVAL_WEBHOOK_URL is not: set the URL that should receive the notices, or remove the secret", from)
		case hook != "" && len(hook) < MinWebhookSecretLen:
			l.fail("%s: must be at least %d characters; generate one with `openssl rand -hex 32`", from, MinWebhookSecretLen)
		case strings.ContainsFunc(hook, func(r rune) bool { return r < 0x20 || r == 0x7f }):
			l.fail("%s: must not contain control characters or line breaks", from)
		default:
			c.ApprovalWebhookSecret = hook
		}
	}
	l.walk(c, "OAUTH_AUDIENCE")
	l.oauth(c)
	l.walk(c, "")
	l.telemetry(&c.Telemetry)
	l.privateFiles("MCP_AUTH_TOKENS_FILE", "MCP_METRICS_TOKEN_FILE")

	// Contradictions, checked only between values that parsed.
	if c.ReadOnly && c.AllowWrites {
		l.fail("READ_ONLY=true and ALLOW_WRITES=true contradict each other: unset one of them")
	}
	if c.WriteApproval == ApprovalRequired {
		if c.ReadOnly {
			l.fail("WRITE_APPROVAL=required and READ_ONLY=true contradict each other: a read-only server stages no orders")
		} else if !c.AllowWrites {
			l.fail("WRITE_APPROVAL=required has no effect unless ALLOW_WRITES=true: set ALLOW_WRITES=true or WRITE_APPROVAL=none")
		}
	}

	if c.WriteApproval == ApprovalHost {
		if c.ReadOnly {
			l.fail("WRITE_APPROVAL=host and READ_ONLY=true contradict each other: a read-only server sends no orders")
		} else if !c.AllowWrites {
			l.fail("WRITE_APPROVAL=host has no effect unless ALLOW_WRITES=true: set ALLOW_WRITES=true or WRITE_APPROVAL=none")
		}
	}
	c.HostConsentKey = l.hostConsentKey("HOST_CONSENT_KEY_FILE", c.WriteApproval == ApprovalHost)

	if c.ApprovalWebhookURL != "" && c.WriteApproval != ApprovalRequired {
		l.fail("APPROVAL_WEBHOOK_URL is set but WRITE_APPROVAL is not \"required\": no order is ever staged, so nobody would be notified; set WRITE_APPROVAL=required or unset the URL")
	}

	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return c, nil
}

// webhookURL reads the webhook's URL. It may carry the receiver's token in
// its path, query or user info, so no message quotes it. Plain http is
// refused except to a loopback host: the notice names stores and products,
// and its signature proves who sent it, not who read it on the way.
func (l *loader) webhookURL(name string) string {
	v := l.getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		l.fail("%s: is not a URL: want an absolute https URL like https://hooks.example.com/services/…", name)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Hostname() == "":
		l.fail("%s: must be an absolute https URL like https://hooks.example.com/services/…", name)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		l.fail("%s: must use https; plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost), not to %s", name, shown(u.Hostname()))
	case u.Fragment != "":
		l.fail("%s: must not have a fragment (#…): it is never sent", name)
	default:
		return v
	}
	return ""
}

// maxConsoleURLLen bounds CONSOLE_PUBLIC_URL, which every notice's
// one-sentence text repeats.
const maxConsoleURLLen = 256

// consoleURL reads the console's public base URL, which is put into
// messages people click, so it must be a plain http(s) address.
func (l *loader) consoleURL(name string) string {
	return l.httpBase(name, httpBaseRules{
		example:     "https://approvals.korral.example",
		credentials: ": approvers sign in on the console itself",
		query:       ": it is the base that order links are appended to",
		maxLen:      maxConsoleURLLen,
		tooLong:     "fit the notices' text",
	})
}

// oauth pairs OAUTH_AUDIENCE with OAUTH_ISSUER and MCP_PUBLIC_URL, which
// the walk has read. The issuer and the audience are compared byte for
// byte with every token's claims, so they are taken exactly as given, a
// trailing slash included.
func (l *loader) oauth(c *Config) {
	aud := l.audience
	switch {
	case l.getenv("OAUTH_AUDIENCE") != "" && l.getenv("OAUTH_ISSUER") == "":
		l.fail("OAUTH_AUDIENCE is set but OAUTH_ISSUER is not: name the identity provider whose tokens to accept, or unset OAUTH_AUDIENCE")
	case c.OAuthIssuer == "":
	case aud != "":
		c.OAuthAudience = aud
	case c.MCPPublicURL != "":
		c.OAuthAudience = c.MCPPublicURL + "/mcp"
	case l.getenv("OAUTH_AUDIENCE") == "" && l.getenv("MCP_PUBLIC_URL") == "":
		l.fail("OAUTH_ISSUER needs this server's resource identifier, which access tokens must name as audience: set MCP_PUBLIC_URL to the base URL clients reach the server at (e.g. https://mcp.korral.example), or OAUTH_AUDIENCE")
	}
}

// oauthURL reads an https URL, or an http one to a loopback host, with no
// credentials, query or fragment; "" when unset or refused.
func (l *loader) oauthURL(name, example string) string {
	v := l.getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		l.fail("%s=%s: must be an absolute https URL like %s", name, shown(v), example)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		l.fail("%s=%s: must use https; plain http is allowed only to a loopback host (127.0.0.1, ::1, localhost)", name, shown(v))
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		l.fail("%s=%s: must have no user info, query or fragment, like %s", name, shown(v), example)
	default:
		return v
	}
	return ""
}

// loopback reports whether host is this machine: localhost or a loopback
// address. Names are not resolved: start-up must not depend on DNS.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// WebhookHost is the webhook's host (with port) for logs and summaries;
// "" when none is configured.
func (c Config) WebhookHost() string {
	u, err := url.Parse(c.ApprovalWebhookURL)
	if c.ApprovalWebhookURL == "" || err != nil {
		return ""
	}
	return u.Host
}

// webhookSummary is String's part about the notices.
func (c Config) webhookSummary() string {
	hook := "off"
	if h := c.WebhookHost(); h != "" {
		hook = h
	}
	s := " approval_webhook=" + hook
	if c.ConsolePublicURL != "" {
		s += " console_url=" + c.ConsolePublicURL
	}
	return s
}

// mockNow reads the pinned clock of the embedded demo. Whether the
// command may use it (a server of the embedded demo only) is the command's
// to judge.
func (l *loader) mockNow(name string) time.Time {
	v := l.getenv(name)
	if v == "" {
		return time.Time{}
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		l.fail("%s=%q: must be an RFC 3339 time such as 2026-11-27T14:30:00+01:00", name, v)
		return time.Time{}
	}
	return t
}

// shown quotes a non-secret value for an error message, shortened so a
// pasted blob does not flood the log.
func shown(v string) string {
	const limit = 64
	if len(v) > limit {
		v = v[:limit] + "..."
	}
	return strconv.Quote(v)
}

func (l *loader) intIn(name string, def, lo, hi int) int {
	v := l.getenv(name)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < lo || n > hi {
		l.fail("%s=%s: must be an integer from %d to %d", name, shown(v), lo, hi)
		return def
	}
	return n
}

func (l *loader) durationIn(name string, def, lo, hi time.Duration) time.Duration {
	v := l.getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	if err != nil || d < lo || d > hi {
		l.fail("%s=%s: must be a duration from %s to %s, like %s", name, shown(v), lo, hi, def)
		return def
	}
	return d
}

// boolean accepts true/false/1/0 only: "yes", "on" or "TRUE" are refused
// rather than guessed, because a write switch must not be read wrongly.
func (l *loader) boolean(name string) bool {
	switch v := l.getenv(name); v {
	case "", "false", "0":
		return false
	case "true", "1":
		return true
	default:
		l.fail("%s=%s: must be true, false, 1 or 0", name, shown(v))
		return false
	}
}

func (l *loader) enum(name, def string, allowed ...string) string {
	v := l.getenv(name)
	if v == "" {
		return def
	}
	for _, a := range allowed {
		if v == a {
			return v
		}
	}
	l.fail("%s=%s: must be one of %s", name, shown(v), strings.Join(allowed, ", "))
	return def
}

func (l *loader) level(name string) slog.Level {
	switch v := l.enum(name, "info", "debug", "info", "warn", "error"); v {
	case "debug":
		return slog.LevelDebug
	case "warn":
		return slog.LevelWarn
	case "error":
		return slog.LevelError
	}
	return slog.LevelInfo
}

func (l *loader) baseURL(name string) string {
	return l.httpBase(name, httpBaseRules{
		example:     "https://storelink.example.internal",
		credentials: "; store keys go in STORELINK_KEYRING",
	})
}

// httpBaseRules are what one base-URL setting says when it is refused.
type httpBaseRules struct {
	// example is a URL of the right shape; credentials and query end the
	// messages about user info and about a query or fragment.
	example, credentials, query string
	// maxLen bounds the value when not zero; tooLong ends its message.
	maxLen  int
	tooLong string
}

// httpBase reads an absolute http(s) base URL with no credentials, query
// or fragment, without a trailing slash; "" when unset or refused.
func (l *loader) httpBase(name string, r httpBaseRules) string {
	v := l.getenv(name)
	if v == "" {
		return ""
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		// url.Parse's error repeats the value, which might hold credentials.
		l.fail("%s: is not a URL: want an absolute http or https URL like %s", name, r.example)
	case u.User != nil:
		l.fail("%s: must not contain credentials%s", name, r.credentials)
	case (u.Scheme != "http" && u.Scheme != "https") || u.Host == "":
		l.fail("%s=%s: must be an absolute http or https URL like %s", name, shown(v), r.example)
	case u.RawQuery != "" || u.Fragment != "":
		l.fail("%s=%s: must not have a query or fragment%s", name, shown(v), r.query)
	case r.maxLen > 0 && len(v) > r.maxLen:
		l.fail("%s: is %d characters long; at most %d %s", name, len(v), r.maxLen, r.tooLong)
	default:
		return strings.TrimSuffix(v, "/")
	}
	return ""
}

// secret reads NAME or NAME_FILE, never both. It returns the value, the
// variable it came from (for messages), the file path if any, and whether
// the read succeeded. The value itself never appears in an error.
func (l *loader) secret(name string) (value, from, path string, ok bool) {
	inline, path := l.getenv(name), l.getenv(name+"_FILE")
	switch {
	case inline != "" && path != "":
		l.fail("%s and %s_FILE are both set: keep one", name, name)
		return "", name, "", false
	case path != "":
		from = name + "_FILE=" + shown(path)
		b, err := l.readFile(path)
		if err != nil {
			l.fail("%s: cannot read the file: %v", from, err)
			return "", from, "", false
		}
		if len(strings.TrimSpace(string(b))) == 0 {
			l.fail("%s: the file is empty", from)
			return "", from, "", false
		}
		if !l.privateFile(from, path) {
			return "", from, "", false
		}
		return string(b), from, path, true
	default:
		return inline, name, "", true
	}
}

// hostConsentKey reads the sealing key of host consent from the file NAME
// names. There is no default key and no inline variable: a key every
// installation shared would let anyone forge a consent, and one in the
// environment leaks into process listings.
func (l *loader) hostConsentKey(name string, wanted bool) []byte {
	path := l.getenv(name)
	switch {
	case path == "" && wanted:
		l.fail("WRITE_APPROVAL=host needs %s: write a key with `openssl rand -hex 32 > FILE` (mode 0600), set %s=FILE, and give every replica the same file", name, name)
		return nil
	case path == "":
		return nil
	case !wanted:
		l.fail("%s is set but WRITE_APPROVAL is not \"host\": nothing would use the key; set WRITE_APPROVAL=host or unset it", name)
		return nil
	}
	from := name + "=" + shown(path)
	b, err := l.readFile(path)
	if err != nil {
		l.fail("%s: cannot read the file: %v", from, err)
		return nil
	}
	if !l.privateFile(from, path) {
		return nil
	}
	key, err := consent.ParseKey(b)
	if err != nil {
		l.fail("%s: %v", from, err)
		return nil
	}
	return key
}

// privateFile refuses a secret file that users other than its owner can
// read (secretfile states the rule), and reports whether it passed. The
// file is examined on the disk: a path that is not there (the in-memory
// files of tests) is judged by the read alone.
func (l *loader) privateFile(from, path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return true
	}
	if err := secretfile.CheckInfo(shellWord(path), fi); err != nil {
		l.fail("%s: %v", from, err)
		return false
	}
	return true
}

// shellWord is path as a command line takes it, whole (the fix names it):
// as it is when it holds nothing a shell or a terminal would act on, else
// quoted.
func shellWord(path string) string {
	for _, r := range path {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:@,", r)) {
			return strconv.Quote(path)
		}
	}
	return path
}

// privateFiles applies privateFile to the secret files that others read
// (the token files of `serve`), so that every command, and doctor, names a
// loose one, not only the one that opens it.
func (l *loader) privateFiles(names ...string) {
	for _, name := range names {
		if path := l.getenv(name); path != "" {
			l.privateFile(name+"="+shown(path), path)
		}
	}
}

// databaseURL reads a PostgreSQL URL from NAME or NAME_FILE. The URL may
// carry a password, so no message quotes it.
func (l *loader) databaseURL(name string) string {
	v, from, path, ok := l.secret(name)
	if !ok || v == "" {
		return ""
	}
	if path != "" {
		v = strings.TrimSuffix(strings.TrimSuffix(v, "\n"), "\r")
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		l.fail("%s: is not a URL: want postgres://user:password@host:5432/dbname", from)
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		l.fail("%s: must be a postgres:// or postgresql:// URL like postgres://user:password@host:5432/dbname; leave it unset to keep the state in SQLite (STATE_DB_PATH)", from)
	case u.Host == "" && u.Query().Get("host") == "":
		l.fail("%s: names no host: want postgres://user:password@host:5432/dbname", from)
	case strings.TrimPrefix(u.Path, "/") == "":
		l.fail("%s: names no database: want postgres://user:password@host:5432/dbname", from)
	default:
		return v
	}
	return ""
}

// RedactURL returns a database URL fit for a log line: the password, in the
// user part or as a password= parameter, is replaced by xxxxx.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func (l *loader) statePath() string {
	if v := l.getenv("STATE_DB_PATH"); v != "" {
		return v
	}
	// XDG says a relative XDG_STATE_HOME is invalid and must be ignored.
	if x := l.getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "storelink-mcp", "state.db")
	}
	if h := l.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "storelink-mcp", "state.db")
	}
	l.fail("STATE_DB_PATH: neither it, XDG_STATE_HOME nor HOME is set: set STATE_DB_PATH to where the order ledger should live")
	return ""
}

// journalPath is where send outcomes wait for the ledger: STATE_JOURNAL_PATH,
// else beside the SQLite file (so two state files never share a journal),
// else, with PostgreSQL, in the user's state directory.
func (l *loader) journalPath(c *Config) string {
	if v := l.getenv("STATE_JOURNAL_PATH"); v != "" {
		if c.StatePath != "" {
			db := filepath.Clean(c.StatePath)
			for _, f := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
				if filepath.Clean(v) == f {
					l.fail("STATE_JOURNAL_PATH=%s: is the state database's own file; give the outcome journal a file of its own, or unset it to keep it beside the database", shown(v))
					return ""
				}
			}
		}
		return v
	}
	if c.StatePath != "" {
		return c.StatePath + ".outcomes.jsonl"
	}
	if c.StateDatabaseURL == "" {
		return "" // statePath has said what is missing
	}
	if x := l.getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "storelink-mcp", "outcomes.jsonl")
	}
	if h := l.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "storelink-mcp", "outcomes.jsonl")
	}
	if c.AllowWrites && !c.ReadOnly {
		l.fail("STATE_JOURNAL_PATH: neither it, XDG_STATE_HOME nor HOME is set: set STATE_JOURNAL_PATH to a file on this machine's persistent storage, where the outcome of an order waits if PostgreSQL cannot take it")
	}
	return ""
}

// String summarizes the configuration for a start-up log line, with the
// keyring as fingerprints and no secret.
func (c Config) String() string {
	upstream, kr := c.UpstreamBaseURL, c.Keyring.String()
	if upstream == "" {
		upstream = "embedded-demo"
	}
	if c.Keyring == nil {
		// Only the embedded demo StoreLink runs without a keyring: it
		// brings its own.
		kr = "embedded-demo"
	}
	st := c.StatePath
	if c.StateDatabaseURL != "" {
		st = fmt.Sprintf("%s max_conns=%d", RedactURL(c.StateDatabaseURL), c.StateMaxConns)
	}
	return fmt.Sprintf("upstream=%s keyring=%s lookback=%d log=%s timeout=%s allow_writes=%t max_order_units=%d read_only=%t write_approval=%s approval_ttl=%s state=%s journal=%s breaker=%d/%s master_data_ttl=%s",
		upstream, kr, c.DefaultLookbackDays, c.LogLevel, c.UpstreamTimeout, c.AllowWrites, c.MaxOrderUnits,
		c.ReadOnly, c.WriteApproval, c.ApprovalTTL, st, c.JournalPath, c.BreakerFailures, c.BreakerCooldown, c.MasterDataTTL) + c.webhookSummary() + c.oauthSummary()
}

// oauthSummary is String's part about OAuth; "" without it, so the summary
// of a server that does not use it stays as it was.
func (c Config) oauthSummary() string {
	if c.OAuthIssuer == "" {
		return ""
	}
	return " oauth_issuer=" + c.OAuthIssuer + " oauth_audience=" + c.OAuthAudience
}

// Format prints String for every verb, so %+v cannot dump the credential.
func (c Config) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, c.String()) }

// LogValue logs the redacted summary.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Removed are the variables of the shared approval credential, which named
// approvers replaced: Load refuses each with LegacyApprovalMessage.
var Removed = []string{"APPROVAL_CREDENTIAL", "APPROVAL_CREDENTIAL_FILE", "APPROVER_CREDENTIAL"}

// LegacyApprovalMessage is the start-up refusal of a variable of the shared
// approval credential, which named approvers replaced: what to do instead.
func LegacyApprovalMessage(name string) string {
	return fmt.Sprintf("%s is no longer used: approvers are named and verified by the server's own record; run `storelink-mcp approvers add NAME` for each approver, hand each their secret, and remove %s from the environment", name, name)
}
