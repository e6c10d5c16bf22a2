// Package httpserver serves one MCP server over Streamable HTTP: /mcp behind
// the DNS-rebinding check, the bearer token, the body limit and the session
// caps, and the /healthz and /readyz probes, which need no token.
//
// It reads no environment variable and parses no flag: its caller (package
// app) decides what is allowed and passes every setting in Options.
package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Limits of the transport. A tool call's arguments are a few hundred bytes,
// so a megabyte is generous and still keeps a flood of large bodies from
// exhausting memory.
const (
	// MaxBodyBytes is the largest request body accepted (413 beyond it).
	MaxBodyBytes = 1 << 20
	// bodyReadTimeout bounds how long a client may take to send its body,
	// so a slow sender cannot hold a connection open indefinitely.
	bodyReadTimeout = 30 * time.Second
	// readyTimeout bounds the readiness probe, so a hung database makes
	// /readyz answer not_ready instead of hanging the load balancer's check.
	readyTimeout = 2 * time.Second
	// sessionRetryAfter is the Retry-After of a session refused at the cap:
	// places free up as other sessions end or go idle, not at a known time.
	sessionRetryAfter = 30 * time.Second
	// realm names this server in every WWW-Authenticate challenge.
	realm = "storelink-mcp"
)

// Tokens admits callers by bearer token (bearer.File is the production
// one). The label names the caller: the SDK binds a stateful session to it,
// the session caps count per label, and the audit trail records it.
type Tokens interface {
	Lookup(token string) (label string, ok bool)
}

// Readiness is the body of /readyz. Status is the transport's verdict;
// the other fields describe the server's parts, as Options.Ready reports
// them.
type Readiness struct {
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

// Options configure a Server. Server and Logger are required; so are the
// positive limits, except the session caps of a stateless server.
type Options struct {
	// Server answers every request. All sessions are its sessions, which is
	// how the session cap tells the live ones; New adds the request timeout
	// to it as middleware, so pass a server to one New only.
	Server *mcp.Server
	Logger *slog.Logger
	// Tokens admits callers; nil serves without authentication, which the
	// caller has judged safe (a loopback address, or something in front of
	// the server that authenticates), unless OAuth is set.
	Tokens Tokens
	// OAuth, when set, also admits callers with an access token of an
	// identity provider (see OAuth), beside Tokens or alone.
	OAuth *OAuth
	// ListenHost is the host part of the listen address as configured (a
	// name or an address, no port). Besides loopback names, it and
	// AllowedHosts are the names accepted in Host and Origin; a wildcard
	// address names no host.
	ListenHost   string
	AllowedHosts []string
	// Stateless serves every client without MCP sessions, so any replica
	// can answer any request. Without it, 2025-11-25 clients get sessions
	// (GET streams, server-to-client requests, the session caps) and
	// 2026-07-28 requests, which carry no session, stand alone.
	Stateless bool
	// RequestTimeout bounds every MCP request.
	RequestTimeout time.Duration
	// MaxSessions and MaxSessionsPerToken cap the open stateful sessions,
	// in all and per token label.
	MaxSessions, MaxSessionsPerToken int
	// SessionIdleTimeout closes a session nobody used for so long.
	SessionIdleTimeout time.Duration
	// Inspect, when set, sees every JSON-RPC request of a POST before the
	// SDK decodes its params (the SDK refuses undecodable ones before any
	// MCP middleware runs), with the caller's token label ("" without
	// authentication) and the Mcp-Session-Id ("" before a session exists).
	Inspect func(ctx context.Context, req *jsonrpc.Request, label, sessionID string)
	// Ready reports the server's parts for /readyz; an error means not
	// ready. The error is logged, never shown: /readyz answers anyone, and
	// the error may name file paths. Nil reports the status alone.
	Ready func(ctx context.Context) (Readiness, error)
}

// Server is the HTTP face of one MCP server.
type Server struct {
	opts  Options
	log   *slog.Logger
	hosts hostGuard
	// sessions caps the open stateful sessions; nil when stateless.
	sessions *sessionCap
	srv      *http.Server
	// streams is cancelled when shutdown begins, ending open GET streams.
	streams     context.Context
	stopStreams context.CancelFunc
	draining    atomic.Bool
	shutdown    atomic.Bool
}

// New assembles the handler. It refuses options that would leave the server
// unbounded, rather than guessing defaults for them.
func New(opts Options) (*Server, error) {
	switch {
	case opts.Server == nil || opts.Logger == nil:
		return nil, errors.New("httpserver: Options.Server and Options.Logger are required")
	case opts.RequestTimeout <= 0:
		return nil, errors.New("httpserver: Options.RequestTimeout must be positive")
	case !opts.Stateless && (opts.MaxSessions <= 0 || opts.MaxSessionsPerToken <= 0 || opts.SessionIdleTimeout <= 0):
		return nil, errors.New("httpserver: a stateful server needs positive MaxSessions, MaxSessionsPerToken and SessionIdleTimeout")
	}
	s := &Server{opts: opts, log: opts.Logger, hosts: newHostGuard(opts.ListenHost, opts.AllowedHosts)}
	s.streams, s.stopStreams = context.WithCancel(context.Background())
	if !opts.Stateless {
		s.sessions = newSessionCap(opts.MaxSessions, opts.MaxSessionsPerToken, opts.Server, opts.Logger)
	}
	s.srv = &http.Server{
		Handler:           s.routes(),
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(opts.Logger.Handler(), slog.LevelWarn),
	}
	return s, nil
}

// Handler is the whole HTTP surface: /mcp, /healthz and /readyz.
func (s *Server) Handler() http.Handler { return s.srv.Handler }

// Serve logs http.listening and serves on ln until Shutdown, after which it
// returns nil; any other end is an error.
func (s *Server) Serve(ln net.Listener) error {
	authMode := "none"
	switch {
	case s.opts.Tokens != nil && s.opts.OAuth != nil:
		authMode = "bearer+oauth"
	case s.opts.Tokens != nil:
		authMode = "bearer"
	case s.opts.OAuth != nil:
		authMode = "oauth"
	}
	addr := ln.Addr().String()
	// 2026-07-28 requests never have a session; "sessions" says whether
	// 2025-11-25 clients get one.
	sessions := "2025-11-25"
	if s.opts.Stateless {
		sessions = "none"
	}
	s.log.Info("http.listening", "addr", addr, "url", "http://"+addr+"/mcp",
		"sessions", sessions, "auth", authMode, "allowed_hosts", s.hosts.names(),
		"max_sessions", s.opts.MaxSessions, "max_sessions_per_token", s.opts.MaxSessionsPerToken,
		"session_idle_timeout", s.opts.SessionIdleTimeout.String())
	err := s.srv.Serve(ln)
	if errors.Is(err, http.ErrServerClosed) && s.shutdown.Load() {
		return nil
	}
	return err
}

// Shutdown stops accepting connections, reports draining on /readyz, ends
// the open GET streams (they wait for notifications that will never come),
// and waits until ctx ends for the requests still running: a tool call in
// flight is allowed to finish. What still runs then is cut off, logged as
// http.shutdown_forced, and ctx's error returned.
func (s *Server) Shutdown(ctx context.Context) error {
	s.shutdown.Store(true)
	s.draining.Store(true)
	s.stopStreams()
	if err := s.srv.Shutdown(ctx); err != nil {
		s.log.Warn("http.shutdown_forced", "error", err.Error(), "note", "requests still running after the grace period were cut off")
		_ = s.srv.Close()
		return err
	}
	return nil
}

// routes assembles the handler: /mcp behind the Host and Origin checks, the
// bearer token and the body limit; /healthz and /readyz open, for load
// balancers and orchestrators that hold no token.
func (s *Server) routes() http.Handler {
	s.opts.Server.AddReceivingMiddleware(requestTimeout(s.opts.RequestTimeout))
	if s.opts.OAuth != nil {
		s.opts.Server.AddReceivingMiddleware(s.opts.OAuth.Middleware())
	}
	if s.sessions != nil {
		// The stateless revision's requests count under the session caps
		// while they run, so one token cannot escape its limit by
		// switching revision.
		s.opts.Server.AddReceivingMiddleware(s.sessions.countRequests)
	}
	handler := func(stateless bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.opts.Server }, &mcp.StreamableHTTPOptions{
			Stateless:           stateless,
			Logger:              s.log,
			MaxRequestBodyBytes: MaxBodyBytes,
			// An abandoned session (no DELETE) holds memory and a goroutine
			// until it has been idle this long, and holds its place under the
			// session cap until then.
			SessionTimeout: s.opts.SessionIdleTimeout,
			// The SDK's own rebinding check refuses every non-loopback Host on a
			// loopback connection, which also refuses a reverse proxy on the same
			// machine forwarding for a configured name. hostGuard covers the same
			// ground on every interface and honours the allowed host names.
			DisableLocalhostProtection: true,
		})
	}
	// 2026-07-28 requests stand alone (the SDK serves that revision only
	// statelessly); 2025-11-25 clients keep their sessions unless the
	// operator asked for none. Both handlers answer for the same server, so
	// a tool, the audit trail and the ledger cannot tell them apart.
	stateless := handler(true)
	var sdk http.Handler = stateless
	if !s.opts.Stateless {
		var stateful http.Handler = handler(false)
		if s.sessions != nil {
			// Inside authentication, so the cap knows the token.
			stateful = s.sessions.wrap(stateful)
		}
		sdk = byRevision(stateful, stateless)
	}
	mcpH := s.endStreamsOnShutdown(sdk)
	if s.opts.Inspect != nil {
		mcpH = s.inspect(mcpH)
	}
	if s.opts.OAuth != nil {
		// Inside the body limit: the scope a call needs is in its body.
		mcpH = s.opts.OAuth.requireScopes(mcpH, s.log)
	}
	mcpH = limitBody(mcpH)
	if s.opts.Tokens != nil || s.opts.OAuth != nil {
		// Authentication comes before the body is read, so a caller without
		// a token costs no more than its headers.
		mcpH = s.logDenied(challenge(auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
			// File tokens do not expire; revocation is removing the line.
			// Access tokens always do: the verifier refuses one without exp.
			AllowMissingExpiration: true,
			ClockSkew:              oauth.ClockSkew,
		}), s.opts.OAuth.resourceMetadata(), mcpH))
	}
	mcpH = s.hosts.wrap(mcpH, s.log)

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpH)
	if s.opts.OAuth != nil {
		// Public, like the provider's own metadata: no token, and no Host
		// check, since it tells nothing a client could not be told anyway.
		meta := auth.ProtectedResourceMetadataHandler(s.opts.OAuth.Verifier.Metadata())
		for _, p := range s.opts.OAuth.metadataPaths() {
			mux.Handle(p, meta)
		}
	}
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	return mux
}

// verify adapts the token source to the SDK's bearer middleware. The label
// becomes TokenInfo.UserID: the SDK binds a stateful session to it (another
// token cannot take the session over), and the tools record it as the caller.
//
// With OAuth configured, a token the file does not hold is checked as an
// access token of the identity provider (see OAuth.verify).
func (s *Server) verify(ctx context.Context, token string, r *http.Request) (*auth.TokenInfo, error) {
	if s.opts.Tokens != nil {
		if label, ok := s.opts.Tokens.Lookup(token); ok {
			return &auth.TokenInfo{UserID: label, Extra: map[string]any{"label": label}}, nil
		}
		if s.opts.OAuth == nil {
			s.log.Warn("auth.denied", "reason", "unknown token", "remote", r.RemoteAddr)
			return nil, auth.ErrInvalidToken
		}
	}
	return s.opts.OAuth.verify(ctx, token, r, s.log)
}

// logDenied logs requests that carry no bearer token at all, which the SDK
// middleware refuses without consulting the verifier.
func (s *Server) logDenied(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := bearer.Token(r.Header.Values("Authorization")); err != nil {
			s.log.Warn("auth.denied", "reason", err.Error(), "remote", r.RemoteAddr)
		}
		next.ServeHTTP(w, r)
	})
}

// challenge runs next behind the bearer middleware mw and adds the RFC 6750
// challenge to every 401 mw answers: `Bearer realm="storelink-mcp"`, with
// resource_metadata (RFC 9728 §5.1) when metadata is not "", so that a
// client can find the identity provider, and error="invalid_token" when a
// token was presented, so a host can tell a wrong token from a missing one.
// Only mw's own answers pass through the header-adding writer; next gets
// the original one, so streaming is untouched.
func challenge(mw func(http.Handler) http.Handler, metadata string, next http.Handler) http.Handler {
	inner := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w.(*challengeWriter).ResponseWriter, r)
	}))
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		value := fmt.Sprintf("Bearer realm=%q", realm)
		if metadata != "" {
			value += fmt.Sprintf(", resource_metadata=%q", metadata)
		}
		if len(r.Header.Values("Authorization")) > 0 {
			value += `, error="invalid_token"`
		}
		inner.ServeHTTP(&challengeWriter{ResponseWriter: w, value: value}, oneCredential(r))
	})
}

// oneCredential returns r as the bearer middleware is to see it: with the
// one token bearer.Token reads in its Authorization header, or with none
// (so it is refused with 401) when bearer.Token reads none, whatever the
// middleware's own parsing would have made of the header (it reads only the
// first of several values).
func oneCredential(r *http.Request) *http.Request {
	values := r.Header.Values("Authorization")
	if len(values) == 0 {
		return r
	}
	r2 := *r
	r2.Header = r.Header.Clone()
	if tok, err := bearer.Token(values); err == nil {
		r2.Header["Authorization"] = []string{"Bearer " + tok}
	} else {
		delete(r2.Header, "Authorization")
	}
	return &r2
}

// challengeWriter adds WWW-Authenticate to a 401, and turns the bearer
// middleware's 500 into 503 with Retry-After.
type challengeWriter struct {
	http.ResponseWriter
	value string
}

func (c *challengeWriter) WriteHeader(code int) {
	switch {
	case code == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "":
		c.Header().Set("WWW-Authenticate", c.value)
	case code == http.StatusInternalServerError:
		// The middleware answers 500 only when the verifier could not check
		// the token at all (the identity provider's key set could not be
		// read): the token may be good, so the client is told to try again
		// once the provider may have been asked again, not that it is wrong.
		c.Header().Set("Retry-After", fmt.Sprint(int(oauth.RefreshInterval/time.Second)))
		code = http.StatusServiceUnavailable
	}
	c.ResponseWriter.WriteHeader(code)
}

// limitBody reads a POST body in full, within a size limit (413 beyond it)
// and a time limit, before the SDK sees the request. The read deadline is
// lifted once the body is in, because an expired deadline later would
// cancel the request's context in the middle of a tool call.
func limitBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		if r.ContentLength > MaxBodyBytes {
			http.Error(w, fmt.Sprintf("request body exceeds %d bytes", MaxBodyBytes), http.StatusRequestEntityTooLarge)
			return
		}
		rc := http.NewResponseController(w)
		_ = rc.SetReadDeadline(time.Now().Add(bodyReadTimeout))
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, MaxBodyBytes))
		_ = rc.SetReadDeadline(time.Time{})
		if err != nil {
			var tooBig *http.MaxBytesError
			if errors.As(err, &tooBig) {
				http.Error(w, fmt.Sprintf("request body exceeds %d bytes", MaxBodyBytes), http.StatusRequestEntityTooLarge)
				return
			}
			http.Error(w, "could not read the request body", http.StatusRequestTimeout)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), bodyKey{}, body)))
	})
}

// bodyKey holds, in a request's context, the POST body limitBody read.
type bodyKey struct{}

// peekBody returns a POST's body for a look before the SDK reads it: the
// bytes limitBody kept, else (a handler used without limitBody, as in
// tests) the body read and put back. Callers only read the bytes.
func peekBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Context().Value(bodyKey{}).([]byte); ok {
		return b, nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

// currentRevision is the first MCP revision without sessions: its requests
// carry their version in the MCP-Protocol-Version header and in _meta, and
// the SDK serves them over HTTP only statelessly.
const currentRevision = "2026-07-28"

// byRevision sends each request to the handler of its protocol revision:
// a request of 2026-07-28 or later, or a server/discover probe (which must
// be told every revision this endpoint serves, 2026-07-28 included), to
// stateless; everything else, that is 2025-11-25 and older sessions and
// their initialize, to stateful. Revision dates compare as strings.
func byRevision(stateful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isCurrentRevision(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// isCurrentRevision reports whether r belongs to the stateless revision: by
// its MCP-Protocol-Version header, or, for a POST outside any session, by
// the body's method or _meta protocol version (a request that names the
// new revision only in _meta is then refused by the SDK for the missing
// header, as that revision requires, rather than as an unknown version).
// The body has been read in full, within its limit, by limitBody.
func isCurrentRevision(r *http.Request) bool {
	if r.Header.Get("Mcp-Protocol-Version") >= currentRevision {
		return true
	}
	if r.Method != http.MethodPost || r.Body == nil || r.Header.Get("Mcp-Session-Id") != "" {
		return false
	}
	body, err := peekBody(r)
	if err != nil {
		return false
	}
	var m struct {
		Method string `json:"method"`
		Params struct {
			Meta map[string]any `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(body, &m) != nil {
		return false // a batch or garbage: the 2025-11-25 handler refuses it as before
	}
	if m.Method == "server/discover" {
		return true
	}
	_, ok := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	return ok
}

// inspect hands a POST's JSON-RPC request to Options.Inspect, then passes
// the request on unchanged for the SDK to answer. The body has been read in
// full, within its limit, by limitBody.
func (s *Server) inspect(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.Body == nil {
			next.ServeHTTP(w, r)
			return
		}
		body, err := peekBody(r)
		if err == nil {
			msg, _ := jsonrpc.DecodeMessage(body)
			if req, ok := msg.(*jsonrpc.Request); ok {
				label := ""
				if ti := auth.TokenInfoFromContext(r.Context()); ti != nil {
					label = ti.UserID
				}
				s.opts.Inspect(r.Context(), req, label, r.Header.Get("Mcp-Session-Id"))
			}
		}
		next.ServeHTTP(w, r)
	})
}

// endStreamsOnShutdown ties GET streams (server-to-client notifications in
// stateful mode) to the shutdown signal. POSTs keep their own context, so a
// tool call already running is allowed to finish.
func (s *Server) endStreamsOnShutdown(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			ctx, cancel := context.WithCancel(r.Context())
			defer cancel()
			stop := context.AfterFunc(s.streams, cancel)
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
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is readiness: the server's parts answer (Options.Ready), and the
// server is not shutting down.
func (s *Server) readyz(w http.ResponseWriter, r *http.Request) {
	var out Readiness
	var err error
	if s.opts.Ready != nil {
		ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
		out, err = s.opts.Ready(ctx)
		cancel()
	}
	out.Status = "ready"
	if err != nil {
		s.log.Error("http.not_ready", "error", err.Error())
		out.Status = "not_ready"
	}
	if s.draining.Load() {
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
