package e2e_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// rawStdio is the real binary over stdio with the test writing raw bytes to its stdin.
type rawStdio struct{ *lineProc }

func startRawStdio(t *testing.T, env []string) *rawStdio {
	t.Helper()
	cmd := exec.Command(e2etest.Binary(t), "stdio")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	return &rawStdio{startLineProc(t, cmd)}
}

func (p *rawStdio) send(frame string) {
	p.t.Helper()
	if _, err := io.WriteString(p.stdin, frame); err != nil {
		p.t.Fatalf("write to stdin: %v (the server has gone)\nstderr:\n%s", err, p.stderr.String())
	}
}

// next returns the next line the server wrote, failing if none comes.
func (p *rawStdio) next() map[string]any {
	p.t.Helper()
	var m map[string]any
	p.read(&m, 20*time.Second)
	return m
}

func (p *rawStdio) initialize() { p.initializeAs("raw-host") }

// initializeAs performs the handshake with name as the client's name.
func (p *rawStdio) initializeAs(name string) {
	p.t.Helper()
	b, _ := json.Marshal(name)
	p.send(`{"jsonrpc":"2.0","id":"init","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":` + string(b) + `,"version":"1"}}}` + "\n")
	if m := p.next(); m["id"] != "init" || m["result"] == nil {
		p.t.Fatalf("initialize: %v", m)
	}
	p.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")
}

// TestStdioSurvivesMalformedFrames: each malformed frame gets the right
// JSON-RPC error, and the next request is served.
func TestStdioSurvivesMalformedFrames(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := startRawStdio(t, w.Env())
	p.initialize()
	huge := `{"jsonrpc":"2.0","id":99,"method":"ping","params":{"pad":"` + strings.Repeat("x", 17<<20) + `"}}`
	for i, tc := range []struct {
		name, frame string
		code        float64
		id          any // the id the error answer must carry
	}{
		{"invalid JSON", `{not json`, -32700, nil},
		{"truncated line", `{"jsonrpc":"2.0","id":5,"method":"tools/li`, -32700, nil},
		{"jsonrpc 1.0", `{"jsonrpc":"1.0","id":6,"method":"ping"}`, -32600, float64(6)},
		{"missing jsonrpc", `{"id":"seven","method":"ping"}`, -32600, "seven"},
		{"empty array", `[]`, -32600, nil},
		{"empty object", `{}`, -32600, nil},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"ping"}`, -32600, nil},
		{"NUL bytes", "\x00\x00{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"ping\"}", -32700, nil},
		{"two messages on one line", `{"jsonrpc":"2.0","id":9,"method":"ping"}{"jsonrpc":"2.0","id":10,"method":"ping"}`, -32700, nil},
		{"line over 16 MB", huge, -32600, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p.t = t
			next := fmt.Sprintf("after-%d", i)
			p.send(tc.frame + "\n" + `{"jsonrpc":"2.0","id":"` + next + `","method":"ping"}` + "\n")
			ans := p.next()
			e, _ := ans["error"].(map[string]any)
			if e == nil || e["code"] != tc.code || ans["id"] != tc.id || ans["jsonrpc"] != "2.0" {
				t.Fatalf("answer %v, want error %v with id %v", ans, tc.code, tc.id)
			}
			if msg, _ := e["message"].(string); msg == "" {
				t.Fatal("error without a message")
			}
			if ans := p.next(); ans["id"] != next || ans["result"] == nil {
				t.Fatalf("the request after the frame: %v", ans)
			}
		})
	}
	p.t = t
	// And the tools still work.
	p.send(`{"jsonrpc":"2.0","id":"call","method":"tools/call","params":{"name":"korral_list_authorized_stores","arguments":{}}}` + "\n")
	if ans := p.next(); ans["id"] != "call" || ans["result"].(map[string]any)["isError"] == true {
		t.Fatalf("tool call after the frames: %v", ans)
	}
	// stderr is copied by its own goroutine: wait for it, with a deadline.
	if n := p.waitLogged("stdio.rejected_frame", 10); n != 10 {
		t.Fatalf("%d rejected frames logged, want 10", n)
	}
}

// TestStdioLineLimitIsConfigurable: a line over STDIO_MAX_LINE_BYTES is
// refused naming the limit; one within it is served.
func TestStdioLineLimitIsConfigurable(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := startRawStdio(t, w.Env("STDIO_MAX_LINE_BYTES=2048"))
	p.initialize()
	pad := func(n int) string {
		return `{"jsonrpc":"2.0","id":1,"method":"ping","params":{"pad":"` + strings.Repeat("p", n) + `"}}`
	}
	p.send(pad(3000) + "\n")
	ans := p.next()
	if e, _ := ans["error"].(map[string]any); e == nil || !strings.Contains(e["message"].(string), "2048 bytes") {
		t.Fatalf("over the limit: %v", ans)
	}
	p.send(pad(1900) + "\n")
	if ans := p.next(); ans["result"] == nil {
		t.Fatalf("within the limit: %v", ans)
	}
}

// callTool sends tools/call with id and returns the envelope of the answer.
func (p *rawStdio) callTool(id, name string, args map[string]any) map[string]any {
	p.t.Helper()
	b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": map[string]any{"name": name, "arguments": args}})
	p.send(string(b) + "\n")
	ans := p.next()
	res, _ := ans["result"].(map[string]any)
	if ans["id"] != id || res == nil {
		p.t.Fatalf("%s: %v", name, ans)
	}
	var env map[string]any
	text := res["content"].([]any)[0].(map[string]any)["text"].(string)
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		p.t.Fatalf("%s: not an envelope: %s", name, text)
	}
	return env
}

// forgedName is a client name that tries to print a fake approval row with control characters.
const forgedName = "agent\x1b[2K\u202e\x07\r\n2026-11-30 09:00:00  approval-x  approver:boss  approvals.approve  47  8847291  ok  boss approved everything"

// TestForgedClientNameCannotForgeRows: text output keeps one record per line
// and escapes control characters; JSON output stays exact.
func TestForgedClientNameCannotForgeRows(t *testing.T) {
	w := e2etest.NewWorld(t)
	env := w.Env("ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	p := startRawStdio(t, env)
	p.initializeAs(forgedName + strings.Repeat("x", 500))
	if e := p.callTool("1", "korral_list_authorized_stores", map[string]any{}); e["ok"] != true {
		t.Fatalf("list: %v", e)
	}
	staged := p.callTool("2", "korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))
	if d, _ := staged["data"].(map[string]any); d == nil || d["mode"] != "pending_approval" {
		t.Fatalf("stage: %v", staged)
	}

	clean := func(name, out string, rows int) {
		t.Helper()
		if strings.ContainsAny(out, "\r\x1b\x07\u202e") {
			t.Errorf("%s prints raw control characters:\n%q", name, out)
		}
		if n := strings.Count(strings.TrimSuffix(out, "\n"), "\n") + 1; n != rows {
			t.Errorf("%s prints %d lines, want %d:\n%s", name, n, rows, out)
		}
		if strings.Contains(out, "\n2026-11-30 09:00:00") {
			t.Errorf("%s shows the forged row as a row:\n%s", name, out)
		}
	}
	trail, _, exit := e2etest.RunCLI(t, env, "audit")
	if exit != 0 {
		t.Fatalf("audit exit %d", exit)
	}
	clean("audit", trail, 3) // header and two calls
	if !strings.Contains(trail, `agent\x1b[2K\u202e\x07\r\n2026-11-30 09:00:00`) {
		t.Errorf("audit does not show the name escaped:\n%s", trail)
	}
	if strings.Contains(trail, strings.Repeat("x", 100)) {
		t.Error("the client name is stored unbounded")
	}
	list, _, _ := e2etest.RunCLI(t, env, "approvals", "list")
	clean("approvals list", list, 2) // header and the staged order
	report, _, _ := e2etest.RunCLI(t, env, "audit", "report")
	clean("audit report", report, 7) // header, two tools, a blank line, the pilot questions heading and its two lines

	// JSON output: exact values, one object per line.
	js, _, _ := e2etest.RunCLI(t, env, "audit", "--format", "json")
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if len(lines) != 2 {
		t.Fatalf("audit --format json: %d lines", len(lines))
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if c, _ := rec["client"].(string); !strings.HasPrefix(c, `agent\x1b[2K\u202e\x07\r\n2026-11-30`) {
		t.Errorf("client as stored: %q", c)
	}
}

// TestCallsRefusedBeforeAHandlerAreAudited: a call to an unknown tool is
// still audited with the reason.
func TestCallsRefusedBeforeAHandlerAreAudited(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := startRawStdio(t, w.Env())
	p.initialize()
	p.send(`{"jsonrpc":"2.0","id":"u","method":"tools/call","params":{"name":"korral_delete_everything\n2026-11-30 fake","arguments":{}}}` + "\n")
	if ans := p.next(); ans["id"] != "u" || ans["error"] == nil {
		t.Fatalf("unknown tool: %v", ans)
	}
	// Non-object arguments reach the tool's wrapper, which refuses and audits them.
	p.send(`{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{"name":"korral_list_authorized_stores","arguments":[1]}}` + "\n")
	if ans := p.next(); ans["id"] != "a" || ans["result"].(map[string]any)["isError"] != true {
		t.Fatalf("arguments not an object: %v", ans)
	}
	if e := p.callTool("ok", "korral_list_authorized_stores", map[string]any{}); e["ok"] != true {
		t.Fatalf("list: %v", e)
	}
	js, _, exit := e2etest.RunCLI(t, w.Env(), "audit", "--format", "json")
	if exit != 0 {
		t.Fatalf("audit exit %d", exit)
	}
	lines := strings.Split(strings.TrimSpace(js), "\n")
	if len(lines) != 3 {
		t.Fatalf("audit holds %d rows, want the two refused calls and the real one:\n%s", len(lines), js)
	}
	var rec map[string]any
	if err := json.Unmarshal([]byte(lines[0]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["tool"] != `korral_delete_everything\n2026-11-30 fake` || rec["outcome"] != "error" || rec["error_code"] != "INVALID_ARGUMENT" ||
		rec["client"] != "raw-host" || !strings.Contains(rec["summary"].(string), "unknown tool") || rec["session"] == "" {
		t.Fatalf("audit row of the refused call: %v", rec)
	}
	if err := json.Unmarshal([]byte(lines[1]), &rec); err != nil {
		t.Fatal(err)
	}
	if rec["tool"] != "korral_list_authorized_stores" || rec["error_code"] != "INVALID_ARGUMENT" {
		t.Fatalf("audit row of the call with bad arguments: %v", rec)
	}
	if n := p.waitLogged("tool.rejected", 1); n != 1 {
		t.Fatalf("%d tool.rejected log lines, want 1", n)
	}
}

// waitLogged waits (at most 10 s) until stderr holds want lines with msg, and returns the count.
func (p *rawStdio) waitLogged(msg string, want int) int {
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := len(p.linesOf(msg))
		if n >= want || time.Now().After(deadline) {
			return n
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// linesOf returns the server's log lines with msg.
func (p *rawStdio) linesOf(msg string) []map[string]any {
	var out []map[string]any
	for _, l := range strings.Split(p.stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			out = append(out, m)
		}
	}
	return out
}

// adminWorld is newWorld's world with the mock's admin endpoint on, so faults are set over HTTP.
func adminWorld(t *testing.T) (*e2etest.World, func(method, path, body string)) {
	t.Helper()
	const token = "admin-token-0123456789abcdefghijklmn"
	w := e2etest.NewWorld(t, e2etest.WithAdminToken(token))
	r := w.Mock
	admin := func(method, path, body string) {
		t.Helper()
		req, err := http.NewRequest(method, r.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode >= 300 {
			t.Fatalf("%s %s: %d", method, path, resp.StatusCode)
		}
	}
	return w, admin
}

// TestFirstRiskCheckAfterRecoverySucceeds: after the breaker opens and
// StoreLink recovers, the first risk check after the cool-down succeeds.
func TestFirstRiskCheckAfterRecoverySucceeds(t *testing.T) {
	w, admin := adminWorld(t)
	p := e2etest.StartServer(t, w.Env("BREAKER_FAILURES=2", "BREAKER_COOLDOWN=1s"))
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	admin(http.MethodPut, "/_admin/faults", `[{"kind":"status","status":503}]`)
	for i := 0; len(p.LinesWhere("breaker.state", "to", "open")) == 0; i++ {
		if i == 5 {
			t.Fatal("the breaker did not open")
		}
		if c := e2etest.Code(p.Call("korral_check_stock_risk", args)); c != "UPSTREAM_UNAVAILABLE" {
			t.Fatalf("while StoreLink fails: %s", c)
		}
	}
	admin(http.MethodDelete, "/_admin/faults", "")
	before := w.Requests(allRequests)
	time.Sleep(1500 * time.Millisecond) // past the configured 1s cool-down
	env := p.Call("korral_check_stock_risk", args)
	if env["ok"] != true {
		t.Fatalf("first risk check after the cool-down: %v", env)
	}
	if n := w.Requests(allRequests) - before; n < 2 {
		t.Fatalf("%d requests for a risk check; the test needs a fan-out", n)
	}
}

// TestHTTPSessionCaps: beyond a token's or the global session cap, 503 with
// Retry-After; open sessions keep working; closing one frees a place.
func TestHTTPSessionCaps(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy "+e2etest.TokenDairy+"\nbrno "+e2etest.TokenBrno+"\nthird "+e2etest.TokenWrong+"\n", time.Now().Add(-time.Hour))
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens, "MCP_HTTP_MAX_SESSIONS=2", "MCP_HTTP_MAX_SESSIONS_PER_TOKEN=1"))
	refused := func(token, why string) {
		t.Helper()
		resp := postRPC(t, p.Base+"/mcp", probeInitializeBody, withToken(token))
		if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("%s: status %d, Retry-After %q; want 503 with Retry-After", why, resp.StatusCode, resp.Header.Get("Retry-After"))
		}
	}
	// Sessions exist only in 2025-11-25, so ask for it.
	dairy := p.ConnectAt(e2etest.TokenDairy, "agent", "2025-11-25")
	refused(e2etest.TokenDairy, "a second session of one token")
	brno := p.ConnectAt(e2etest.TokenBrno, "agent", "2025-11-25")
	refused(e2etest.TokenWrong, "a session beyond the global cap")
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	for _, cs := range []*mcp.ClientSession{dairy, brno} {
		if env, err := e2etest.CallHTTP(t, cs, "korral_list_recent_sales", args); err != nil || env["ok"] != true {
			t.Fatalf("an open session at the cap: %v %v", env, err)
		}
	}
	// A 2026-07-28 request holds a place while it runs, so it is refused at
	// the cap too, with a JSON-RPC error naming the cap.
	if _, r := post2026(t, p.Base+"/mcp", "tools/list", "", nil, withToken(e2etest.TokenDairy)); !strings.Contains(fmt.Sprint(r["error"]), "(MCP_HTTP_MAX_SESSIONS") {
		t.Fatalf("a 2026-07-28 request of a token at its cap: %v", r)
	}
	// Closing a session (DELETE) frees its place, for either revision.
	if err := dairy.Close(); err != nil {
		t.Fatal(err)
	}
	stateless := p.ConnectAt(e2etest.TokenDairy, "agent", "")
	if env, err := e2etest.CallHTTP(t, stateless, "korral_list_recent_sales", args); err != nil || env["ok"] != true {
		t.Fatalf("a 2026-07-28 call after the session closed: %v %v", env, err)
	}
	if stateless.ID() != "" || dairy.ID() == "" {
		t.Fatalf("session ids: 2026-07-28 %q, 2025-11-25 %q", stateless.ID(), dairy.ID())
	}
	third := p.ConnectAt(e2etest.TokenWrong, "agent", "2025-11-25")
	if env, err := e2etest.CallHTTP(t, third, "korral_list_recent_sales", args); err != nil || env["ok"] != true {
		t.Fatalf("after a session closed: %v %v", env, err)
	}
	if !p.Logged("http.session_refused") {
		t.Fatal("refusals were not logged")
	}
}

// TestHTTP401NamesTheBearerRealm: every 401 carries RFC 6750's challenge.
func TestHTTP401NamesTheBearerRealm(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy "+e2etest.TokenDairy+"\n", time.Now().Add(-time.Hour))
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens))
	if resp := postRPC(t, p.Base+"/mcp", probeInitializeBody); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer realm="storelink-mcp"` {
		t.Fatalf("no token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
	if resp := postRPC(t, p.Base+"/mcp", probeInitializeBody, withToken(e2etest.TokenWrong)); resp.StatusCode != http.StatusUnauthorized || resp.Header.Get("WWW-Authenticate") != `Bearer realm="storelink-mcp", error="invalid_token"` {
		t.Fatalf("wrong token: %d %q", resp.StatusCode, resp.Header.Get("WWW-Authenticate"))
	}
}

// TestHTTPTokenRevokedBySameSizeRewrite: a same-size in-place rewrite of the
// token file with the old modification time still takes effect.
func TestHTTPTokenRevokedBySameSizeRewrite(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	old := time.Now().Add(-time.Hour)
	e2etest.WriteTokenFile(t, tokens, "agent "+e2etest.TokenDairy+"\n", old)
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens), "--stateless")
	if got := postRPC(t, p.Base+"/mcp", toolCallBody, withHeaders(map[string]string{"Authorization": "Bearer " + e2etest.TokenDairy})).StatusCode; got != http.StatusOK {
		t.Fatalf("before the rewrite: %d", got)
	}
	if len(e2etest.TokenDairy) != len(e2etest.TokenBrno) {
		t.Fatal("the test needs two tokens of one length")
	}
	if err := os.WriteFile(tokens, []byte("agent "+e2etest.TokenBrno+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tokens, old, old); err != nil {
		t.Fatal(err)
	}
	if got := postRPC(t, p.Base+"/mcp", toolCallBody, withHeaders(map[string]string{"Authorization": "Bearer " + e2etest.TokenDairy})).StatusCode; got != http.StatusUnauthorized {
		t.Fatalf("revoked token after a same-size, same-mtime rewrite: status %d", got)
	}
	if got := postRPC(t, p.Base+"/mcp", toolCallBody, withHeaders(map[string]string{"Authorization": "Bearer " + e2etest.TokenBrno})).StatusCode; got != http.StatusOK {
		t.Fatalf("new token: %d", got)
	}
}

// undecodableCalls are tools/call requests the SDK cannot decode, with the audit summary each must get.
var undecodableCalls = []struct{ params, tool, reason string }{
	{`{"name":5,"arguments":{}}`, "-", `"name" is not a string`},
	{`"x"`, "-", `"params" is not a JSON object`},
	{`{"name":"korral_list_authorized_stores","_meta":[1]}`, "korral_list_authorized_stores", `"params" do not decode`},
}

// checkUndecodableRows checks the audit rows of undecodableCalls, in order.
func checkUndecodableRows(t *testing.T, rows []map[string]any, client, session string) {
	t.Helper()
	for i, c := range undecodableCalls {
		r := rows[i]
		if r["tool"] != c.tool || r["outcome"] != "error" || r["error_code"] != "INVALID_ARGUMENT" ||
			!strings.Contains(r["summary"].(string), c.reason) || r["client"] != client || r["session"] != session {
			t.Errorf("audit row of params %s: %v", c.params, r)
		}
	}
}

// TestStdioUndecodableParamsAreAudited: a tools/call the SDK refuses before
// any middleware is still audited, answered with the SDK's error, and the
// server serves on.
func TestStdioUndecodableParamsAreAudited(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := startRawStdio(t, w.Env())
	p.initializeAs("raw-host")
	for i, c := range undecodableCalls {
		id := fmt.Sprintf("bad%d", i)
		p.send(`{"jsonrpc":"2.0","id":"` + id + `","method":"tools/call","params":` + c.params + `}` + "\n")
		if ans := p.next(); ans["id"] != id || ans["error"] == nil {
			t.Fatalf("params %s: %v", c.params, ans)
		}
	}
	// A notification is no call: nothing answers it, nothing is recorded.
	p.send(`{"jsonrpc":"2.0","method":"tools/call","params":"x"}` + "\n")
	if e := p.callTool("ok", "korral_list_authorized_stores", map[string]any{}); e["ok"] != true {
		t.Fatalf("list after the refused calls: %v", e)
	}
	rows := auditRows(t, w)
	if len(rows) != len(undecodableCalls)+1 {
		t.Fatalf("audit holds %d rows, want the %d refused calls and the real one: %v", len(rows), len(undecodableCalls), rows)
	}
	session, _ := rows[len(rows)-1]["session"].(string)
	if !strings.HasPrefix(session, "stdio-") {
		t.Fatalf("session of the real call: %q", session)
	}
	checkUndecodableRows(t, rows, "raw-host", session)
	if n := p.waitLogged("tool.rejected", len(undecodableCalls)); n != len(undecodableCalls) {
		t.Fatalf("%d tool.rejected log lines, want %d", n, len(undecodableCalls))
	}
}

// TestHTTPUndecodableParamsAreAudited: the same over HTTP; the caller is the token's label.
func TestHTTPUndecodableParamsAreAudited(t *testing.T) {
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy "+e2etest.TokenDairy+"\n", time.Now().Add(-time.Hour))
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens))
	cs := p.Connect(e2etest.TokenDairy, "agent")
	for i, c := range undecodableCalls {
		body := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`, 100+i, c.params)
		a := postRPC(t, p.Base+"/mcp", body, withToken(e2etest.TokenDairy),
			withHeaders(map[string]string{"Mcp-Session-Id": cs.ID(), "Mcp-Protocol-Version": cs.InitializeResult().ProtocolVersion}))
		if !strings.Contains(a.Body, `"error"`) {
			t.Fatalf("params %s: status %d, answer %s", c.params, a.StatusCode, a.Body)
		}
	}
	if env, err := e2etest.CallHTTP(t, cs, "korral_list_authorized_stores", map[string]any{}); err != nil || env["ok"] != true {
		t.Fatalf("list after the refused calls: %v %v", env, err)
	}
	rows := auditRows(t, w)
	if len(rows) != len(undecodableCalls)+1 {
		t.Fatalf("audit holds %d rows, want the %d refused calls and the real one: %v", len(rows), len(undecodableCalls), rows)
	}
	checkUndecodableRows(t, rows, "token:dairy", cs.ID())
	if last := rows[len(rows)-1]; last["session"] != cs.ID() || !strings.HasPrefix(last["client"].(string), "token:dairy") {
		t.Fatalf("audit row of the real call: %v", last)
	}
}
