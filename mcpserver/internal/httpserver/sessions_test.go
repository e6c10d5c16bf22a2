package httpserver

// The session caps: per token and global, freed by DELETE or idleness, and
// absent in stateless mode.

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/mcptest"
)

// Beyond either cap a new session gets 503 with Retry-After; open sessions
// keep working; DELETE or idleness frees a place.
func TestSessionCaps(t *testing.T) {
	opts, logs := testOptions(newGate())
	opts.Tokens = tokenFile(t, "agent "+testToken+"\nother "+otherToken+"\n")
	opts.MaxSessions, opts.MaxSessionsPerToken, opts.SessionIdleTimeout = 3, 2, 2*time.Second
	r := start(t, opts)
	url := r.base + "/mcp"
	as := func(token string) map[string]string { return map[string]string{"Authorization": "Bearer " + token} }
	open := func(token string) *http.Response {
		t.Helper()
		resp, _ := mcptest.Post(t, url, initBody, as(token))
		return resp
	}
	refused := func(resp *http.Response, why string) {
		t.Helper()
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("%s: status %d, Retry-After %q; want 503 with Retry-After", why, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	var agent []string
	for range 2 {
		resp := open(testToken)
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") == "" {
			t.Fatalf("session %d: status %d", len(agent)+1, resp.StatusCode)
		}
		agent = append(agent, resp.Header.Get("Mcp-Session-Id"))
	}
	refused(open(testToken), "third session of one token")
	if resp := open(otherToken); resp.StatusCode != http.StatusOK {
		t.Fatalf("another token's first session: %d", resp.StatusCode)
	}
	refused(open(otherToken), "a session beyond the global cap")

	// An open session still works.
	ping := `{"jsonrpc":"2.0","id":2,"method":"ping"}`
	hdr := as(testToken)
	hdr["Mcp-Session-Id"] = agent[0]
	hdr["Mcp-Protocol-Version"] = "2025-06-18"
	if resp, _ := mcptest.Post(t, url, ping, hdr); resp.StatusCode != http.StatusOK {
		t.Fatalf("ping in an open session: %d", resp.StatusCode)
	}

	// DELETE frees a place.
	req, _ := http.NewRequest(http.MethodDelete, url, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusNoContent {
		t.Fatalf("DELETE: %v %v", resp, err)
	}
	resp.Body.Close()
	if resp := open(testToken); resp.StatusCode != http.StatusOK {
		t.Fatalf("after DELETE: %d", resp.StatusCode)
	}
	refused(open(testToken), "at the cap again")

	// Idle sessions are closed after the idle timeout; wait with a deadline.
	deadline := time.Now().Add(30 * time.Second)
	for {
		resp := open(testToken)
		if resp.StatusCode == http.StatusOK {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle sessions never freed their places")
		}
		time.Sleep(200 * time.Millisecond)
	}
	if n := countLines(logs.String(), "http.session_refused"); n < 3 {
		t.Fatalf("%d http.session_refused lines", n)
	}
	if !strings.Contains(logs.String(), "MCP_HTTP_MAX_SESSIONS_PER_TOKEN") {
		t.Fatalf("the refusal does not name the setting to raise:\n%s", logs.String())
	}
}

func TestStatelessHasNoSessionCap(t *testing.T) {
	opts, _ := testOptions(newGate())
	opts.Stateless, opts.MaxSessions, opts.MaxSessionsPerToken, opts.SessionIdleTimeout = true, 0, 0, 0
	r := start(t, opts)
	for i := range 3 {
		if resp, body := mcptest.Post(t, r.base+"/mcp", initBody, nil); resp.StatusCode != http.StatusOK || resp.Header.Get("Mcp-Session-Id") != "" {
			t.Fatalf("request %d: status %d, session %q: %s", i, resp.StatusCode, resp.Header.Get("Mcp-Session-Id"), body)
		}
	}
}
