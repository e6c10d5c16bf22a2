package httpserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// OAuth makes the server an OAuth 2.1 resource server: it admits access
// tokens the Verifier accepts, requires oauth.ScopeRead on every request and
// oauth.ScopeWrite on a call of a WriteTools tool, and publishes the
// protected resource metadata (RFC 9728).
type OAuth struct {
	Verifier *oauth.Verifier
	// WriteTools are the tools whose call needs oauth.ScopeWrite.
	WriteTools []string
	// Refused, when set, records a tools/call refused for a missing scope
	// (tool unchecked, caller the TokenInfo's UserID, sessionID "" without
	// a session).
	Refused func(ctx context.Context, tool, reason, caller, sessionID string)
}

// oauthKey marks a TokenInfo from an access token, whose scopes are
// checked; a file token's is not.
const oauthKey = "oauth"

// writeScopes is what a write tool call needs. The challenge names both
// scopes, so a client asking for exactly these keeps the read scope.
var writeScopes = []string{oauth.ScopeRead, oauth.ScopeWrite}

// resourceMetadata is the metadata URL for the challenge, "" without OAuth.
func (o *OAuth) resourceMetadata() string {
	if o == nil {
		return ""
	}
	u, err := oauth.MetadataURL(o.Verifier.Audience())
	if err != nil {
		return ""
	}
	return u
}

// metadataPaths are the paths the metadata is served at: RFC 9728's form
// for the resource's path, and the bare well-known path.
func (o *OAuth) metadataPaths() []string {
	paths := []string{oauth.WellKnownPath}
	if u, err := url.Parse(o.Verifier.Audience()); err == nil {
		if p := strings.TrimSuffix(u.Path, "/"); p != "" {
			paths = append(paths, oauth.WellKnownPath+p)
		}
	}
	return paths
}

// verify checks an access token for the SDK's bearer middleware. The
// subject, as "oauth:SUB", becomes the TokenInfo's UserID.
func (o *OAuth) verify(ctx context.Context, token string, r *http.Request, log *slog.Logger) (*auth.TokenInfo, error) {
	t, err := o.Verifier.Verify(ctx, token)
	if err != nil {
		if errors.Is(err, oauth.ErrInvalid) {
			log.Warn("auth.denied", "reason", oauth.Reason(err), "kind", "oauth", "remote", r.RemoteAddr)
			return nil, fmt.Errorf("%w: %s", auth.ErrInvalidToken, oauth.Reason(err))
		}
		log.Error("auth.oauth_unavailable", "error", err.Error(), "remote", r.RemoteAddr)
		return nil, errors.New("the identity provider's keys could not be read; retry later")
	}
	extra := map[string]any{oauthKey: true, "client_id": t.ClientID}
	if t.StoresLimited {
		// Narrows the keyring to these stores (oauth.TokenStores).
		extra[oauth.StoresClaim] = t.Stores
	}
	return &auth.TokenInfo{
		UserID:     t.Caller(),
		Scopes:     t.Scopes,
		Expiration: t.Expiry,
		Extra:      extra,
	}, nil
}

// requireScopes answers 403 insufficient_scope (RFC 6750 §3.1) to an access
// token without oauth.ScopeRead, and to a POST calling a write tool without
// oauth.ScopeWrite, before the SDK sees the request.
func (o *OAuth) requireScopes(next http.Handler, log *slog.Logger) http.Handler {
	metadata := o.resourceMetadata()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ti := auth.TokenInfoFromContext(r.Context())
		if ti == nil || ti.Extra[oauthKey] != true {
			next.ServeHTTP(w, r)
			return
		}
		var calls []string
		if r.Method == http.MethodPost {
			calls = toolCalls(r)
		}
		var want []string
		switch {
		case !slices.Contains(ti.Scopes, oauth.ScopeRead):
			want = []string{oauth.ScopeRead}
		case !slices.Contains(ti.Scopes, oauth.ScopeWrite) && slices.ContainsFunc(calls, func(c string) bool { return slices.Contains(o.WriteTools, c) }):
			want = writeScopes
		}
		if want == nil {
			next.ServeHTTP(w, r)
			return
		}
		scope := strings.Join(want, " ")
		log.Warn("auth.insufficient_scope", "caller", ti.UserID, "need", scope, "remote", r.RemoteAddr)
		if o.Refused != nil {
			for _, c := range calls {
				o.Refused(r.Context(), c, "insufficient_scope: the access token lacks the scope "+scope+"; nothing was sent", ti.UserID, r.Header.Get("Mcp-Session-Id"))
			}
		}
		w.Header().Set("WWW-Authenticate", fmt.Sprintf(`Bearer realm=%q, error="insufficient_scope", scope=%q, resource_metadata=%q, error_description=%q`,
			realm, scope, metadata, "this call needs the scope "+scope))
		http.Error(w, "Forbidden: insufficient_scope: this call needs the scope "+scope+"; ask the identity provider for a token that grants it", http.StatusForbidden)
	})
}

// toolCalls returns the tool names of the tools/call requests in the POST
// body, alone or in a batch. A body that does not parse yields none and is
// left for the SDK to refuse; Middleware catches anything missed.
func toolCalls(r *http.Request) []string {
	body, err := peekBody(r)
	if err != nil {
		return nil
	}
	type call struct {
		Method string `json:"method"`
		Params struct {
			Name string `json:"name"`
		} `json:"params"`
	}
	var msgs []call
	if trimmed := bytes.TrimSpace(body); len(trimmed) > 0 && trimmed[0] == '[' {
		_ = json.Unmarshal(body, &msgs)
	} else {
		var one call
		if json.Unmarshal(body, &one) == nil {
			msgs = []call{one}
		}
	}
	var names []string
	for _, c := range msgs {
		if c.Method == "tools/call" {
			names = append(names, c.Params.Name)
		}
	}
	return names
}

// Middleware refuses, as a JSON-RPC error, a write tool call by an access
// token without oauth.ScopeWrite. requireScopes answers such calls first
// with a 403; this is the fallback. Add it to Options.Server.
func (o *OAuth) Middleware() mcp.Middleware {
	return func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			ctr, ok := req.(*mcp.CallToolRequest)
			if !ok || ctr.Params == nil || !slices.Contains(o.WriteTools, ctr.Params.Name) || ctr.Extra == nil {
				return next(ctx, method, req)
			}
			if ti := ctr.Extra.TokenInfo; ti != nil && ti.Extra[oauthKey] == true && !slices.Contains(ti.Scopes, oauth.ScopeWrite) {
				return nil, fmt.Errorf("insufficient_scope: %s needs the scope %s; nothing was sent", ctr.Params.Name, oauth.ScopeWrite)
			}
			return next(ctx, method, req)
		}
	}
}
