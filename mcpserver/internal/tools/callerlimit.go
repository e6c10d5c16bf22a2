package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/audit"
	"github.com/korral/storelink/mcpserver/internal/callerlimit"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// callerOf is the key of the caller's limits: the OAuth subject or bearer
// token label over HTTP, else the MCP session, else the stdio process, else
// "anonymous".
// Unlike the audit's client, it never holds the client's own name, which
// the client chooses.
func (s *server) callerOf(req *mcp.CallToolRequest) string {
	if req.Extra != nil && req.Extra.TokenInfo != nil && req.Extra.TokenInfo.UserID != "" {
		who := req.Extra.TokenInfo.UserID
		if strings.HasPrefix(who, "oauth:") {
			return who
		}
		return "token:" + who
	}
	if req.Session != nil && req.Session.ID() != "" {
		return "session:" + req.Session.ID()
	}
	if s.opts.SessionName != "" {
		return "stdio:" + s.opts.SessionName
	}
	// Stateless HTTP without tokens (--insecure-no-auth): one caller.
	return "anonymous"
}

// limitCallers is the receiving middleware that names the caller of each
// tools/call in its context, for the StoreLink budget's share, and refuses
// a call past the caller's rate with RATE_LIMITED before any tool runs
// (ADR 0036).
func (s *server) limitCallers(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		ctr, ok := req.(*mcp.CallToolRequest)
		if !ok || ctr.Params == nil {
			return next(ctx, method, req)
		}
		caller := s.callerOf(ctr)
		ctx = callerlimit.With(ctx, caller)
		allowed, wait := s.callers.Allow(caller)
		if allowed {
			return next(ctx, method, req)
		}
		c := s.newCall(ctr, audit.ClientName(ctr.Params.Name))
		ctx = callid.With(ctx, c.id)
		noteCall(ctx, c.id, "")
		s.recordRateLimited(ctx, limitCalls)
		limits := s.opts.CallerLimits
		e := apperr.New(apperr.RateLimited,
			fmt.Sprintf("this caller has made more tool calls than this server allows one caller (%d a minute, %d at once); nothing was sent to StoreLink", limits.CallsPerMinute, max(limits.Burst, 1)),
			"Wait retry_after_seconds, then call again; if this caller needs more, ask an operator to raise the per-caller limit.")
		e.RetryAfterSeconds = callerlimit.RetryAfterSeconds(wait)
		return s.fail(ctx, c, e, time.Duration(0)), nil
	}
}
