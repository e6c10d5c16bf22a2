package config

//go:generate go run ./docgen

import (
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/callerlimit"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
	"github.com/korral/storelink/mcpserver/internal/upstream"
	"github.com/korral/storelink/storelinkclient"
)

// Setting is one row of the settings table: one environment variable. Load
// parses it, AddFlags gives it a flag unless secret, and docgen writes the
// README table and help text from it.
type Setting struct {
	// Name is the environment variable.
	Name string
	// Default is the README's default (Markdown); "" when the kind shows it
	// or there is none.
	Default string
	// Description is the README's explanation (Markdown, full sentences).
	Description string
	// Usage is the flag's help, the argument's name in backquotes.
	Usage string
	// Secret: never echoed, never a flag (argv is visible to local users).
	Secret bool
	// Bundle, when set, makes it an install question of the MCP bundle.
	Bundle *BundleQuestion

	// kind parses the setting; nil when only a cross-setting rule reads it.
	kind kind
}

// kind parses one setting, shows its default, and marks boolean flags.
type kind struct {
	read func(l *loader, c *Config, name string)
	// shown is the default value in the README's words; "" when none.
	shown string
	// boolean flags take no value: --read-only is --read-only=true.
	boolean bool
}

// intIn is an integer from lo to hi, def when unset.
func intIn(def, lo, hi int, field func(*Config) *int) kind {
	return kind{shown: strconv.Itoa(def), read: func(l *loader, c *Config, name string) {
		*field(c) = l.intIn(name, def, lo, hi)
	}}
}

// durationIn is a Go duration from lo to hi, def when unset.
func durationIn(def, lo, hi time.Duration, field func(*Config) *time.Duration) kind {
	return kind{shown: shortDuration(def), read: func(l *loader, c *Config, name string) {
		*field(c) = l.durationIn(name, def, lo, hi)
	}}
}

// shortDuration writes d the way the README does: 24h, 30m, 5s.
func shortDuration(d time.Duration) string {
	switch {
	case d != 0 && d%time.Hour == 0:
		return fmt.Sprintf("%dh", d/time.Hour)
	case d != 0 && d%time.Minute == 0:
		return fmt.Sprintf("%dm", d/time.Minute)
	}
	return d.String()
}

// boolean is true, false, 1 or 0; false when unset.
func boolean(field func(*Config) *bool) kind {
	return kind{shown: "false", boolean: true, read: func(l *loader, c *Config, name string) {
		*field(c) = l.boolean(name)
	}}
}

// oneOf is one of allowed, def when unset.
func oneOf(def string, allowed []string, field func(*Config) *string) kind {
	return kind{shown: def, read: func(l *loader, c *Config, name string) {
		*field(c) = l.enum(name, def, allowed...)
	}}
}

// logLevel is debug, info, warn or error; info when unset.
func logLevel(field func(*Config) *slog.Level) kind {
	return kind{shown: "info", read: func(l *loader, c *Config, name string) {
		*field(c) = l.level(name)
	}}
}

// text is taken as given; "" when unset.
func text(field func(*Config) *string) kind {
	return kind{read: func(l *loader, c *Config, name string) {
		*field(c) = l.getenv(name)
	}}
}

// exporter is otlp (when unset) or none.
func exporter(on func(*loader) *bool) kind {
	return kind{shown: "otlp", read: func(l *loader, _ *Config, name string) {
		*on(l) = l.enum(name, "otlp", "otlp", "none") == "otlp"
	}}
}

// parsed is a setting with a reader of its own (a URL, a time, a ratio).
func parsed(read func(l *loader, c *Config, name string)) kind {
	return kind{read: read}
}

// The variables other packages name in their messages.
const (
	EnvKeyring        = "STORELINK_KEYRING"
	EnvKeyringFile    = "STORELINK_KEYRING_FILE"
	EnvAuthTokensFile = "MCP_AUTH_TOKENS_FILE"
	EnvHTTPInsecure   = "MCP_HTTP_INSECURE"
	EnvOAuthIssuer    = "OAUTH_ISSUER"
)

// DefaultMaxOrderUnits is MAX_ORDER_UNITS when unset; the tools' generated
// schemas (tools/schemas.gen.go) are built for it.
const DefaultMaxOrderUnits = 500

// settings is the table, in the order Load parses the settings and the
// README lists them. Load runs cross-setting rules after STORELINK_MOCK_NOW,
// APPROVAL_WEBHOOK_URL and OAUTH_AUDIENCE, so moving a row across one
// changes the message order (TestProblemsInTheirOrder).
var settings = []Setting{
	{Name: "UPSTREAM_BASE_URL", Default: "(unset)", Usage: "StoreLink's base `URL`; unset runs the embedded demo StoreLink",
		Bundle: &BundleQuestion{Order: 1, Key: "storelink_url", Title: "StoreLink URL", Required: true,
			Description: "Base URL of your StoreLink, e.g. https://storelink.korral.example."},
		Description: "StoreLink base URL. Unset: start the embedded demo StoreLink, with made-up data that every answer, the instructions and `/readyz` flag as demo.",
		kind:        parsed(func(l *loader, c *Config, name string) { c.UpstreamBaseURL = l.baseURL(name) })},
	{Name: EnvKeyring, Default: "(the demo's keyring)", Secret: true,
		Bundle: &BundleQuestion{Order: 3, Title: "Keyring (instead of a file)",
			Description: `The same JSON {"store_id": "key"}, kept in the system keychain; leave empty when you give a keyring file.`},
		Description: "JSON object `{\"store_id\": \"key\"}`; required with `UPSTREAM_BASE_URL`; the server refuses to start with it but without `UPSTREAM_BASE_URL` (exit 2): real keys against demo data mean a lost setting."},
	{Name: EnvKeyringFile, Usage: "`file` holding the keyring JSON",
		Bundle: &BundleQuestion{Order: 2, Title: "Keyring file",
			Description: `JSON file {"store_id": "key"} with the keys of your stores, mode 0600; re-read when StoreLink refuses a key, so rotation needs no restart. Give this or the keyring below.`},
		Description: "The keyring in a file (preferred); re-read when StoreLink refuses a key, so weekly rotation needs no restart."},
	{Name: "DEFAULT_LOOKBACK_DAYS", Usage: "`days` of sales history when a call gives none, 1 to 28",
		Description: "Sales history behind the sell rate when the call gives none (1 to 28).",
		kind:        intIn(projection.DefaultLookbackDays, 1, storelinkclient.HistoryDays, func(c *Config) *int { return &c.DefaultLookbackDays })},
	{Name: "LOG_LEVEL", Usage: "minimum `level` logged: debug, info, warn or error",
		Description: "`debug`, `info`, `warn` or `error`; logs go to stderr.",
		kind:        logLevel(func(c *Config) *slog.Level { return &c.LogLevel })},
	{Name: "LOG_FILE", Default: "(stderr)", Usage: "append the logs to `file` instead of stderr",
		Description: "Append the JSON logs to this file instead of stderr.",
		kind:        text(func(c *Config) *string { return &c.LogFile })},
	{Name: "UPSTREAM_TIMEOUT", Usage: "timeout of one StoreLink request, a `duration` from 100ms to 60s",
		Description: "Timeout of one StoreLink request (100ms to 60s).",
		kind:        durationIn(upstream.DefaultTimeout, 100*time.Millisecond, 60*time.Second, func(c *Config) *time.Duration { return &c.UpstreamTimeout })},
	{Name: "UPSTREAM_MAX_IN_FLIGHT", Usage: "at most `N` StoreLink requests open at once from this replica, 1 to 1024",
		Description: "StoreLink requests one replica keeps open at once, across every call (1 to 1024): one budget, taken in turns by the calls waiting for it. A `429`, or a `503` with `Retry-After`, halves it for a while (never below 1); served answers grow it back by one per window, never above this ([ADR 0024](docs/decisions/0024-one-budget-per-storelink.md)).",
		kind:        intIn(upstream.DefaultMaxInFlight, 1, 1024, func(c *Config) *int { return &c.UpstreamMaxInFlight })},
	{Name: "UPSTREAM_CALLER_SHARE_PERCENT", Usage: "at most `percent` of the StoreLink budget one caller holds while another waits, 1 to 100",
		Description: "The part of the `UPSTREAM_MAX_IN_FLIGHT` budget one caller (bearer token, OAuth subject or stdio session) may hold while another caller waits for a place (1 to 100; `100` turns the share off). A caller alone has the whole budget; beyond its share its further requests wait, they are not refused ([ADR 0036](docs/decisions/0036-limits-per-caller.md)).",
		kind:        intIn(callerlimit.DefaultSharePercent, 1, 100, func(c *Config) *int { return &c.UpstreamCallerShare })},
	{Name: "MCP_CALLER_CALLS_PER_MINUTE", Usage: "at most `N` tool calls a minute from one caller, 0 (no limit) to 100000",
		Description: "Tool calls one caller (bearer token, OAuth subject or stdio session) may make a minute, refilled continuously (0 to 100000; `0`, the default, sets no limit). A call beyond it and `MCP_CALLER_BURST` gets `RATE_LIMITED` with `retry_after_seconds` before any tool runs, and counts in `storelink_mcp_rate_limited_calls_total` ([Limits per caller](docs/operations.md#limits-per-caller)).",
		kind:        intIn(callerlimit.DefaultCallsPerMinute, 0, 100000, func(c *Config) *int { return &c.CallerCallsPerMinute })},
	{Name: "MCP_CALLER_BURST", Usage: "at most `N` tool calls at once from one caller after a quiet spell, 1 to 10000",
		Description: "Tool calls one caller may make at once after a quiet spell (1 to 10000), with `MCP_CALLER_CALLS_PER_MINUTE`.",
		kind:        intIn(callerlimit.DefaultBurst, 1, 10000, func(c *Config) *int { return &c.CallerBurst })},
	{Name: "ALLOW_WRITES", Usage: "let a confirmed order reach StoreLink",
		Bundle: &BundleQuestion{Order: 5, Title: "Allow orders",
			Description: "Let a confirmed order reach StoreLink; off, the order tool only previews."},
		Description: "`true` lets a confirmed order reach StoreLink; otherwise the write tool only previews.",
		kind:        boolean(func(c *Config) *bool { return &c.AllowWrites })},
	{Name: "MAX_ORDER_UNITS", Usage: "at most `N` units in one order, 1 to 100000",
		Description: "Hard ceiling on one order's units, whatever the agent confirms (1 to 100000).",
		kind:        intIn(DefaultMaxOrderUnits, 1, 100000, func(c *Config) *int { return &c.MaxOrderUnits })},
	{Name: "READ_ONLY", Usage: "do not offer the write tool",
		Bundle: &BundleQuestion{Order: 6, Title: "Read only",
			Description: "Remove the order tool altogether."},
		Description: "`true` removes the write tool from the tool list (and from the instructions).",
		kind:        boolean(func(c *Config) *bool { return &c.ReadOnly })},
	{Name: "WRITE_APPROVAL", Usage: "approval `mode` of a confirmed order: none, required or host",
		Bundle: &BundleQuestion{Order: 7, Title: "Approval mode",
			Description: "none: a confirmed order is sent; host: you confirm each order by typing its quantity; required: a named approver approves it in the approvals console."},
		Description: "`required`: confirmed orders are staged until a named approver approves them (ADR 0007); the server itself holds no approval secret. `host`: before an order is sent, the host asks its user to confirm it by typing its quantity (MCP form elicitation, or `input_required` on 2026-07-28); this proves a person at the host saw the order, not who they are (ADR 0007). A host without elicitation gets `HOST_CONSENT_UNAVAILABLE`: use `required` there.",
		kind:        oneOf(ApprovalNone, []string{ApprovalNone, ApprovalRequired, ApprovalHost}, func(c *Config) *string { return &c.WriteApproval })},
	{Name: "HOST_CONSENT_KEY_FILE", Usage: "`file` holding the AES-256 key that seals host consent questions",
		Bundle: &BundleQuestion{Order: 8, Title: "Consent key file",
			Description: "Only with approval mode host: a file of 64 hex digits (openssl rand -hex 32), mode 0600."},
		Description: "With `WRITE_APPROVAL=host` (and only then, which it requires): path to a file holding the AES-256 key, 64 hex digits (`openssl rand -hex 32 > FILE`, mode 0600), that seals the `requestState` of consent questions. There is no default key; every replica needs the same file."},
	{Name: "APPROVAL_TTL", Usage: "how long a staged order waits for approval, a `duration` from 1m to 168h",
		Description: "How long a staged order waits for approval (1m to 168h).",
		kind:        durationIn(24*time.Hour, time.Minute, 7*24*time.Hour, func(c *Config) *time.Duration { return &c.ApprovalTTL })},
	{Name: "STATE_DB_PATH", Default: "`$XDG_STATE_HOME/storelink-mcp/state.db` (else `~/.local/state/…`)", Usage: "`path` of the SQLite state database",
		Bundle: &BundleQuestion{Order: 4, Title: "State database",
			Description: "SQLite file for the order ledger, staged approvals and the audit trail; empty: ~/.local/state/storelink-mcp/state.db."},
		Description: "SQLite file: order ledger, staged approvals, audit trail."},
	{Name: "STATE_DATABASE_URL", Default: "(unset: SQLite)", Secret: true,
		Description: "PostgreSQL URL `postgres://user:password@host:5432/db` for replicas on several machines; then no SQLite file is created. See [Several machines](#several-machines-postgresql)."},
	{Name: "STATE_DATABASE_URL_FILE", Usage: "`file` holding the PostgreSQL URL",
		Description: "The same, from a file, so the password stays out of the environment."},
	{Name: "STATE_DATABASE_MAX_CONNS", Usage: "at most `N` PostgreSQL connections of this replica, 1 to 1000",
		Description: "Most PostgreSQL connections one replica opens (1 to 1000).",
		kind:        intIn(10, 1, 1000, func(c *Config) *int { return &c.StateMaxConns })},
	{Name: "STATE_JOURNAL_PATH", Default: "`STATE_DB_PATH` + `.outcomes.jsonl`; with PostgreSQL `$XDG_STATE_HOME/storelink-mcp/outcomes.jsonl` (else `~/.local/state/…`)", Usage: "`path` of the outcome journal",
		Description: "Outcome journal: a local file (JSON lines, `0600`) that keeps what StoreLink answered to an order until the ledger has recorded it; replayed at start-up, in the background and by `doctor`, each order read back from StoreLink before it is recorded (ADR 0006). It must be a regular file of the server's user with mode `0600`, not a symlink; otherwise, or where writes are allowed and it cannot be written, the server refuses to start (exit 2). Put it on each machine's persistent storage."},
	{Name: "BREAKER_FAILURES", Usage: "`N` consecutive StoreLink failures open the circuit breaker, 1 to 100",
		Description: "Consecutive StoreLink failures that open the circuit breaker (1 to 100).",
		kind:        intIn(upstream.DefaultBreakerFailures, 1, 100, func(c *Config) *int { return &c.BreakerFailures })},
	{Name: "BREAKER_COOLDOWN", Usage: "how long the open breaker fails calls fast, a `duration` from 1s to 10m",
		Description: "How long the open breaker fails calls fast before one probe (1s to 10m).",
		kind:        durationIn(upstream.DefaultBreakerCooldown, time.Second, 10*time.Minute, func(c *Config) *time.Duration { return &c.BreakerCooldown })},
	{Name: "MASTER_DATA_TTL", Usage: "how long master data is reused, a `duration` from 0 (off) to 1h",
		Description: "How long store, SKU and supplier master data are reused (0 to 1h; `0` turns the reuse off); StoreLink's `Cache-Control` can shorten it (`max-age`) or forbid it (`no-store`, `no-cache`). Stock, sales and orders are always read fresh ([ADR 0013](docs/decisions/0013-master-data-cache.md)).",
		kind:        durationIn(upstream.DefaultMasterDataTTL, 0, time.Hour, func(c *Config) *time.Duration { return &c.MasterDataTTL })},
	{Name: "STDIO_MAX_LINE_BYTES", Usage: "longest line read over stdio, in `bytes` from 1024 to 67108864",
		Description: "Longest line read over stdio (1024 to 67108864 bytes); a longer one, like any malformed line, gets a JSON-RPC error and the server reads on.",
		kind:        intIn(1<<20, 1<<10, 64<<20, func(c *Config) *int { return &c.StdioMaxLineBytes })},
	{Name: "MCP_HTTP_MAX_SESSIONS", Usage: "at most `N` open MCP sessions of serve --http, 1 to 100000",
		Description: "Open MCP sessions `serve --http` keeps (1 to 100000), a 2026-07-28 request counting as one while it runs; a new session beyond it gets `503` with `Retry-After`, a request the JSON-RPC error `-32000` naming the cap. Not applied under `--stateless`.",
		kind:        intIn(1000, 1, 100000, func(c *Config) *int { return &c.HTTPMaxSessions })},
	{Name: "MCP_HTTP_MAX_SESSIONS_PER_TOKEN", Usage: "at most `N` open MCP sessions of one bearer token, 1 to 100000",
		Description: "Open sessions, and 2026-07-28 requests running, one bearer token may hold (1 to 100000); beyond it the same refusals.",
		kind:        intIn(100, 1, 100000, func(c *Config) *int { return &c.HTTPMaxSessionsPerToken })},
	{Name: "MCP_HTTP_SESSION_IDLE_TIMEOUT", Usage: "close an HTTP session unused this long, a `duration` from 1s to 24h",
		Description: "An HTTP session unused this long is closed and frees its place (1s to 24h).",
		kind:        durationIn(30*time.Minute, time.Second, 24*time.Hour, func(c *Config) *time.Duration { return &c.HTTPSessionIdleTimeout })},
	{Name: EnvAuthTokensFile, Usage: "bearer token `file` of serve --http",
		Description: "Bearer token file of `serve --http`: one `label token` line per client, re-read when it changes. Required unless the address is loopback or `--insecure-no-auth` is given.",
		kind:        text(func(c *Config) *string { return &c.AuthTokensFile })},
	{Name: EnvHTTPInsecure, Usage: "serve --http without tokens on a non-loopback address, as --insecure-no-auth",
		Description: "`true` is `--insecure-no-auth`: `serve --http` without tokens on a non-loopback address, only when something in front of it authenticates. Not together with `MCP_AUTH_TOKENS_FILE`.",
		kind:        boolean(func(c *Config) *bool { return &c.HTTPInsecure })},
	{Name: "APPROVER_SECRET", Secret: true,
		Description: "The secret of the approver that `storelink-mcp approvals --approver NAME` presents, unless `--secret-file` or `--secret-stdin` gives it; checked against the approver register. The MCP server does not use it.",
		kind:        text(func(c *Config) *string { return &c.ApproverSecret })},
	{Name: "STORELINK_MOCK_NOW", Default: "(real clock)", Usage: "pin the embedded demo StoreLink's clock and the server's to this RFC 3339 `time`",
		Description: "Pins the embedded mock's and the server's clock (RFC 3339), for reproducible runs. Only for a server without `UPSTREAM_BASE_URL`; every other command (`approvals`, `audit`, `doctor`, `migrate`) refuses it.",
		kind:        parsed(func(l *loader, c *Config, name string) { c.MockNow = l.mockNow(name) })},
	{Name: "APPROVAL_WEBHOOK_URL", Default: "(unset: nobody is told)", Secret: true,
		Description: "Each staged order POSTs a signed JSON notice here, with a one-line `text` that Slack or Teams incoming-webhooks show; retried in the background, never delaying the agent's answer. https, or http to a loopback host only. Its path or query may hold the receiver's token, so it has no flag. See [Approval webhook](docs/operations.md#approval-webhook).",
		kind:        parsed(func(l *loader, c *Config, name string) { c.ApprovalWebhookURL = l.webhookURL(name) })},
	{Name: "APPROVAL_WEBHOOK_SECRET", Secret: true,
		Description: "Secret of the notices' `X-Korral-Signature` (HMAC-SHA256, 16+ characters); required with `APPROVAL_WEBHOOK_URL`."},
	{Name: "APPROVAL_WEBHOOK_SECRET_FILE", Usage: "`file` holding the webhook notices' signing secret",
		Description: "The same, from a file."},
	{Name: "CONSOLE_PUBLIC_URL", Default: "(unset: no link)", Usage: "base `URL` at which people open the approvals console",
		Description: "The approvals console's address as people open it, e.g. `https://approvals.korral.example`; notices, the tool's answer and URL elicitation link to the order there (ADR 0021).",
		kind:        parsed(func(l *loader, c *Config, name string) { c.ConsolePublicURL = l.consoleURL(name) })},
	{Name: "MCP_PUBLIC_URL", Usage: "base `URL` at which clients reach serve --http",
		Description: "Base URL clients reach `serve --http` at, e.g. `https://mcp.korral.example` (https, or http to a loopback host); its `/mcp` is the server's OAuth resource identifier.",
		kind: parsed(func(l *loader, c *Config, name string) {
			if v := l.oauthURL(name, "https://mcp.korral.example"); v != "" {
				c.MCPPublicURL = strings.TrimSuffix(v, "/")
			}
		})},
	{Name: EnvOAuthIssuer, Default: "(unset: no OAuth)", Usage: "issuer `URL` of the identity provider whose access tokens serve --http accepts",
		Description: "Issuer of the identity provider whose access tokens `serve --http` accepts beside the token file, e.g. `https://login.korral.example/realms/buyers`, taken exactly; keys come from its metadata. See [OAuth](#oauth-21-access-tokens).",
		kind: parsed(func(l *loader, c *Config, name string) {
			c.OAuthIssuer = l.oauthURL(name, "https://login.korral.example/realms/buyers")
		})},
	{Name: "OAUTH_AUDIENCE", Default: "`MCP_PUBLIC_URL` + `/mcp`", Usage: "resource `URL` an access token must name as audience",
		Description: "Resource identifier an access token must name as audience (`aud`); also the `resource` of `/.well-known/oauth-protected-resource`. Needs `OAUTH_ISSUER`.",
		// The default and the pairing with OAUTH_ISSUER are Load's (oauth).
		kind: parsed(func(l *loader, c *Config, name string) {
			l.audience = l.oauthURL(name, "https://mcp.korral.example/mcp")
		})},
	{Name: "OTEL_SDK_DISABLED", Usage: "export nothing over OTLP, whatever else is set",
		Description: "`true` exports nothing over OTLP whatever else is set; `/metrics` still answers.",
		kind:        boolean(func(c *Config) *bool { return &c.Telemetry.Disabled })},
	{Name: "OTEL_SERVICE_NAME", Default: "`storelink-mcp`", Usage: "`name` given as service.name to every span and metric",
		Description: "`service.name` of every span and metric.",
		kind: parsed(func(l *loader, c *Config, name string) {
			if c.Telemetry.ServiceName = l.getenv(name); c.Telemetry.ServiceName == "" {
				c.Telemetry.ServiceName = "storelink-mcp"
			}
		})},
	{Name: "OTEL_TRACES_SAMPLER", Usage: "which calls are traced, as a `sampler` name",
		Description: "`parentbased_always_on`, `parentbased_always_off`, `parentbased_traceidratio`, `always_on`, `always_off` or `traceidratio`.",
		kind:        oneOf(telemetry.Samplers[0], telemetry.Samplers, func(c *Config) *string { return &c.Telemetry.Sampler })},
	{Name: "OTEL_EXPORTER_OTLP_PROTOCOL", Default: "`http/protobuf`", Usage: "OTLP `protocol`; only http/protobuf is built in",
		Description: "The only protocol built in; any other value is refused.",
		kind:        parsed(func(l *loader, _ *Config, name string) { l.otlpProtocol(name) })},
	{Name: "OTEL_TRACES_SAMPLER_ARG", Default: "`1`", Usage: "the `ratio` (0 to 1) of the traceidratio samplers",
		Description: "Ratio (0 to 1) of the `traceidratio` samplers.",
		kind:        parsed(func(l *loader, c *Config, name string) { c.Telemetry.SamplerArg = l.samplerArg(name) })},
	{Name: "OTEL_METRIC_EXPORT_INTERVAL", Usage: "`milliseconds` between OTLP metric pushes, 1000 to 3600000",
		Description: "Milliseconds between OTLP metric pushes (1000 to 3600000).",
		kind: kind{shown: "60000", read: func(l *loader, c *Config, name string) {
			c.Telemetry.MetricInterval = time.Duration(l.intIn(name, 60000, 1000, 3600000)) * time.Millisecond
		}}},
	{Name: "OTEL_EXPORTER_OTLP_ENDPOINT", Default: "(unset: no tracing, no push)", Usage: "base `URL` of an OTLP/HTTP collector",
		Description: "OTLP/HTTP collector base URL (such as `http://127.0.0.1:4318`): spans to `/v1/traces`, metrics to `/v1/metrics`. See [Tracing](docs/observability.md#tracing).",
		kind:        parsed(func(l *loader, _ *Config, name string) { l.otlp.base = l.otlpURL(name) })},
	{Name: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", Usage: "full OTLP/HTTP `URL` for spans",
		Description: "Full OTLP/HTTP URL for spans, instead of the one derived from `OTEL_EXPORTER_OTLP_ENDPOINT`.",
		kind:        parsed(func(l *loader, _ *Config, name string) { l.otlp.traces.url = l.otlpURL(name) })},
	{Name: "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT", Usage: "full OTLP/HTTP `URL` for metrics",
		Description: "Full OTLP/HTTP URL for metrics, instead of the one derived from `OTEL_EXPORTER_OTLP_ENDPOINT`.",
		kind:        parsed(func(l *loader, _ *Config, name string) { l.otlp.metrics.url = l.otlpURL(name) })},
	{Name: "OTEL_TRACES_EXPORTER", Usage: "`exporter` of spans: otlp, or none",
		Description: "`none` exports no spans while metrics are pushed.",
		kind:        exporter(func(l *loader) *bool { return &l.otlp.traces.on })},
	{Name: "OTEL_METRICS_EXPORTER", Usage: "`exporter` of metrics over OTLP: otlp, or none",
		Description: "`none` pushes no metrics over OTLP while spans are exported; `/metrics` is not affected.",
		kind:        exporter(func(l *loader) *bool { return &l.otlp.metrics.on })},
	{Name: "OTEL_EXPORTER_OTLP_HEADERS", Secret: true,
		Description: "Headers of every export, `key=value,key=value` (URL-encoded values), such as a collector's API key. Never logged.",
		kind:        parsed(func(l *loader, c *Config, name string) { c.Telemetry.Headers = l.otlpHeaders(name) })},
	{Name: "MCP_METRICS_TOKEN_FILE", Usage: "`file` holding the bearer token that serve --metrics requires",
		Description: "File holding the bearer token that `/metrics` requires; needed when `serve --metrics ADDR` is not loopback. A token of its own, never one of `MCP_AUTH_TOKENS_FILE`'s.",
		kind:        text(func(c *Config) *string { return &c.MetricsTokenFile })},
}

// Settings returns the settings table, in the order Load parses it.
func Settings() []Setting { return append([]Setting(nil), settings...) }

// Flag is the setting's flag name: the variable in lower case with `_` as
// `-`; "" for a secret.
func (s Setting) Flag() string {
	if s.Secret {
		return ""
	}
	return strings.ReplaceAll(strings.ToLower(s.Name), "_", "-")
}

// ShownDefault is the default as the README's table shows it (Markdown).
func (s Setting) ShownDefault() string {
	if s.Default == "" && s.kind.shown != "" {
		return "`" + s.kind.shown + "`"
	}
	return s.Default
}

// FlagUsage is the flag's help line: Usage and the variable it sets.
func (s Setting) FlagUsage() string {
	if s.kind.boolean {
		return s.Usage + " (" + s.Name + "=true)"
	}
	return s.Usage + " (" + s.Name + ")"
}

// AddFlags adds to fs the flag of every non-secret setting fs does not
// already define. A given flag calls set with the variable's name and
// value. A boolean flag takes no value or a strconv.ParseBool one, and sets
// "true" or "false".
func AddFlags(fs *flag.FlagSet, set func(name, value string)) {
	for _, s := range settings {
		name := s.Flag()
		if name == "" || fs.Lookup(name) != nil {
			continue
		}
		if s.kind.boolean {
			fs.BoolFunc(name, s.FlagUsage(), func(v string) error {
				b, err := strconv.ParseBool(v)
				if err != nil {
					return errors.New("want true or false")
				}
				set(s.Name, strconv.FormatBool(b))
				return nil
			})
			continue
		}
		fs.Func(name, s.FlagUsage(), func(v string) error {
			set(s.Name, v)
			return nil
		})
	}
}
