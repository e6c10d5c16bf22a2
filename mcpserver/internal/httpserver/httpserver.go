// Package httpserver serves one MCP server over Streamable HTTP: /mcp behind
// the Host check, the bearer token, the body limit and the session caps, and
// the /healthz and /readyz probes. It also holds the listeners' policies,
// checked before anything starts (AuthPolicy, MetricsPolicy), the /metrics
// listener, and serving beside the console until one of them fails. It reads
// no environment variable or flag; the caller passes every setting.
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

// Limits of the transport.
const (
	// MaxBodyBytes is the largest request body accepted (413 beyond it).
	MaxBodyBytes = 1 << 20
	// bodyReadTimeout bounds how long a client may take to send its body.
	bodyReadTimeout = 30 * time.Second
	// readyTimeout bounds the readiness probe (a hung database: not_ready).
	readyTimeout = 2 * time.Second
	// sessionRetryAfter is the Retry-After of a session refused at the cap.
	sessionRetryAfter = 30 * time.Second
	// realm names this server in every WWW-Authenticate challenge.
	realm = "storelink-mcp"
)

// Tokens admits callers by bearer token (bearer.File in production). The
// label names the caller.
type Tokens interface {
	Lookup(token string) (label string, ok bool)
}

// Readiness is the body of /readyz: Status from the transport, the other
// fields as Options.Ready reports them.
type Readiness struct {
	Status string `json:"status"` // ready, not_ready or draining
	Config string `json:"config"`
	Ledger string `json:"ledger"` // ok or unreachable
	// Database is where the ledger lives: sqlite or postgresql.
	Database string `json:"database"`
	// Breaker is StoreLink's circuit breaker state; reported, never a
	// reason for not_ready, since another replica could not fix StoreLink.
	Breaker string `json:"breaker"`
	Version string `json:"version"`
	// Upstream is "storelink", or "embedded_demo" for made-up data.
	Upstream string `json:"upstream"`
}

// Options configure a Server. Server and Logger are required; so are the
// positive limits, except the session caps of a stateless server.
type Options struct {
	// Server answers every request; New adds middleware, so use it once.
	Server *mcp.Server
	Logger *slog.Logger
	// Tokens admits callers; nil without OAuth means no authentication.
	Tokens Tokens
	// OAuth, when set, also admits access tokens of an identity provider.
	OAuth *OAuth
	// ListenHost is the configured listen host (no port). With loopback names
	// and AllowedHosts, it is accepted in Host and Origin; a wildcard address
	// names no host.
	ListenHost   string
	AllowedHosts []string
	// Stateless serves without MCP sessions, so any replica can answer.
	// Otherwise 2025-11-25 clients get sessions.
	Stateless bool
	// RequestTimeout bounds every MCP request.
	RequestTimeout time.Duration
	// MaxSessions and MaxSessionsPerToken cap stateful sessions, in all and
	// per token label.
	MaxSessions, MaxSessionsPerToken int
	// SessionIdleTimeout closes a session unused for this long.
	SessionIdleTimeout time.Duration
	// Inspect, when set, sees every JSON-RPC request of a POST before the SDK
	// decodes its params, with the caller's token label ("" without
	// authentication) and the Mcp-Session-Id ("" before a session exists).
	Inspect func(ctx context.Context, req *jsonrpc.Request, label, sessionID string)
	// Ready reports the server's parts for /readyz; an error means not ready.
	// The error is logged, never shown, since /readyz is public. Nil reports
	// the status alone.
	Ready func(ctx context.Context) (Readiness, error)
}

// Server is the HTTP server of one MCP server.
type Server struct {
	opts  Options
	log   *slog.Logger
	hosts hostGuard
	// sessions is nil when stateless.
	sessions *sessionCap
	srv      *http.Server
	// streams is cancelled when shutdown begins, ending open GET streams.
	streams     context.Context
	stopStreams context.CancelFunc
	draining    atomic.Bool
	shutdown    atomic.Bool
}

// New builds the server, refusing options that leave it unbounded.
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

// Serve serves on ln. After Shutdown it returns nil; else an error.
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
// open GET streams and waits until ctx ends for running requests. Requests
// still running then are cut off, logged as http.shutdown_forced, and ctx's
// error is returned.
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

// routes builds /mcp behind the Host check, authentication and body limit,
// and the open /healthz and /readyz.
func (s *Server) routes() http.Handler {
	s.opts.Server.AddReceivingMiddleware(requestTimeout(s.opts.RequestTimeout))
	if s.opts.OAuth != nil {
		s.opts.Server.AddReceivingMiddleware(s.opts.OAuth.Middleware())
	}
	if s.sessions != nil {
		// Stateless requests count under the session caps while they run.
		s.opts.Server.AddReceivingMiddleware(s.sessions.countRequests)
	}
	handler := func(stateless bool) http.Handler {
		return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s.opts.Server }, &mcp.StreamableHTTPOptions{
			Stateless:           stateless,
			Logger:              s.log,
			MaxRequestBodyBytes: MaxBodyBytes,
			SessionTimeout:      s.opts.SessionIdleTimeout,
			// The SDK's rebinding check refuses a reverse proxy on the same
			// machine forwarding for a configured name; hostGuard does the
			// check instead and honours the allowed host names.
			DisableLocalhostProtection: true,
		})
	}
	// 2026-07-28 requests are served statelessly; 2025-11-25 clients keep
	// sessions unless Stateless is set.
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
		// Authentication comes before the body is read.
		mcpH = s.logDenied(challenge(auth.RequireBearerToken(s.verify, &auth.RequireBearerTokenOptions{
			// File tokens do not expire; access tokens without exp are refused.
			AllowMissingExpiration: true,
			ClockSkew:              oauth.ClockSkew,
		}), s.opts.OAuth.resourceMetadata(), mcpH))
	}
	mcpH = s.hosts.wrap(mcpH, s.log)

	mux := http.NewServeMux()
	mux.Handle("/mcp", mcpH)
	if s.opts.OAuth != nil {
		// Public: no token and no Host check.
		meta := auth.ProtectedResourceMetadataHandler(s.opts.OAuth.Verifier.Metadata())
		for _, p := range s.opts.OAuth.metadataPaths() {
			mux.Handle(p, meta)
		}
	}
	mux.HandleFunc("GET /healthz", s.healthz)
	mux.HandleFunc("GET /readyz", s.readyz)
	return mux
}

// verify checks a token for the SDK's bearer middleware: first Tokens, then,
// when OAuth is set, as an access token. The label becomes TokenInfo.UserID,
// which binds a stateful session to the caller.
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

// logDenied logs requests without any bearer token, which the SDK
// refuses without calling the verifier.
func (s *Server) logDenied(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := bearer.Token(r.Header.Values("Authorization")); err != nil {
			s.log.Warn("auth.denied", "reason", err.Error(), "remote", r.RemoteAddr)
		}
		next.ServeHTTP(w, r)
	})
}

// challenge runs next behind the bearer middleware mw and adds the RFC 6750
// challenge to every 401 of mw, with resource_metadata (RFC 9728 §5.1) when
// metadata is not "" and error="invalid_token" when a token was sent. next
// gets the original writer, so streaming is untouched.
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

// oneCredential returns r with only the token bearer.Token reads in its
// Authorization header, or with none when bearer.Token reads none, so the
// middleware does not parse the header its own way.
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

// challengeWriter adds WWW-Authenticate to a 401 and turns a 500 into 503.
type challengeWriter struct {
	http.ResponseWriter
	value string
}

func (c *challengeWriter) WriteHeader(code int) {
	switch {
	case code == http.StatusUnauthorized && c.Header().Get("WWW-Authenticate") == "":
		c.Header().Set("WWW-Authenticate", c.value)
	case code == http.StatusInternalServerError:
		// A 500 means the key set could not be read: the token may be good.
		c.Header().Set("Retry-After", fmt.Sprint(int(oauth.RefreshInterval/time.Second)))
		code = http.StatusServiceUnavailable
	}
	c.ResponseWriter.WriteHeader(code)
}

// limitBody reads a POST body in full before the SDK sees it, within a size
// limit (413 beyond it) and a time limit. The read deadline is cleared
// afterwards so it cannot cancel a running tool call.
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

// bodyKey is the context key of the body limitBody read.
type bodyKey struct{}

// peekBody returns a POST's body without consuming it: the bytes limitBody
// kept, or else the body read and put back. Callers must not modify it.
func peekBody(r *http.Request) ([]byte, error) {
	if b, ok := r.Context().Value(bodyKey{}).([]byte); ok {
		return b, nil
	}
	body, err := io.ReadAll(r.Body)
	r.Body = io.NopCloser(bytes.NewReader(body))
	return body, err
}

// currentRevision is the first MCP revision without sessions.
const currentRevision = "2026-07-28"

// byRevision sends requests of 2026-07-28 or later, and server/discover
// probes, to stateless, and all others to stateful. Revision dates compare
// as strings.
func byRevision(stateful, stateless http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isCurrentRevision(r) {
			stateless.ServeHTTP(w, r)
			return
		}
		stateful.ServeHTTP(w, r)
	})
}

// isCurrentRevision reports whether r belongs to the stateless revision, by
// its MCP-Protocol-Version header or, for a POST outside a session, by the
// body's method or _meta protocol version.
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
		return false // a batch or garbage: the stateful handler refuses it
	}
	if m.Method == "server/discover" {
		return true
	}
	_, ok := m.Params.Meta[mcp.MetaKeyProtocolVersion].(string)
	return ok
}

// inspect passes a POST's JSON-RPC request to Options.Inspect, then on.
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

// endStreamsOnShutdown ends GET streams at shutdown; POSTs may finish.
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

// requestTimeout bounds every MCP request.
func requestTimeout(d time.Duration) mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctx, cancel := context.WithTimeout(ctx, d)
			defer cancel()
			return next(ctx, method, req)
		}
	}
}

// healthz is liveness; it stays 200 while draining.
func (s *Server) healthz(w http.ResponseWriter, _ *http.Request) {
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
}

// readyz is readiness: Options.Ready succeeds and not shutting down.
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
