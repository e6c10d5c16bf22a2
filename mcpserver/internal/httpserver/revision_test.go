package httpserver

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestRequestsGoToTheirRevisionsHandler: 2026-07-28 requests (by header, by
// _meta outside a session) and discover probes are the stateless handler's;
// everything else, 2025-11-25 sessions and their initialize included, the
// stateful one's, and the body is still there for the handler to read.
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
