// Package config reads the MCP server's configuration from environment
// variables and flags. The settings table (Settings) is the only place a
// setting's name, flag, default and description are written; docs and help
// text are generated from it. No other package reads an environment variable.
// Load reports every problem at once and never echoes a secret.
package config

import (
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/telemetry"
)

// Approval modes for WRITE_APPROVAL.
const (
	ApprovalNone     = "none"
	ApprovalRequired = "required"
	// ApprovalHost asks the person at the host to confirm each order.
	ApprovalHost = "host"
)

// MinWebhookSecretLen is the shortest webhook signing secret accepted.
const MinWebhookSecretLen = 16

// Config is the server's configuration.
type Config struct {
	// UpstreamBaseURL is StoreLink's base URL; "" runs against the embedded mock.
	UpstreamBaseURL string
	// Keyring holds the store keys; nil only against the embedded mock.
	Keyring *keyring.Keyring
	// KeyringFile is STORELINK_KEYRING_FILE, for re-reading; "" if inline.
	KeyringFile string
	// MockNow, when not zero, pins the clock of the embedded demo StoreLink
	// and of the server running it (STORELINK_MOCK_NOW). Commands that do not
	// run the embedded demo refuse it.
	MockNow time.Time
	// DefaultLookbackDays is korral_check_stock_risk's default lookback (1..28).
	DefaultLookbackDays int
	// LogLevel is the minimum level logged to stderr.
	LogLevel slog.Level
	// LogFile, when set, receives the logs instead of stderr.
	LogFile string
	// UpstreamTimeout bounds each StoreLink request.
	UpstreamTimeout time.Duration
	// UpstreamMaxInFlight caps open StoreLink requests per replica.
	UpstreamMaxInFlight int
	// UpstreamCallerShare is the percent of that budget one caller may hold
	// while another waits.
	UpstreamCallerShare int
	// CallerCallsPerMinute and CallerBurst bound one caller's tool calls;
	// 0 calls a minute sets no limit.
	CallerCallsPerMinute int
	CallerBurst          int
	// AllowWrites lets a confirmed order reach StoreLink.
	AllowWrites bool
	// MaxOrderUnits is the hard ceiling on one order's quantity.
	MaxOrderUnits int
	// ReadOnly removes the write tool altogether.
	ReadOnly bool
	// WriteApproval is ApprovalNone, ApprovalRequired (a named approver
	// releases a staged order) or ApprovalHost (the person at the host
	// confirms it).
	WriteApproval string
	// HostConsentKey seals host consent state (AES-256); set exactly when
	// WriteApproval is ApprovalHost. Never log it.
	HostConsentKey []byte
	// ApprovalTTL is how long a staged order waits for release.
	ApprovalTTL time.Duration
	// StatePath is the SQLite state file; "" with StateDatabaseURL.
	StatePath string
	// StateDatabaseURL is the PostgreSQL database of every replica; "" uses
	// the SQLite file StatePath. It may hold a password: log it only through
	// RedactURL.
	StateDatabaseURL string
	// StateMaxConns caps this process's PostgreSQL connections.
	StateMaxConns int
	// JournalPath is the outcome journal (ADR 0006). "" only where no
	// default exists and writes are off.
	JournalPath string
	// BreakerFailures consecutive upstream failures open the breaker.
	BreakerFailures int
	// BreakerCooldown is how long the breaker stays open before a probe.
	BreakerCooldown time.Duration
	// MasterDataTTL is how long master data is reused; 0 disables reuse.
	MasterDataTTL time.Duration
	// StdioMaxLineBytes bounds one incoming line of the stdio transport.
	StdioMaxLineBytes int
	// HTTPMaxSessions caps the open MCP sessions of `serve --http`, and
	// HTTPMaxSessionsPerToken those of one bearer token.
	HTTPMaxSessions         int
	HTTPMaxSessionsPerToken int
	// HTTPSessionIdleTimeout closes an HTTP session unused for this long.
	HTTPSessionIdleTimeout time.Duration
	// AuthTokensFile is the bearer token file of `serve --http`; "" serves
	// without tokens where the address allows it. Package bearer reads it.
	AuthTokensFile string
	// HTTPInsecure is --insecure-no-auth given through the environment.
	HTTPInsecure bool
	// ApproverSecret is the secret presented with --approver when no
	// --secret-file or --secret-stdin gives it. Never log it.
	ApproverSecret string
	// ApprovalWebhookURL receives a signed notice of every staged order; ""
	// sends none. It may hold a token: log only WebhookHost.
	ApprovalWebhookURL string
	// ApprovalWebhookSecret signs the notices; set exactly when
	// ApprovalWebhookURL is. Never log it.
	ApprovalWebhookSecret string
	// ConsolePublicURL is the console's base URL, no trailing slash, or "".
	ConsolePublicURL string
	// MCPPublicURL is the base URL of `serve --http` as clients reach it,
	// without a trailing slash; "" when not configured. Its /mcp is
	// OAuthAudience's default.
	MCPPublicURL string
	// OAuthIssuer is the identity provider whose access tokens `serve
	// --http` accepts, taken exactly; "" accepts none.
	OAuthIssuer string
	// OAuthAudience is the aud an access token must name, and the resource
	// of the metadata; set exactly when OAuthIssuer is.
	OAuthAudience string
	// Telemetry is the OpenTelemetry export (the OTEL_* variables).
	Telemetry telemetry.Settings
	// MetricsTokenFile holds the bearer token of `serve --metrics`; "" on
	// loopback.
	MetricsTokenFile string
}

// String summarizes the configuration for a log line, without secrets.
func (c Config) String() string {
	upstream, kr := c.UpstreamBaseURL, c.Keyring.String()
	if upstream == "" {
		upstream = "embedded-demo"
	}
	if c.Keyring == nil {
		// The embedded demo StoreLink brings its own keyring.
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

// oauthSummary is String's part about OAuth; "" without it.
func (c Config) oauthSummary() string {
	if c.OAuthIssuer == "" {
		return ""
	}
	return " oauth_issuer=" + c.OAuthIssuer + " oauth_audience=" + c.OAuthAudience
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

// WebhookHost is the webhook's host:port for logs; "" when none.
func (c Config) WebhookHost() string {
	u, err := url.Parse(c.ApprovalWebhookURL)
	if c.ApprovalWebhookURL == "" || err != nil {
		return ""
	}
	return u.Host
}

// Format prints String for every verb, so %+v cannot dump the credential.
func (c Config) Format(f fmt.State, _ rune) { _, _ = fmt.Fprint(f, c.String()) }

// LogValue logs the redacted summary.
func (c Config) LogValue() slog.Value { return slog.StringValue(c.String()) }

// Removed are the variables of the removed shared approval credential.
var Removed = []string{"APPROVAL_CREDENTIAL", "APPROVAL_CREDENTIAL_FILE", "APPROVER_CREDENTIAL"}

// LegacyApprovalMessage is Load's refusal of a Removed variable.
func LegacyApprovalMessage(name string) string {
	return fmt.Sprintf("%s is no longer used: approvers are named and verified by the server's own record; run `storelink-mcp approvers add NAME` for each approver, hand each their secret, and remove %s from the environment", name, name)
}
