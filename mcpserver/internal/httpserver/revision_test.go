package httpserver

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/mcptest"
)

// 2026-07-28 requests (by header, or by _meta outside a session) and
// discover probes go to the stateless handler, everything else to the
// stateful one, with the body still readable.
func TestRequestsGoToTheirRevisionsHandler(t *testing.T) {
	const meta = `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}`
	for name, c := range map[string]struct {
		method, body string
		hdr          map[string]string
		stateless    bool
	}{
		"2026 header":                {"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2026-07-28"}, true},
		"2026 header on a GET":       {"GET", "", map[string]string{"MCP-Protocol-Version": "2026-07-28"}, true},
		"2026 only in _meta":         {"POST", meta, nil, true},
		"discover without a header":  {"POST", `{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{}}`, nil, true},
		"initialize of 2025-11-25":   {"POST", `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25"}}`, nil, false},
		"a 2025-11-25 session":       {"POST", meta, map[string]string{"Mcp-Session-Id": "S1", "MCP-Protocol-Version": "2025-11-25"}, false},
		"2025-11-25 header":          {"POST", `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`, map[string]string{"MCP-Protocol-Version": "2025-11-25"}, false},
		"a batch":                    {"POST", `[{"jsonrpc":"2.0","id":1,"method":"ping"}]`, nil, false},
		"not JSON":                   {"POST", `{`, nil, false},
		"a GET stream of a session":  {"GET", "", map[string]string{"Mcp-Session-Id": "S1"}, false},
		"a DELETE of a session":      {"DELETE", "", map[string]string{"Mcp-Session-Id": "S1"}, false},
		"_meta version not a string": {"POST", `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":7}}}`, nil, false},
	} {
		t.Run(name, func(t *testing.T) {
			var got string
			var body string
			h := byRevision(
				http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = "stateful"; body = read(r) }),
				http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = "stateless"; body = read(r) }))
			r := httptest.NewRequest(c.method, "/mcp", strings.NewReader(c.body))
			for k, v := range c.hdr {
				r.Header.Set(k, v)
			}
			h.ServeHTTP(httptest.NewRecorder(), r)
			want := map[bool]string{true: "stateless", false: "stateful"}[c.stateless]
			if got != want {
				t.Errorf("went to %s, want %s", got, want)
			}
			if body != c.body {
				t.Errorf("the handler read %q, want the whole body %q", body, c.body)
			}
		})
	}
}

func read(r *http.Request) string {
	var b strings.Builder
	buf := make([]byte, 512)
	for {
		n, err := r.Body.Read(buf)
		b.Write(buf[:n])
		if err != nil {
			return b.String()
		}
	}
}

// post2026 is a 2026-07-28 request of method, with name in Mcp-Name.
func post2026(t *testing.T, url, token string, id int, method, name, params string) (*http.Response, string) {
	t.Helper()
	meta := `"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	if params == "" {
		params = "{" + meta + "}"
	} else {
		params = "{" + meta + "," + params + "}"
	}
	hdr := map[string]string{"Authorization": "Bearer " + token, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		hdr["Mcp-Name"] = name
	}
	return mcptest.Post(t, url, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":%q,"params":%s}`, id, method, params), hdr)
}

// A 2026-07-28 request holds a place under the session caps while it runs,
// so a token at its cap is refused in either revision, and the place is
// freed once the request is answered.
func TestStatelessRequestsCountUnderTheCaps(t *testing.T) {
	g := newGate()
	opts, logs := testOptions(g)
	opts.Tokens = tokenFile(t, "agent "+testToken+"\nother "+otherToken+"\n")
	opts.MaxSessions, opts.MaxSessionsPerToken = 2, 1
	r := start(t, opts)
	url := r.base + "/mcp"

	// The held call reports its status, or 0 when the request failed.
	held := make(chan int, 1)
	go func() {
		req, _ := http.NewRequest(http.MethodPost, url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{`+
			`"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"wait","arguments":{}}}`))
		for k, v := range map[string]string{"Authorization": "Bearer " + testToken, "Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": "tools/call",
			"Mcp-Name": "wait", "Content-Type": "application/json", "Accept": "application/json, text/event-stream"} {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			held <- 0
			return
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		held <- resp.StatusCode
	}()
	select {
	case <-g.entered:
	case <-time.After(30 * time.Second):
		t.Fatal("the held call never started")
	}

	resp, body := post2026(t, url, testToken, 5, "tools/list", "", "")
	var refusal struct {
		ID    int `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if resp.StatusCode != http.StatusOK || json.Unmarshal([]byte(sseData(body)), &refusal) != nil || refusal.ID != 5 ||
		refusal.Error.Code != codeOverCap || !strings.Contains(refusal.Error.Message, "MCP_HTTP_MAX_SESSIONS_PER_TOKEN") {
		t.Fatalf("a second request of a token at its cap: %d %s", resp.StatusCode, body)
	}
	if resp, _ := mcptest.Post(t, url, initBody, map[string]string{"Authorization": "Bearer " + testToken}); resp.StatusCode != http.StatusServiceUnavailable {
		t.Fatalf("a 2025-11-25 session of a token whose 2026-07-28 request holds its place: %d", resp.StatusCode)
	}
	if resp, body := post2026(t, url, otherToken, 6, "tools/list", "", ""); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("another token: %d %s", resp.StatusCode, body)
	}

	close(g.open)
	if code := <-held; code != http.StatusOK {
		t.Fatalf("the held call: %d", code)
	}
	if resp, body := post2026(t, url, testToken, 7, "tools/list", "", ""); resp.StatusCode != http.StatusOK || !strings.Contains(body, `"tools"`) {
		t.Fatalf("after the held call was answered: %d %s", resp.StatusCode, body)
	}
	if countLines(logs.String(), "http.request_refused") != 1 {
		t.Fatalf("want one http.request_refused line:\n%s", logs.String())
	}
}

// sseData is the data of an SSE answer's last event, or the body itself
// when it is plain JSON.
func sseData(body string) string {
	out := body
	for _, line := range strings.Split(body, "\n") {
		if d, ok := strings.CutPrefix(line, "data: "); ok {
			out = d
		}
	}
	return out
}
