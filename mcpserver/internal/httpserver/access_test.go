package httpserver

// Who may reach /mcp: host and origin checks, bearer tokens, and the
// Inspect hook that sees each request with its caller.

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// The host and origin checks, the bearer token with its challenge on every
// 401, the body limit and the path, all logged without the token.
func TestGuardsTheEndpoint(t *testing.T) {
	opts, logs := testOptions(newGate())
	opts.Tokens = tokenFile(t, "agent "+testToken+"\n")
	opts.AllowedHosts = []string{"mcp.korral.example"}
	r := start(t, opts)
	mcpURL := r.base + "/mcp"
	bearer := "Bearer " + testToken

	const challenge, invalid = `Bearer realm="storelink-mcp"`, `Bearer realm="storelink-mcp", error="invalid_token"`
	for name, tc := range map[string]struct {
		hdr       map[string]string
		want      int
		challenge string // WWW-Authenticate of a 401 or a 200
	}{
		"no token":                    {map[string]string{}, http.StatusUnauthorized, challenge},
		"wrong token":                 {map[string]string{"Authorization": "Bearer " + otherToken}, http.StatusUnauthorized, invalid},
		"not bearer":                  {map[string]string{"Authorization": "Basic " + testToken}, http.StatusUnauthorized, invalid},
		"foreign host":                {map[string]string{"Authorization": bearer, "Host": "evil.example.com"}, http.StatusMisdirectedRequest, ""},
		"foreign origin":              {map[string]string{"Authorization": bearer, "Origin": "http://evil.example.com"}, http.StatusForbidden, ""},
		"null origin":                 {map[string]string{"Authorization": bearer, "Origin": "null"}, http.StatusForbidden, ""},
		"foreign host without token":  {map[string]string{"Host": "evil.example.com"}, http.StatusMisdirectedRequest, ""},
		"loopback origin":             {map[string]string{"Authorization": bearer, "Origin": "http://localhost:6274"}, http.StatusOK, ""},
		"allowed host name":           {map[string]string{"Authorization": bearer, "Host": "mcp.korral.example:443"}, http.StatusOK, ""},
		"allowed host name uppercase": {map[string]string{"Authorization": bearer, "Host": "MCP.Korral.Example"}, http.StatusOK, ""},
		"token":                       {map[string]string{"Authorization": bearer}, http.StatusOK, ""},
	} {
		t.Run(name, func(t *testing.T) {
			resp, body := mcptest.Post(t, mcpURL, initBody, tc.hdr)
			if resp.StatusCode != tc.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tc.want, body)
			}
			if got := resp.Header.Get("WWW-Authenticate"); (tc.want == http.StatusUnauthorized || tc.want == http.StatusOK) && got != tc.challenge {
				t.Errorf("WWW-Authenticate %q, want %q", got, tc.challenge)
			}
		})
	}

	t.Run("oversized body", func(t *testing.T) {
		big := `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxBodyBytes) + `"}}`
		if resp, body := mcptest.Post(t, mcpURL, big, map[string]string{"Authorization": bearer}); resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("status %d: %s", resp.StatusCode, body)
		}
	})
	t.Run("other paths", func(t *testing.T) {
		if resp, _ := mcptest.Post(t, r.base+"/mcp/extra", initBody, map[string]string{"Authorization": bearer}); resp.StatusCode != http.StatusNotFound {
			t.Fatalf("status %d", resp.StatusCode)
		}
	})
	for _, secret := range []string{testToken, otherToken} {
		if strings.Contains(logs.String(), secret) {
			t.Fatal("a token reached the log")
		}
	}
	if n := countLines(logs.String(), "auth.denied"); n != 3 {
		t.Fatalf("%d auth.denied lines, want 3", n)
	}
	if countLines(logs.String(), "http.host_refused") != 2 || countLines(logs.String(), "http.origin_refused") != 2 {
		t.Fatalf("host and origin refusals not logged:\n%s", logs.String())
	}
}

func TestWithoutTokensTheEndpointIsOpen(t *testing.T) {
	opts, _ := testOptions(newGate())
	r := start(t, opts)
	if resp, body := mcptest.Post(t, r.base+"/mcp", initBody, nil); resp.StatusCode != http.StatusOK || resp.Header.Get("WWW-Authenticate") != "" {
		t.Fatalf("status %d, WWW-Authenticate %q: %s", resp.StatusCode, resp.Header.Get("WWW-Authenticate"), body)
	}
	// The rebinding guard holds without tokens too.
	if resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, map[string]string{"Host": "evil.example.com"}); resp.StatusCode != http.StatusMisdirectedRequest {
		t.Fatalf("foreign host: %d", resp.StatusCode)
	}
}

func TestHostGuard(t *testing.T) {
	g := newHostGuard("10.0.0.5", []string{"mcp.korral.example"})
	for host, want := range map[string]bool{
		"127.0.0.1:8080": true, "localhost": true, "LOCALHOST:1": true, "[::1]:80": true, "127.9.9.9": true,
		"10.0.0.5:8080": true, "mcp.korral.example": true, "mcp.korral.example.:443": true,
		"evil.example.com": false, "10.0.0.6:8080": false, "mcp.korral.example.evil.com": false,
		"localhost.evil.com": false, "": false, "0.0.0.0:8080": false,
	} {
		if got := g.ok(host); got != want {
			t.Errorf("ok(%q) = %v, want %v", host, got, want)
		}
	}
	if newHostGuard("0.0.0.0", nil).ok("0.0.0.0") {
		t.Error("the wildcard address became an accepted host name")
	}
	for host, want := range map[string][2]bool{
		"localhost": {true, false}, "127.0.0.1": {true, false}, "[::1]": {true, false},
		"": {false, true}, "0.0.0.0": {false, true}, "[::]": {false, true},
		"10.0.0.5": {false, false}, "mcp.korral.example": {false, false},
	} {
		if IsLoopbackHost(host) != want[0] || IsWildcardHost(host) != want[1] {
			t.Errorf("%q: loopback %v, wildcard %v; want %v", host, IsLoopbackHost(host), IsWildcardHost(host), want)
		}
	}
}

// The hook gets each POST's request before the SDK answers, even with
// params the SDK refuses, with the token label and session id.
func TestInspectSeesEveryRequestWithItsCaller(t *testing.T) {
	type seen struct{ method, params, label, session string }
	var mu sync.Mutex
	var got []seen
	opts, _ := testOptions(newGate())
	opts.Tokens = tokenFile(t, "dairy-agent "+testToken+"\n")
	opts.Inspect = func(_ context.Context, req *jsonrpc.Request, label, sessionID string) {
		mu.Lock()
		defer mu.Unlock()
		got = append(got, seen{req.Method, string(req.Params), label, sessionID})
	}
	r := start(t, opts)
	auth := map[string]string{"Authorization": "Bearer " + testToken}
	resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, auth)
	session := resp.Header.Get("Mcp-Session-Id")
	if resp.StatusCode != http.StatusOK || session == "" {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	hdr := map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Session-Id": session, "Mcp-Protocol-Version": "2025-06-18"}
	mcptest.Post(t, r.base+"/mcp", `{"jsonrpc":"2.0","method":"notifications/initialized"}`, hdr)
	bad := `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":"not an object"}`
	if resp, body := mcptest.Post(t, r.base+"/mcp", bad, hdr); !strings.Contains(body, `"id":7`) {
		t.Fatalf("the SDK did not answer the refused call: %d %s", resp.StatusCode, body)
	}
	// A caller without a token is refused before anything reads its body.
	mcptest.Post(t, r.base+"/mcp", bad, nil)

	mu.Lock()
	defer mu.Unlock()
	want := []seen{
		{"initialize", "", "dairy-agent", ""},
		{"notifications/initialized", "", "dairy-agent", session},
		{"tools/call", `"not an object"`, "dairy-agent", session},
	}
	if len(got) != len(want) {
		t.Fatalf("Inspect saw %+v, want %d requests", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if w.params == "" {
			g.params = ""
		}
		if g != w {
			t.Errorf("request %d: %+v, want %+v", i, g, w)
		}
	}
}
