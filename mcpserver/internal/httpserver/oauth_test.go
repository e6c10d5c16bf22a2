package httpserver

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/korral/storelink/mcpserver/internal/oauth"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const resource = "https://mcp.korral.example/mcp"

// token is an access token from iss for sub with scope.
func token(iss *mcptest.Issuer, sub, scope string) string {
	now := time.Now()
	return iss.Token(map[string]any{"iss": iss.URL(), "aud": resource, "sub": sub, "scope": scope,
		"iat": now.Unix(), "exp": now.Add(time.Minute).Unix()})
}

// refusals records what OAuth.Refused was told.
type refusals struct {
	mu   sync.Mutex
	rows []string
}

func (r *refusals) record(_ context.Context, tool, reason, caller, _ string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, caller+" "+tool+" "+reason)
}

func (r *refusals) list() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.rows...)
}

// The gate tool stands for the write tool: a token without the write scope
// never enters it, a token with it does.
func TestOAuthScopesAreCheckedBeforeTheSDK(t *testing.T) {
	p := mcptest.NewIssuer(t, "")
	v, err := oauth.New(context.Background(), oauth.Options{Issuer: p.URL(), Audience: resource})
	if err != nil {
		t.Fatal(err)
	}
	g := newGate()
	opts, logs := testOptions(g)
	opts.Stateless = true
	refused := &refusals{}
	opts.OAuth = &OAuth{Verifier: v, WriteTools: []string{"wait"}, Refused: refused.record}
	s := start(t, opts)
	call := `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"wait","arguments":{}}}`
	as := func(tok string) map[string]string {
		return map[string]string{"Authorization": "Bearer " + tok, "MCP-Protocol-Version": "2025-06-18"}
	}

	resp, _ := mcptest.Post(t, s.base+"/mcp", initBody, nil)
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusUnauthorized ||
		got != `Bearer realm="storelink-mcp", resource_metadata="https://mcp.korral.example/.well-known/oauth-protected-resource/mcp"` {
		t.Fatalf("no token: %d %q", resp.StatusCode, got)
	}
	resp, _ = mcptest.Post(t, s.base+"/mcp", initBody, as(token(p, "a", "profile")))
	if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden || !strings.Contains(got, `error="insufficient_scope", scope="storelink.read"`) {
		t.Fatalf("no read scope: %d %q", resp.StatusCode, got)
	}
	for _, body := range []string{call, "[" + call + "]"} {
		resp, text := mcptest.Post(t, s.base+"/mcp", body, as(token(p, "reader", "storelink.read")))
		if got := resp.Header.Get("WWW-Authenticate"); resp.StatusCode != http.StatusForbidden ||
			!strings.Contains(got, `error="insufficient_scope", scope="storelink.read storelink.write"`) || !strings.Contains(text, "storelink.write") {
			t.Fatalf("write with the read scope (%s): %d %q %s", body, resp.StatusCode, got, text)
		}
	}
	select {
	case <-g.entered:
		t.Fatal("the write tool ran for a token without the write scope")
	default:
	}
	if rows := refused.list(); len(rows) != 2 || !strings.HasPrefix(rows[0], "oauth:reader wait insufficient_scope") {
		t.Fatalf("refusals: %q", rows)
	}
	if countLines(logs.String(), "auth.insufficient_scope") != 3 {
		t.Fatalf("logs:\n%s", logs.String())
	}
	close(g.open)
	resp, text := mcptest.Post(t, s.base+"/mcp", call, as(token(p, "writer", "storelink.read storelink.write")))
	if resp.StatusCode != http.StatusOK || !strings.Contains(text, "released") {
		t.Fatalf("write with the write scope: %d %s", resp.StatusCode, text)
	}

	for _, path := range []string{"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"} {
		r, err := http.Get(s.base + path)
		if err != nil {
			t.Fatal(err)
		}
		var meta map[string]any
		_ = json.NewDecoder(r.Body).Decode(&meta)
		r.Body.Close()
		if meta["resource"] != resource || r.Header.Get("Access-Control-Allow-Origin") != "*" {
			t.Fatalf("%s: %v", path, meta)
		}
	}
}

// The receiving middleware refuses a write by a token without the write
// scope even if the HTTP check never saw the call.
func TestOAuthMiddlewareStandsBehindTheHTTPCheck(t *testing.T) {
	o := &OAuth{WriteTools: []string{"wait"}}
	ran := false
	next := func(context.Context, string, mcp.Request) (mcp.Result, error) {
		ran = true
		return &mcp.CallToolResult{}, nil
	}
	h := o.Middleware()(next)
	req := func(scopes ...string) *mcp.CallToolRequest {
		return &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "wait"},
			Extra: &mcp.RequestExtra{TokenInfo: &auth.TokenInfo{UserID: "oauth:a", Scopes: scopes, Extra: map[string]any{oauthKey: true}}}}
	}
	if _, err := h(context.Background(), "tools/call", req(oauth.ScopeRead)); err == nil || !strings.Contains(err.Error(), "insufficient_scope") || ran {
		t.Fatalf("read scope only: %v, ran %v", err, ran)
	}
	if _, err := h(context.Background(), "tools/call", req(oauth.ScopeRead, oauth.ScopeWrite)); err != nil || !ran {
		t.Fatalf("write scope: %v, ran %v", err, ran)
	}
}
