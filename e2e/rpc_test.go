package e2e_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Raw JSON-RPC over HTTP for what a well-behaved client never sends.

// toolCallBody is a tools/call any token may make.
const toolCallBody = `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"korral_check_stock_risk","arguments":{"sku":"8847291","store_id":"47"}}}`

// initializeBody opens a 2025-11-25 session.
const initializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}`

// probeInitializeBody opens a 2025-06-18 session.
const probeInitializeBody = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`

// rpcAnswer is what the server answered one POST.
type rpcAnswer struct {
	StatusCode int
	Header     http.Header
	Body       string // at most 1 MiB of it
}

// rpcOption shapes the request postRPC sends.
type rpcOption func(*http.Request)

// withToken sends "Authorization: Bearer token"; "" sends none.
func withToken(token string) rpcOption {
	return func(r *http.Request) {
		if token != "" {
			r.Header.Set("Authorization", "Bearer "+token)
		}
	}
}

// withHeaders sets each header; "Host" sets the request's host.
func withHeaders(hdr map[string]string) rpcOption {
	return func(r *http.Request) {
		for k, v := range hdr {
			if k == "Host" {
				r.Host = v
			} else {
				r.Header.Set(k, v)
			}
		}
	}
}

// withAuthorization sends exactly these Authorization values, one header line each.
func withAuthorization(values ...string) rpcOption {
	return func(r *http.Request) { r.Header["Authorization"] = values }
}

// withRevision sends an established session's MCP-Protocol-Version header.
func withRevision(revision string) rpcOption {
	return func(r *http.Request) { r.Header.Set("MCP-Protocol-Version", revision) }
}

// postRPC sends one JSON-RPC message to url, shaped by opts, and returns the answer.
func postRPC(t *testing.T, url, body string, opts ...rpcOption) rpcAnswer {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	for _, o := range opts {
		o(req)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	_, _ = io.Copy(io.Discard, resp.Body)
	return rpcAnswer{StatusCode: resp.StatusCode, Header: resp.Header, Body: string(b)}
}

// post2026 sends one 2026-07-28 request and returns the status and the JSON-RPC response.
func post2026(t *testing.T, url, method, name string, params map[string]any, opts ...rpcOption) (int, map[string]any) {
	t.Helper()
	if params == nil {
		params = map[string]any{}
	}
	meta := map[string]any{
		mcp.MetaKeyProtocolVersion:    "2026-07-28",
		mcp.MetaKeyClientInfo:         map[string]any{"name": "raw-2026", "version": "1"},
		mcp.MetaKeyClientCapabilities: map[string]any{},
	}
	// A caller's own _meta (a client's capabilities) takes precedence.
	if own, ok := params["_meta"].(map[string]any); ok {
		maps.Copy(meta, own)
	}
	params["_meta"] = meta
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": method, "params": params})
	headers := map[string]string{"Mcp-Protocol-Version": "2026-07-28", "Mcp-Method": method}
	if name != "" {
		headers["Mcp-Name"] = name
	}
	a := postRPC(t, url, string(body), append([]rpcOption{withHeaders(headers)}, opts...)...)
	// The answer is JSON, or the one event of an SSE stream.
	msg := []byte(a.Body)
	if strings.HasPrefix(a.Header.Get("Content-Type"), "text/event-stream") {
		sc := bufio.NewScanner(bytes.NewReader(msg))
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data:"); ok && strings.Contains(d, `"id"`) {
				msg = []byte(strings.TrimSpace(d))
			}
		}
	}
	var out map[string]any
	if err := json.Unmarshal(msg, &out); err != nil {
		t.Fatalf("%s: status %d, not JSON-RPC: %s", method, a.StatusCode, a.Body)
	}
	return a.StatusCode, out
}

// statusChallengeBody is the status, the WWW-Authenticate header and the body.
func (a rpcAnswer) statusChallengeBody() (int, string, string) {
	return a.StatusCode, a.Header.Get("WWW-Authenticate"), a.Body
}
