package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/httpserver"
	"github.com/korral/storelink/mcpserver/internal/oauth"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// Environment variables of the HTTP transport, named in messages; package
// config reads them.
const (
	// envTokensFile names the bearer token file (see package bearer).
	envTokensFile = "MCP_AUTH_TOKENS_FILE"
	// envInsecure is --insecure-no-auth for deployments configured only
	// through the environment.
	envInsecure = "MCP_HTTP_INSECURE"
	// envOAuthIssuer names the identity provider (see package oauth).
	envOAuthIssuer = "OAUTH_ISSUER"
)

// writeTools are the tools whose call needs the storelink.write scope.
var writeTools = []string{"korral_raise_replenishment_order"}

// serveOptions are the flags of `storelink-mcp serve`.
type serveOptions struct {
	addr            string
	stateless       bool
	insecureNoAuth  bool
	allowedHosts    []string
	requestTimeout  time.Duration
	shutdownTimeout time.Duration
	// console is the approvals console's listener; addr "" serves none.
	console consoleOptions
	// metrics is the /metrics listener; addr "" serves none.
	metrics metricsOptions
}

// hostList is a repeatable, comma-separable flag.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		if strings.ContainsAny(s, "/:[]* ") {
			return fmt.Errorf("%q: give a bare host name or IPv4 address, without scheme, port or wildcard", s)
		}
		*h = append(*h, s)
	}
	return nil
}

func parseServeFlags(args []string, env Env) (serveOptions, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o serveOptions
	var hosts hostList
	fs.StringVar(&o.addr, "http", "127.0.0.1:8080", "`address` to listen on (host:port; port 0 picks a free one)")
	fs.BoolVar(&o.stateless, "stateless", false, "no MCP sessions for 2025-11-25 clients either (2026-07-28 requests never have one), so any replica can answer any request")
	fs.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "serve without bearer tokens on a non-loopback address (also "+envInsecure+"=true)")
	fs.Var(&hosts, "allowed-host", "host `name` clients use to reach the server, besides loopback and the listen address (repeatable, or comma-separated)")
	fs.DurationVar(&o.requestTimeout, "request-timeout", 60*time.Second, "longest time one MCP request may take")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 20*time.Second, "on SIGTERM, how long in-flight requests may take to finish")
	fs.StringVar(&o.console.addr, "console", "", "also serve the approvals console on this `address`, a listener of its own (host:port)")
	addConsoleTLSFlags(fs, &o.console, "console-")
	fs.StringVar(&o.metrics.addr, "metrics", "", "serve Prometheus /metrics on this `address`, a listener of its own (host:port); not loopback needs MCP_METRICS_TOKEN_FILE")
	rest, err := parseFlags(fs, args, env)
	if err != nil {
		return o, err
	}
	if len(rest) > 0 {
		return o, &ExitError{Code: 2, Err: fmt.Errorf("serve: unexpected argument %q", rest[0])}
	}
	o.allowedHosts = hosts
	if o.console.addr == "" && (o.console.tlsCert != "" || o.console.tlsKey != "" || o.console.behindTLSProxy) {
		return o, &ExitError{Code: 2, Err: errors.New("serve: --console-tls-cert, --console-tls-key and --behind-tls-proxy apply to the console: add --console ADDR")}
	}
	if o.console.addr != "" {
		if err := consolePolicy("--console", o.console); err != nil {
			return o, &ExitError{Code: 2, Err: err}
		}
		if o.console.addr == o.addr {
			return o, &ExitError{Code: 2, Err: errors.New("serve: --console must name another address than --http: the console never shares the MCP endpoint's listener")}
		}
	}
	if o.requestTimeout <= 0 || o.shutdownTimeout <= 0 {
		return o, &ExitError{Code: 2, Err: errors.New("serve: --request-timeout and --shutdown-timeout must be positive")}
	}
	return o, nil
}

// authPolicy decides, before anything starts, whether the server may run
// with the given address, token file and identity provider. It returns the
// listen host.
func authPolicy(o serveOptions, tokensFile, issuer string) (string, error) {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return "", fmt.Errorf("serve: --http %q: want host:port, such as 127.0.0.1:8080: %w", o.addr, err)
	}
	host = strings.ToLower(host)
	switch {
	case tokensFile != "" && o.insecureNoAuth:
		return "", fmt.Errorf("configuration: %s is set and so is --insecure-no-auth (or %s): keep one", envTokensFile, envInsecure)
	case issuer != "" && o.insecureNoAuth:
		return "", fmt.Errorf("configuration: %s is set and so is --insecure-no-auth (or %s): keep one", envOAuthIssuer, envInsecure)
	case tokensFile == "" && issuer == "" && !httpserver.IsLoopbackHost(host) && !o.insecureNoAuth:
		return "", fmt.Errorf("configuration: --http %s is reachable from other machines but %s is not set (nor %s): "+
			"give a token file (lines of \"label token\"), name an identity provider whose access tokens to accept, listen on 127.0.0.1, or pass --insecure-no-auth if something in front of the server authenticates callers", o.addr, envTokensFile, envOAuthIssuer)
	case httpserver.IsWildcardHost(host) && len(o.allowedHosts) == 0:
		return "", fmt.Errorf("configuration: --http %s listens on every interface, so the server cannot tell which host names are its own: "+
			"name them with --allowed-host (for example --allowed-host mcp.korral.internal)", o.addr)
	}
	return host, nil
}

// runServe serves MCP over Streamable HTTP until ctx is cancelled (SIGTERM),
// then drains in-flight requests for at most the shutdown timeout.
func runServe(ctx context.Context, args []string, env Env) error {
	o, err := parseServeFlags(args, env)
	if err != nil {
		return err
	}
	// The policy is judged before anything starts (no database is opened,
	// no embedded StoreLink started), so it needs the configuration alone;
	// build loads it again with everything else.
	cfg, err := config.Load(env.getenv, env.ReadFile)
	if err != nil {
		return &ExitError{Code: 2, Err: fmt.Errorf("configuration: %w", err)}
	}
	o.insecureNoAuth = o.insecureNoAuth || cfg.HTTPInsecure
	listenHost, err := authPolicy(o, cfg.AuthTokensFile, cfg.OAuthIssuer)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	var tokens *bearer.File
	if cfg.AuthTokensFile != "" {
		if tokens, err = bearer.Open(cfg.AuthTokensFile, nil); err != nil {
			return &ExitError{Code: 2, Err: fmt.Errorf("configuration: %s: %w", envTokensFile, err)}
		}
	}
	if err := metricsPolicy(o, cfg.MetricsTokenFile); err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	metricsToken, err := readMetricsToken(env, cfg.MetricsTokenFile, tokens)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	env.serveMetrics = o.metrics.addr != ""
	a, err := build(ctx, env, "")
	if err != nil {
		return err
	}
	defer a.Close()
	opts := a.httpOptions(o, listenHost)
	if cfg.OAuthIssuer != "" {
		// The provider is asked for its keys now, so a wrong issuer stops
		// the server here with the reason instead of refusing every caller.
		v, err := oauth.New(ctx, oauth.Options{Issuer: cfg.OAuthIssuer, Audience: cfg.OAuthAudience, Logger: a.log})
		if err != nil {
			return &ExitError{Code: 2, Err: fmt.Errorf("configuration: %s: %w", envOAuthIssuer, err)}
		}
		opts.OAuth = &httpserver.OAuth{Verifier: v, WriteTools: writeTools,
			Refused: func(ctx context.Context, tool, reason, caller, sessionID string) {
				// The name is the caller's, unchecked: escaped and bounded.
				a.rejections.Record(ctx, textsafe.Bound(tool, 64), reason, caller, sessionID)
			}}
	}
	if tokens != nil {
		tokens.SetLogger(a.log)
		// Only a token file that exists goes into the interface: a nil
		// *bearer.File in it would be a non-nil Tokens that admits nobody.
		opts.Tokens = tokens
	}
	srv, err := httpserver.New(opts)
	if err != nil {
		return err
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	if tokens != nil {
		a.log.Info("auth.tokens_loaded", "path", tokens.Path(), "labels", tokens.Labels())
	}
	if opts.OAuth != nil {
		a.log.Info("auth.oauth", "issuer", cfg.OAuthIssuer, "audience", cfg.OAuthAudience, "jwks_uri", opts.OAuth.Verifier.JWKSURI())
	}
	if tokens == nil && opts.OAuth == nil {
		reason := "loopback address"
		if o.insecureNoAuth {
			reason = "--insecure-no-auth"
		}
		a.log.Warn("auth.disabled", "reason", reason, "note", "every caller that can reach the address can use the tools")
	}
	a.log.Info("server.start", "transport", "http", "version", Version, "config", a.cfg)
	var consoleDone <-chan error
	if o.console.addr != "" {
		c, err := startConsole(a, o.console)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer c.stop(a)
		consoleDone = c.done
	}
	var metricsDone <-chan error
	if o.metrics.addr != "" {
		m, err := startMetrics(a, o.metrics, metricsToken)
		if err != nil {
			_ = ln.Close()
			return err
		}
		defer m.stop()
		metricsDone = m.done
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case err := <-metricsDone:
		sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return fmt.Errorf("metrics: %w", err)
	case err := <-consoleDone:
		sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
		defer cancel()
		_ = srv.Shutdown(sctx)
		return fmt.Errorf("console: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("http.shutdown", "grace", o.shutdownTimeout.String())
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	// A forced end is logged by Shutdown; the process still stops cleanly.
	_ = srv.Shutdown(sctx)
	a.log.Info("server.stop", "transport", "http")
	return nil
}

// httpOptions are the transport's settings for this app and these flags,
// without the token file.
func (a *app) httpOptions(o serveOptions, listenHost string) httpserver.Options {
	return httpserver.Options{
		Server:              a.server,
		Logger:              a.log,
		ListenHost:          listenHost,
		AllowedHosts:        o.allowedHosts,
		Stateless:           o.stateless,
		RequestTimeout:      o.requestTimeout,
		MaxSessions:         a.cfg.HTTPMaxSessions,
		MaxSessionsPerToken: a.cfg.HTTPMaxSessionsPerToken,
		SessionIdleTimeout:  a.cfg.HTTPSessionIdleTimeout,
		Inspect:             a.auditUndecodable,
		Ready:               a.readiness,
	}
}

// auditUndecodable records a tools/call whose params the SDK cannot decode:
// the SDK refuses it before any middleware of ours runs, so the transport
// shows it here first, then passes it on for the SDK to answer.
func (a *app) auditUndecodable(ctx context.Context, req *jsonrpc.Request, label, sessionID string) {
	tool, reason, refused := mcpserver.UndecodableCall(req)
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
func (a *app) readiness(ctx context.Context) (httpserver.Readiness, error) {
	out := httpserver.Readiness{Config: "loaded", Ledger: "ok", Database: databaseKind(a.cfg), Breaker: a.up.BreakerState(), Version: Version, Upstream: a.upstreamKind()}
	if err := a.db.Ping(ctx); err != nil {
		out.Ledger = "unreachable"
		return out, err
	}
	return out, nil
}
