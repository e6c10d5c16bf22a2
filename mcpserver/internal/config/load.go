package config

import (
	"errors"
	"fmt"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/keyring"
)

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

// walk parses the table's settings from the first not yet parsed through
// the one named through ("" for the rest). Settings without a parser of
// their own are skipped.
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
// os.ReadFile in production). It parses settings in table order, with the
// cross-setting rules in between, so problems are listed in a stable order.
func Load(getenv func(string) string, readFile func(string) ([]byte, error)) (*Config, error) {
	l := &loader{getenv: getenv, readFile: readFile}
	c := &Config{}
	l.walk(c, "STORELINK_MOCK_NOW")
	l.state(c)
	l.keyring(c)
	l.removedVars()
	l.walk(c, "APPROVAL_WEBHOOK_URL")
	l.webhookSecret(c)
	l.walk(c, "OAUTH_AUDIENCE")
	l.oauth(c)
	l.walk(c, "")
	l.telemetry(&c.Telemetry)
	l.privateFiles(EnvAuthTokensFile, "MCP_METRICS_TOKEN_FILE")
	l.writeRules(c)
	if len(l.errs) > 0 {
		return nil, errors.Join(l.errs...)
	}
	return c, nil
}

// keyring reads the store keys, which a real StoreLink needs.
func (l *loader) keyring(c *Config) {
	raw, from, file, ok := l.secret(EnvKeyring)
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
}

// removedVars refuses the variables of the removed shared approval
// credential.
func (l *loader) removedVars() {
	for _, old := range Removed {
		if l.getenv(old) != "" {
			l.fail("%s", LegacyApprovalMessage(old))
		}
	}
}

// webhookSecret reads the secret that signs webhook notices; it goes with
// APPROVAL_WEBHOOK_URL.
func (l *loader) webhookSecret(c *Config) {
	hook, from, hookFile, ok := l.secret("APPROVAL_WEBHOOK_SECRET")
	if !ok {
		return
	}
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

// writeRules checks the write settings against each other and reads the
// host consent key WRITE_APPROVAL=host needs.
func (l *loader) writeRules(c *Config) {
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
}

// oauth pairs OAUTH_AUDIENCE with OAUTH_ISSUER and MCP_PUBLIC_URL. Both are
// compared exactly with token claims, so they are taken as given.
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
