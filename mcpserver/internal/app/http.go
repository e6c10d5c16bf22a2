package app

import (
	"context"
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/config"
	"net"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/httpserver"
	"github.com/korral/storelink/mcpserver/internal/oauth"
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

// authPolicy decides whether the server may run with this address, token
// file and identity provider, and returns the listen host.
func authPolicy(o ServeOptions, tokensFile, issuer string) (string, error) {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return "", fmt.Errorf("serve: --http %q: want host:port, such as 127.0.0.1:8080: %w", o.Addr, err)
	}
	host = strings.ToLower(host)
	switch {
	case tokensFile != "" && o.InsecureNoAuth:
		return "", fmt.Errorf("configuration: %s is set and so is --insecure-no-auth (or %s): keep one", config.EnvAuthTokensFile, config.EnvHTTPInsecure)
	case issuer != "" && o.InsecureNoAuth:
		return "", fmt.Errorf("configuration: %s is set and so is --insecure-no-auth (or %s): keep one", config.EnvOAuthIssuer, config.EnvHTTPInsecure)
	case tokensFile == "" && issuer == "" && !httpserver.IsLoopbackHost(host) && !o.InsecureNoAuth:
		return "", fmt.Errorf("configuration: --http %s is reachable from other machines but %s is not set (nor %s): "+
			"give a token file (lines of \"label token\"), name an identity provider whose access tokens to accept, listen on 127.0.0.1, or pass --insecure-no-auth if something in front of the server authenticates callers", o.Addr, config.EnvAuthTokensFile, config.EnvOAuthIssuer)
	case httpserver.IsWildcardHost(host) && len(o.AllowedHosts) == 0:
		return "", fmt.Errorf("configuration: --http %s listens on every interface, so the server cannot tell which host names are its own: "+
			"name them with --allowed-host (for example --allowed-host mcp.korral.internal)", o.Addr)
	}
	return host, nil
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
	side, err := a.startSideListeners(o, p.metricsToken)
	defer side.stop()
	if err != nil {
		_ = ln.Close()
		return err
	}
	return a.serveUntilDone(ctx, srv, ln, side, o.ShutdownTimeout)
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
	if p.listenHost, err = authPolicy(*o, cfg.AuthTokensFile, cfg.OAuthIssuer); err != nil {
		return p, exit2(err)
	}
	if cfg.AuthTokensFile != "" {
		if p.tokens, err = bearer.Open(cfg.AuthTokensFile, nil); err != nil {
			return p, exit2(fmt.Errorf("configuration: %s: %w", config.EnvAuthTokensFile, err))
		}
	}
	if err := metricsPolicy(*o, cfg.MetricsTokenFile); err != nil {
		return p, exit2(err)
	}
	if p.metricsToken, err = readMetricsToken(opts.readFile(), cfg.MetricsTokenFile, p.tokens); err != nil {
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
	if p.tokens != nil {
		a.log.Info("auth.tokens_loaded", "path", p.tokens.Path(), "labels", p.tokens.Labels())
	}
	if a.cfg.OAuthIssuer != "" {
		a.log.Info("auth.oauth", "issuer", a.cfg.OAuthIssuer, "audience", a.cfg.OAuthAudience, "jwks_uri", p.jwksURI)
	}
	if p.tokens == nil && a.cfg.OAuthIssuer == "" {
		reason := "loopback address"
		if o.InsecureNoAuth {
			reason = "--insecure-no-auth"
		}
		a.log.Warn("auth.disabled", "reason", reason, "note", "every caller that can reach the address can use the tools")
	}
	a.log.Info("server.start", "transport", "http", "version", Version, "config", a.cfg)
	if o.Stateless {
		// Stateless: a 2025-11-25 client's capabilities are not kept (ADR 0020).
		a.log.Info("http.stateless", "views", "2025-11-25 clients get no MCP Apps views under --stateless (their capabilities are not kept between requests); 2026-07-28 clients declare theirs with each request and get them")
	}
}

// sideListeners are the console and /metrics listeners; each channel is
// nil when not served.
type sideListeners struct {
	console, metrics <-chan error
	stops            []func()
}

func (s *sideListeners) stop() {
	for i := len(s.stops) - 1; i >= 0; i-- {
		s.stops[i]()
	}
}

// startSideListeners starts the console and /metrics listeners asked for.
func (a *App) startSideListeners(o ServeOptions, metricsToken string) (*sideListeners, error) {
	s := &sideListeners{}
	if o.Console.Addr != "" {
		c, err := startConsole(a, o.Console)
		if err != nil {
			return s, err
		}
		s.stops, s.console = append(s.stops, c.Stop), c.Done
	}
	if o.MetricsAddr != "" {
		m, err := startMetrics(a, o.MetricsAddr, metricsToken)
		if err != nil {
			return s, err
		}
		s.stops, s.metrics = append(s.stops, m.stop), m.done
	}
	return s, nil
}

// serveUntilDone serves until ctx is cancelled or a listener fails, then
// drains srv for at most grace.
func (a *App) serveUntilDone(ctx context.Context, srv *httpserver.Server, ln net.Listener, side *sideListeners, grace time.Duration) error {
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()
	var failed error
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case err := <-side.metrics:
		failed = fmt.Errorf("metrics: %w", err)
	case err := <-side.console:
		failed = fmt.Errorf("console: %w", err)
	case <-ctx.Done():
		a.log.Info("http.shutdown", "grace", grace.String())
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// A forced end is logged by Shutdown; the process still stops cleanly.
	_ = srv.Shutdown(sctx)
	if failed != nil {
		return failed
	}
	a.log.Info("server.stop", "transport", "http")
	return nil
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
	out := httpserver.Readiness{Config: "loaded", Ledger: "ok", Database: databaseKind(a.cfg), Breaker: a.up.BreakerState(), Version: Version, Upstream: a.upstreamKind()}
	if err := a.db.Ping(ctx); err != nil {
		out.Ledger = "unreachable"
		return out, err
	}
	return out, nil
}
