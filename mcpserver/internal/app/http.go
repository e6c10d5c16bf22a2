package app

import (
	"context"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/httpserver"
	"github.com/korral/storelink/mcpserver/internal/oauth"
	"github.com/korral/storelink/mcpserver/internal/state/backend"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// writeTools are the tools whose call needs the storelink.write scope.
var writeTools = []string{"korral_raise_replenishment_order"}

// ServeOptions are the settings of an HTTP server (storelink-mcp serve).
type ServeOptions struct {
	// Addr is the MCP endpoint's listen address (host:port).
	Addr string
	// Stateless keeps no MCP sessions.
	Stateless bool
	// InsecureNoAuth serves without tokens on a non-loopback address.
	InsecureNoAuth bool
	// AllowedHosts are extra host names clients use to reach the server.
	AllowedHosts []string
	// RequestTimeout bounds one MCP request.
	RequestTimeout time.Duration
	// ShutdownTimeout bounds draining in-flight requests at the end.
	ShutdownTimeout time.Duration
	// Console is the approvals console's listener; Addr "" serves none.
	Console ConsoleOptions
	// MetricsAddr is the /metrics listener; "" serves none.
	MetricsAddr string
}

// ServeHTTP serves MCP over Streamable HTTP until ctx is cancelled, then
// drains in-flight requests for at most the shutdown timeout. It also
// serves the console and /metrics when o asks for them.
func ServeHTTP(ctx context.Context, opts Options, o ServeOptions) error {
	// Checked from the configuration alone, before anything is opened.
	p, err := httpPolicies(ctx, opts, &o)
	if err != nil {
		return err
	}
	opts.Metrics, opts.SessionName = o.MetricsAddr != "", ""
	a, err := New(ctx, opts, Server)
	if err != nil {
		return err
	}
	defer a.Close()
	srv, err := a.httpServer(ctx, o, &p)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	a.logHTTPStart(o, p)
	sides, err := a.startSides(o, p.metricsToken)
	defer func() {
		for i := len(sides) - 1; i >= 0; i-- {
			sides[i].Stop()
		}
	}()
	if err != nil {
		_ = ln.Close()
		return err
	}
	return srv.ServeUntilDone(ctx, ln, o.ShutdownTimeout, sides...)
}

// httpPolicy is the listen host, the token file (nil without one) and the
// /metrics token.
type httpPolicy struct {
	listenHost   string
	tokens       *bearer.File
	metricsToken string
	// jwksURI is the provider's key set URL; set by httpServer.
	jwksURI string
}

// httpPolicies loads the configuration and applies the policies; every
// refusal exits 2.
func httpPolicies(ctx context.Context, opts Options, o *ServeOptions) (httpPolicy, error) {
	var p httpPolicy
	c, err := New(ctx, opts, ConfigOnly)
	if err != nil {
		return p, err
	}
	cfg := c.cfg
	o.InsecureNoAuth = o.InsecureNoAuth || cfg.HTTPInsecure
	if p.listenHost, err = httpserver.AuthPolicy(o.Addr, o.AllowedHosts, o.InsecureNoAuth, cfg.AuthTokensFile, cfg.OAuthIssuer); err != nil {
		return p, exit2(err)
	}
	if cfg.AuthTokensFile != "" {
		if p.tokens, err = bearer.Open(cfg.AuthTokensFile, nil); err != nil {
			return p, exit2(fmt.Errorf("configuration: %s: %w", config.EnvAuthTokensFile, err))
		}
	}
	if err := httpserver.MetricsPolicy(o.MetricsAddr, cfg.MetricsTokenFile, o.Addr, o.Console.Addr); err != nil {
		return p, exit2(err)
	}
	if p.metricsToken, err = httpserver.ReadMetricsToken(opts.readFile(), cfg.MetricsTokenFile, p.tokens); err != nil {
		return p, exit2(err)
	}
	return p, nil
}

// httpServer builds the MCP transport with its authentication. It reads
// the identity provider's keys now, so a wrong issuer fails at start.
func (a *App) httpServer(ctx context.Context, o ServeOptions, p *httpPolicy) (*httpserver.Server, error) {
	hopts := a.httpOptions(o, p.listenHost)
	if a.cfg.OAuthIssuer != "" {
		v, err := oauth.New(ctx, oauth.Options{Issuer: a.cfg.OAuthIssuer, Audience: a.cfg.OAuthAudience, Logger: a.log})
		if err != nil {
			return nil, exit2(fmt.Errorf("configuration: %s: %w", config.EnvOAuthIssuer, err))
		}
		p.jwksURI = v.JWKSURI()
		hopts.OAuth = &httpserver.OAuth{Verifier: v, WriteTools: writeTools,
			Refused: func(ctx context.Context, tool, reason, caller, sessionID string) {
				// The name is the caller's, unchecked: escaped and bounded.
				a.rejections.Record(ctx, audit.ClientName(tool), reason, caller, sessionID)
			}}
	}
	if p.tokens != nil {
		p.tokens.SetLogger(a.log)
		// A nil *bearer.File would be a non-nil Tokens admitting nobody.
		hopts.Tokens = p.tokens
	}
	return httpserver.New(hopts)
}

// logHTTPStart logs the authentication and the start.
func (a *App) logHTTPStart(o ServeOptions, p httpPolicy) {
	httpserver.LogAuth(a.log, p.tokens, a.cfg.OAuthIssuer, a.cfg.OAuthAudience, p.jwksURI, o.InsecureNoAuth)
	a.log.Info("server.start", "transport", "http", "version", Version, "config", a.cfg)
	if o.Stateless {
		// Stateless: a 2025-11-25 client's capabilities are not kept (ADR 0020).
		a.log.Info("http.stateless", "views", "2025-11-25 clients get no MCP Apps views under --stateless (their capabilities are not kept between requests); 2026-07-28 clients declare theirs with each request and get them")
	}
}

// startSides starts the console and /metrics listeners asked for; the
// caller stops those returned, also on error.
func (a *App) startSides(o ServeOptions, metricsToken string) ([]httpserver.Side, error) {
	var sides []httpserver.Side
	if o.Console.Addr != "" {
		c, err := startConsole(a, o.Console)
		if err != nil {
			return sides, err
		}
		sides = append(sides, httpserver.Side{Name: "console", Done: c.Done, Stop: c.Stop})
	}
	if o.MetricsAddr != "" {
		m, err := httpserver.ListenMetrics(a.log, o.MetricsAddr, metricsToken, a.tel.Metrics)
		if err != nil {
			return sides, err
		}
		sides = append(sides, m)
	}
	return sides, nil
}

// httpOptions are the transport's settings, without the token file.
func (a *App) httpOptions(o ServeOptions, listenHost string) httpserver.Options {
	return httpserver.Options{
		Server:              a.server,
		Logger:              a.log,
		ListenHost:          listenHost,
		AllowedHosts:        o.AllowedHosts,
		Stateless:           o.Stateless,
		RequestTimeout:      o.RequestTimeout,
		MaxSessions:         a.cfg.HTTPMaxSessions,
		MaxSessionsPerToken: a.cfg.HTTPMaxSessionsPerToken,
		SessionIdleTimeout:  a.cfg.HTTPSessionIdleTimeout,
		Inspect:             a.auditUndecodable,
		Ready:               a.readiness,
	}
}

// auditUndecodable records a tools/call whose params the SDK cannot decode;
// the SDK refuses it before any of our middleware runs.
func (a *App) auditUndecodable(ctx context.Context, req *jsonrpc.Request, label, sessionID string) {
	tool, reason, refused := audit.UndecodableCall(req)
	if !refused {
		return
	}
	who := ""
	switch {
	case strings.HasPrefix(label, oauth.SubjectPrefix):
		who = label
	case label != "":
		who = "token:" + label
	}
	a.rejections.Record(ctx, tool, reason, who, sessionID)
}

// readiness reports the configuration (loaded, or the server would not be
// running), the ledger, the breaker and the upstream for /readyz.
func (a *App) readiness(ctx context.Context) (httpserver.Readiness, error) {
	out := httpserver.Readiness{Config: "loaded", Ledger: "ok", Database: backend.Kind(a.cfg), Breaker: a.up.BreakerState(), Version: Version, Upstream: a.upstreamKind()}
	if err := a.db.Ping(ctx); err != nil {
		out.Ledger = "unreachable"
		return out, err
	}
	return out, nil
}
