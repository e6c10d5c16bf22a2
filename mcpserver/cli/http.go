package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Environment variables of the HTTP transport. They are read here rather
// than in internal/config because only `serve` uses them.
const (
	// envTokensFile names the bearer token file (see package bearer).
	envTokensFile = "MCP_AUTH_TOKENS_FILE"
	// envInsecure is --insecure-no-auth for deployments configured only
	// through the environment.
	envInsecure = "MCP_HTTP_INSECURE"
)

// Limits of the HTTP transport. A tool call's arguments are a few hundred
// bytes, so a megabyte is generous and still keeps a flood of large bodies
// from exhausting memory.
const (
	maxBodyBytes = 1 << 20
	// bodyReadTimeout bounds how long a client may take to send its body,
	// so a slow sender cannot hold a connection open indefinitely.
	bodyReadTimeout = 30 * time.Second
	readyTimeout    = 2 * time.Second
	// sessionRetryAfter is the Retry-After of a session refused at the cap:
	// places free up as other sessions end or go idle, not at a known time.
	sessionRetryAfter = 30 * time.Second
	// realm names this server in every WWW-Authenticate challenge.
	realm = "storelink-mcp"
)

// serveOptions are the flags of `storelink-mcp serve`.
type serveOptions struct {
	addr            string
	stateless       bool
	insecureNoAuth  bool
	allowedHosts    []string
	requestTimeout  time.Duration
	shutdownTimeout time.Duration
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
	fs.BoolVar(&o.stateless, "stateless", false, "no MCP sessions: every request stands alone, so any replica can answer any request")
	fs.BoolVar(&o.insecureNoAuth, "insecure-no-auth", false, "serve without bearer tokens on a non-loopback address (also "+envInsecure+"=true)")
	fs.Var(&hosts, "allowed-host", "host `name` clients use to reach the server, besides loopback and the listen address (repeatable, or comma-separated)")
	fs.DurationVar(&o.requestTimeout, "request-timeout", 60*time.Second, "longest time one MCP request may take")
	fs.DurationVar(&o.shutdownTimeout, "shutdown-timeout", 20*time.Second, "on SIGTERM, how long in-flight requests may take to finish")
	rest, err := parseFlags(fs, args, env)
	if err != nil {
		return o, err
	}
	if len(rest) > 0 {
		return o, &ExitError{Code: 2, Err: fmt.Errorf("serve: unexpected argument %q", rest[0])}
	}
	o.allowedHosts = hosts
	switch v := env.Getenv(envInsecure); v {
	case "", "false", "0":
	case "true", "1":
		o.insecureNoAuth = true
	default:
		return o, &ExitError{Code: 2, Err: fmt.Errorf("configuration: %s=%q: must be true, false, 1 or 0", envInsecure, v)}
	}
	if o.requestTimeout <= 0 || o.shutdownTimeout <= 0 {
		return o, &ExitError{Code: 2, Err: errors.New("serve: --request-timeout and --shutdown-timeout must be positive")}
	}
	return o, nil
}

// authPolicy decides, before anything starts, whether the server may run
// with the given address and token file. It returns the listen host.
func authPolicy(o serveOptions, tokensFile string) (string, error) {
	host, _, err := net.SplitHostPort(o.addr)
	if err != nil {
		return "", fmt.Errorf("serve: --http %q: want host:port, such as 127.0.0.1:8080: %w", o.addr, err)
	}
	host = strings.ToLower(host)
	switch {
	case tokensFile != "" && o.insecureNoAuth:
		return "", fmt.Errorf("configuration: %s is set and so is --insecure-no-auth (or %s): keep one", envTokensFile, envInsecure)
	case tokensFile == "" && !isLoopbackHost(host) && !o.insecureNoAuth:
		return "", fmt.Errorf("configuration: --http %s is reachable from other machines but %s is not set: "+
			"give a token file (lines of \"label token\"), listen on 127.0.0.1, or pass --insecure-no-auth if something in front of the server authenticates callers", o.addr, envTokensFile)
	case isWildcardHost(host) && len(o.allowedHosts) == 0:
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
	tokensFile := env.Getenv(envTokensFile)
	listenHost, err := authPolicy(o, tokensFile)
	if err != nil {
		return &ExitError{Code: 2, Err: err}
	}
	var tokens *bearer.File
	if tokensFile != "" {
		if tokens, err = bearer.Open(tokensFile, nil); err != nil {
			return &ExitError{Code: 2, Err: fmt.Errorf("configuration: %s: %w", envTokensFile, err)}
		}
	}
	a, err := build(ctx, env, "")
	if err != nil {
		return err
	}
	defer a.Close()
	if tokens != nil {
		tokens.SetLogger(a.log)
	}

	ln, err := net.Listen("tcp", o.addr)
	if err != nil {
		return fmt.Errorf("serve: %w", err)
	}
	streams, stopStreams := context.WithCancel(context.Background())
	defer stopStreams()
	h := &httpServer{app: a, opts: o, tokens: tokens, streams: streams,
		hosts:    newHostGuard(listenHost, o.allowedHosts),
		sessions: newSessionCap(a.cfg.HTTPMaxSessions, a.cfg.HTTPMaxSessionsPerToken, a.server, a.log)}
	srv := &http.Server{
		Handler:           h.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	serveErr := make(chan error, 1)
	go func() { serveErr <- srv.Serve(ln) }()

	authMode := "none"
	if tokens != nil {
		authMode = "bearer"
		a.log.Info("auth.tokens_loaded", "path", tokens.Path(), "labels", tokens.Labels())
	} else {
		reason := "loopback address"
		if o.insecureNoAuth {
			reason = "--insecure-no-auth"
		}
		a.log.Warn("auth.disabled", "reason", reason, "note", "every caller that can reach the address can use the tools")
	}
	a.log.Info("server.start", "transport", "http", "version", Version, "config", a.cfg)
	a.log.Info("http.listening", "addr", ln.Addr().String(), "url", "http://"+ln.Addr().String()+"/mcp",
		"stateless", o.stateless, "auth", authMode, "allowed_hosts", h.hosts.names(),
		"max_sessions", a.cfg.HTTPMaxSessions, "max_sessions_per_token", a.cfg.HTTPMaxSessionsPerToken,
		"session_idle_timeout", a.cfg.HTTPSessionIdleTimeout.String())

	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("http.shutdown", "grace", o.shutdownTimeout.String())
	h.draining.Store(true)
	// Open GET streams wait for notifications that will never come; ending
	// them lets Shutdown wait only for real work.
	stopStreams()
	sctx, cancel := context.WithTimeout(context.Background(), o.shutdownTimeout)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		a.log.Warn("http.shutdown_forced", "error", err.Error(), "note", "requests still running after the grace period were cut off")
		_ = srv.Close()
	}
	a.log.Info("server.stop", "transport", "http")
	return nil
}

// httpServer is the HTTP face of an assembled app.
type httpServer struct {
	app    *app
	opts   serveOptions
	tokens *bearer.File // nil: no authentication
	hosts  hostGuard
	// sessions caps the open stateful sessions.
	sessions *sessionCap
	// streams is cancelled when shutdown begins, ending open GET streams.
	streams  context.Context
	draining atomic.Bool
}

// routes assembles the handler: /mcp behind the Host and Origin checks, the
// body limit and the bearer token; /healthz and /readyz open, for load
// balancers and orchestrators that hold no token.
func (h *httpServer) routes() http.Handler {
	h.app.server.AddReceivingMiddleware(requestTimeout(h.opts.requestTimeout))
	sdk := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return h.app.server }, &mcp.StreamableHTTPOptions{
		Stateless:           h.opts.stateless,
		Logger:              h.app.log,
		MaxRequestBodyBytes: maxBodyBytes,
		// An abandoned session (no DELETE) holds memory and a goroutine
		// until it has been idle this long, and holds its place under the
		// session cap until then.
		SessionTimeout: h.app.cfg.HTTPSessionIdleTimeout,
		// The SDK's own rebinding check refuses every non-loopback Host on a
		// loopback connection, which also refuses a reverse proxy on the same
		// machine forwarding for a configured name. hostGuard covers the same
		// ground on every interface and honours --allowed-host.
		DisableLocalhostProtection: true,
	})
	mcpH := h.endStreamsOnShutdown(sdk)
	if !h.opts.stateless {
		// Inside authentication, so the cap knows the token.
		mcpH = h.sessions.wrap(mcpH)
	}
	mcpH = h.auditUndecodable(mcpH)
	mcpH = h.limitBody(mcpH)
	if h.tokens != nil {
		// Authentication comes before the body is read, so a caller without
		// a token costs no more than its headers.
		mcpH = h.logDenied(challenge(auth.RequireBearerToken(h.verify, &auth.RequireBearerTokenOptions{
			// File tokens do not expire; revocation is removing the line.
			AllowMissingExpiration: true,
		}), mcpH))
	}
	mcpH = h.hosts.wrap(mcpH, h.app.log)

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpH)
	mux.HandleFunc("GET /healthz", h.healthz)
	mux.HandleFunc("GET /readyz", h.readyz)
	return mux
}

// verify adapts the token file to the SDK's bearer middleware. The label
// becomes TokenInfo.UserID: the SDK binds a stateful session to it (another
// token cannot take the session over), and the tools record it as the caller.
func (h *httpServer) verify(_ context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	label, ok := h.tokens.Lookup(token)
	if !ok {
		h.app.log.Warn("auth.denied", "reason", "unknown token", "remote", r.RemoteAddr)
		return nil, auth.ErrInvalidToken
	}
	return &auth.TokenInfo{UserID: label, Extra: map[string]any{"label": label}}, nil
}

// logDenied logs requests that carry no bearer token at all, which the SDK
// middleware refuses without consulting the verifier.
func (h *httpServer) logDenied(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if f := strings.Fields(r.Header.Get("Authorization")); len(f) != 2 || !strings.EqualFold(f[0], "bearer") {
			h.app.log.Warn("auth.denied", "reason", "no bearer token", "remote", r.RemoteAddr)
		}
		next.ServeHTTP(w, r)
	})
}

// challenge runs next behind the bearer middleware mw and adds the RFC 6750
// challenge to every 401 mw answers: `Bearer realm="storelink-mcp"`, with
// error="invalid_token" when a token was presented, so a host can tell a
// wrong token from a missing one. Only mw's own answers pass through the
// header-adding writer; next gets the original one, so streaming is
// untouched.
func challenge(mw func(http.Handler) http.Handler, next http.Handler) http.Handler {
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w.(*challengeWriter).ResponseWriter, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		value := fmt.Sprintf("Bearer realm=%q", realm)
		if r.Header.Get("Authorization") != "" {
			value += `, error="invalid_token"`
		}
		inner.ServeHTTP(&challengeWriter{ResponseWriter: w, value: value}, r)
	})
}

// challengeWriter adds WWW-Authenticate to a 401.
type challengeWriter struct {
	http.ResponseWriter
	value string
}

func (c *challengeWriter) WriteHeader(code int) {
	if code == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "" {
		c.Header().Set("WWW-Authenticate", c.value)
	}
	c.ResponseWriter.WriteHeader(code)
}

// sessionCap bounds the stateful sessions open at once, in all and per
// bearer token, so that neither abandoned sessions nor one token holder
// can grow the process without bound. The SDK stays the one record of which
// sessions are alive (a session ends on DELETE, on the idle timeout, or
// when it was never initialized); the cap only remembers which token
// opened each, and counts the creations still in flight so that concurrent
// initializations cannot overshoot.
type sessionCap struct {
	max, perToken int
	server        *mcp.Server
	log           *slog.Logger

	mu sync.Mutex
	// owner maps a session id to the label of the token that opened it.
	owner map[string]string
	// pending counts session creations in flight, per label and in all.
	pending    map[string]int
	pendingAll int
}

func newSessionCap(max, perToken int, server *mcp.Server, log *slog.Logger) *sessionCap {
	return &sessionCap{max: max, perToken: perToken, server: server, log: log, owner: map[string]string{}, pending: map[string]int{}}
}

// wrap refuses a new session (an initialize POST without Mcp-Session-Id)
// with 503 and Retry-After when a cap is reached. Everything else passes:
// requests of existing sessions, and requests that open no lasting session
// (a client's server/discover probe), whose places would otherwise be held
// until their handler returns, after the client already has the answer.
// The body has been read in full by limitBody.
func (c *sessionCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			// The SDK forgets a deleted session a moment after it answers;
			// the place is free as soon as the client has been told so.
			sw := &statusWriter{ResponseWriter: w}
			next.ServeHTTP(sw, r)
			if sw.code == http.StatusNoContent {
				c.forget(id)
			}
			return
		}
		if r.Method != http.MethodPost || r.Header.Get("Mcp-Session-Id") != "" || !isInitialize(r) {
			next.ServeHTTP(w, r)
			return
		}
		label := ""
		if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
			label = ti.UserID
		}
		release, refusal := c.admit(label)
		if refusal != "" {
			c.log.Warn("http.session_refused", "reason", refusal, "token", label, "remote", r.RemoteAddr)
			w.Header().Set("Retry-After", strconv.Itoa(int(sessionRetryAfter.Seconds())))
			http.Error(w, "Service Unavailable: "+refusal+"; retry later, or end sessions you no longer use (HTTP DELETE)", http.StatusServiceUnavailable)
			return
		}
		next.ServeHTTP(w, r)
		release(w.Header().Get("Mcp-Session-Id"))
	})
}

// forget frees the place of a session that ended.
func (c *sessionCap) forget(sessionID string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.owner, sessionID)
}

// statusWriter remembers the status of a response that does not stream.
type statusWriter struct {
	http.ResponseWriter
	code int
}

func (s *statusWriter) WriteHeader(code int) {
	s.code = code
	s.ResponseWriter.WriteHeader(code)
}

// isInitialize reports whether the POST body is an initialize request. A
// body that does not parse is left for the SDK to refuse.
func isInitialize(r *http.Request) bool {
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	var m struct {
		Method string `json:"method"`
	}
	return err == nil && json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// admit reserves a place for a session of label, or says why there is none.
// release records the session id the SDK gave the new session ("" if none
// was created).
func (c *sessionCap) admit(label string) (release func(sessionID string), refusal string) {
	// A session counts once initialized: a request that opens no lasting
	// session (a client's server/discover probe, a failed initialize) is
	// closed by the SDK, but possibly a moment after its answer.
	live := map[string]bool{}
	for ss := range c.server.Sessions() {
		if ss.InitializeParams() != nil {
			live[ss.ID()] = true
		}
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	mine := c.pending[label]
	for id, owner := range c.owner {
		if !live[id] {
			delete(c.owner, id)
		} else if owner == label {
			mine++
		}
	}
	switch {
	case len(c.owner)+c.pendingAll >= c.max:
		return nil, fmt.Sprintf("the server holds its maximum of %d open sessions (MCP_HTTP_MAX_SESSIONS)", c.max)
	case label != "" && mine >= c.perToken:
		return nil, fmt.Sprintf("this token holds its maximum of %d open sessions (MCP_HTTP_MAX_SESSIONS_PER_TOKEN)", c.perToken)
	}
	c.pending[label]++
	c.pendingAll++
	return func(sessionID string) {
		c.mu.Lock()
		defer c.mu.Unlock()
		if c.pending[label]--; c.pending[label] == 0 {
			delete(c.pending, label)
		}
		c.pendingAll--
		if sessionID != "" {
			c.owner[sessionID] = label
		}
	}, ""
}

// limitBody reads a POST body in full, within a size limit (413 beyond it)
// and a time limit, before the SDK sees the request. The
// read deadline is lifted once the body is in, because an expired deadline
// later would cancel the request's context in the middle of a tool call.
func (h *httpServer) limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > maxBodyBytes {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", maxBodyBytes), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "could not read the request body", http.StatusRequestTimeout)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r)
	})
}

// auditUndecodable records a tools/call whose params the SDK cannot decode:
// the SDK refuses it before any middleware of ours runs, so it is noticed
// here, then passed on unchanged for the SDK to answer. The body has been
// read in full, within its limit, by limitBody.
func (h *httpServer) auditUndecodable(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		if err == nil {
			req, _ := jsonrpc.DecodeMessage(body)
			if jr, ok := req.(*jsonrpc.Request); ok {
				if tool, reason, refused := mcpserver.UndecodableCall(jr); refused {
					who := ""
					if ti := auth.TokenInfoFromContext(r.Context()); ti != nil && ti.UserID != "" {
						who = "token:" + ti.UserID
					}
					h.app.rejections.Record(r.Context(), tool, reason, who, r.Header.Get("Mcp-Session-Id"))
				}
			}
		}
		next.ServeHTTP(w, r)
	})
}

// endStreamsOnShutdown ties GET streams (server-to-client notifications in
// stateful mode) to the shutdown signal. POSTs keep their own context, so a
// tool call already running is allowed to finish.
func (h *httpServer) endStreamsOnShutdown(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(h.streams, cancel)
			defer stop()
			r = r.WithContext(ctx)
		}
		next.ServeHTTP(w, r)
	})
}

// requestTimeout bounds every MCP request the server handles. Tools pass
// the context on to StoreLink, so a call that overruns is cut off there.
func requestTimeout(d time.Duration) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			return next(ctx, method, req)
		}
	}
}

// healthz is liveness: the process answers HTTP. It stays 200 while
// draining, so an orchestrator does not kill a replica that is finishing
// its last calls.
func (h *httpServer) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readiness is the body of /readyz.
type readiness struct {
	Status string `json:"status"` // ready, not_ready or draining
	Config string `json:"config"`
	Ledger string `json:"ledger"` // ok or unreachable
	// Database is where the ledger lives: sqlite or postgresql.
	Database string `json:"database"`
	// Breaker is StoreLink's circuit breaker. It is reported, not judged: an
	// open breaker means StoreLink is failing, which no other replica could
	// fix, so taking this one out of rotation would only add to the outage.
	Breaker string `json:"breaker"`
	Version string `json:"version"`
	// Upstream is "storelink", or "embedded_demo" for made-up data.
	Upstream string `json:"upstream"`
}

// readyz is readiness: the configuration loaded (or the server would not
// be running), the ledger answers, and the server is not shutting down.
func (h *httpServer) readyz(w http.ResponseWriter, r *http.Request) {
	out := readiness{Status: "ready", Config: "loaded", Ledger: "ok", Database: databaseKind(h.app.cfg), Breaker: h.app.up.BreakerState(), Version: Version, Upstream: h.app.upstreamKind()}
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	if err := h.app.db.Ping(ctx); err != nil {
		// The error names file paths; it goes to the log, not to an
		// unauthenticated endpoint.
		h.app.log.Error("http.not_ready", "error", err.Error())
		out.Status, out.Ledger = "not_ready", "unreachable"
	}
	if h.draining.Load() {
		out.Status = "draining"
	}
	code := http.StatusOK
	if out.Status != "ready" {
		code = http.StatusServiceUnavailable
	}
	writeJSON(w, code, out)
}

func writeJSON(w http.ResponseWriter, code int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(v)
}

// hostGuard is the DNS-rebinding defence. A web page the user visits can
// make the browser send requests to a name the attacker controls that
// resolves to this server; the request then carries the attacker's name in
// Host (and Origin). Only names this server is known by are accepted:
// loopback, the listen address's host, and --allowed-host names. The SDK's
// own check covers only connections that arrive on a loopback address; this
// one applies on every interface, and to Origin too.
type hostGuard struct {
	allowed map[string]bool
}

func newHostGuard(listenHost string, extra []string) hostGuard {
	g := hostGuard{allowed: map[string]bool{}}
	if listenHost != "" && !isWildcardHost(listenHost) {
		g.allowed[strings.Trim(listenHost, "[]")] = true
	}
	for _, h := range extra {
		g.allowed[h] = true
	}
	return g
}

// names lists the accepted host names, for the start-up log.
func (g hostGuard) names() []string {
	out := []string{"localhost", "127.0.0.1", "::1"}
	for _, h := range slices.Sorted(maps.Keys(g.allowed)) {
		if !slices.Contains(out, h) {
			out = append(out, h)
		}
	}
	return out
}

// ok reports whether host (with or without a port) is one of ours.
func (g hostGuard) ok(host string) bool {
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.TrimSuffix(strings.ToLower(strings.Trim(host, "[]")), ".")
	return isLoopbackHost(host) || g.allowed[host]
}

func (g hostGuard) wrap(next http.Handler, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.ok(r.Host) {
			log.Warn("http.host_refused", "host", r.Host, "remote", r.RemoteAddr)
			// 421: this server does not answer for that name.
			http.Error(w, "Misdirected Request: unknown Host", http.StatusMisdirectedRequest)
			return
		}
		if origin := r.Header.Get("Origin"); origin != "" {
			u, err := url.Parse(origin)
			if err != nil || u.Host == "" || !g.ok(u.Host) {
				log.Warn("http.origin_refused", "origin", origin, "remote", r.RemoteAddr)
				http.Error(w, "Forbidden: Origin not allowed", http.StatusForbidden)
				return
			}
		}
		next.ServeHTTP(w, r)
	})
}

// isLoopbackHost reports whether host (no port) names this machine only.
func isLoopbackHost(host string) bool {
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsLoopback()
}

// isWildcardHost reports whether host means "every interface".
func isWildcardHost(host string) bool {
	host = strings.Trim(host, "[]")
	if host == "" {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.IsUnspecified()
}
