package httpserver

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sessionCap bounds open stateful sessions, in all and per token. The SDK
// tracks live sessions; the cap records each session's token and counts
// creations in flight.
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
// with 503 and Retry-After when a cap is reached. Everything else passes.
func (c *sessionCap) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.Header.Get("Mcp-Session-Id"); r.Method == http.MethodDelete && id != "" {
			// The SDK forgets a deleted session shortly after; free it now.
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

// countRequests applies the session caps to stateless requests, each
// counted while its handler runs, and refuses one over a cap with a JSON-RPC
// error. Session requests pass.
func (c *sessionCap) countRequests(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		if strings.HasPrefix(method, "notifications/") || req.GetSession() == nil || req.GetSession().ID() != "" {
			return next(ctx, method, req)
		}
		label := ""
		if ex := req.GetExtra(); ex != nil && ex.TokenInfo != nil {
			label = ex.TokenInfo.UserID
		}
		release, refusal := c.admit(label)
		if refusal != "" {
			c.log.Warn("http.request_refused", "reason", refusal, "token", label, "method", method)
			return nil, &jsonrpc.Error{Code: codeOverCap, Message: refusal + "; retry in a moment, once requests still running have been answered"}
		}
		defer release("")
		return next(ctx, method, req)
	}
}

// codeOverCap is the JSON-RPC error code of a request refused at a cap.
const codeOverCap = -32000

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

// isInitialize reports whether the POST body is an initialize request.
func isInitialize(r *http.Request) bool {
	body, err := peekBody(r)
	var m struct {
		Method string `json:"method"`
	}
	return err == nil && json.Unmarshal(body, &m) == nil && m.Method == "initialize"
}

// admit reserves a place for a session of label, or says why not; release
// records the new session's id ("" if none). The refusal names the settings.
func (c *sessionCap) admit(label string) (release func(sessionID string), refusal string) {
	// A session counts once initialized; the SDK may close others late.
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
