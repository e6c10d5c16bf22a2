package cli

import (
	"context"
	"io"
	"net/http/httptest"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/app/apptest"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
)

const (
	testToken = "test-token-0123456789abcdefghijklmnop"
	initBody  = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
)

// testEnv points at upstream with one store key and a private state database.
func testEnv(t *testing.T, upstream string, vars map[string]string) (Env, *mcptest.SyncBuffer) {
	t.Helper()
	all := apptest.Vars(t, upstream, vars)
	stderr := &mcptest.SyncBuffer{}
	return Env{
		Getenv:   func(k string) string { return all[k] },
		ReadFile: os.ReadFile,
		Stdin:    strings.NewReader(""),
		Stdout:   io.Discard,
		Stderr:   stderr,
	}, stderr
}

// failingUpstream answers every request with 503 and counts them.
func failingUpstream(t *testing.T) (*httptest.Server, *int64) { return apptest.FailingUpstream(t) }

func writeTokens(t *testing.T, content string) string { return apptest.WriteFile(t, content) }

// running is a `serve` run in this process.
type running struct {
	base   string // http://127.0.0.1:PORT
	stderr *mcptest.SyncBuffer
	env    Env
	cancel context.CancelFunc
	done   chan error
}

// startServe runs `serve` until the test ends and waits for its address.
func startServe(t *testing.T, env Env, stderr *mcptest.SyncBuffer, args ...string) *running {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	r := &running{stderr: stderr, env: env, cancel: cancel, done: make(chan error, 1)}
	go func() { r.done <- Run(ctx, append([]string{"serve", "--http", "127.0.0.1:0"}, args...), env) }()
	t.Cleanup(func() { r.stop(t) })
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range logLines(stderr.String()) {
			if l["msg"] == "http.listening" {
				r.base = "http://" + l["addr"].(string)
				return r
			}
		}
		select {
		case err := <-r.done:
			t.Fatalf("serve ended before listening: %v\n%s", err, stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not listen:\n%s", stderr.String())
	return nil
}

func (r *running) stop(t *testing.T) {
	r.cancel()
	select {
	case err, ok := <-r.done:
		if ok && err != nil {
			t.Errorf("serve: %v", err)
		}
		close(r.done)
	case <-time.After(30 * time.Second):
		t.Error("serve did not stop")
	}
}

func logLines(s string) []map[string]any { return mcptest.LogLines(s) }

// post sends body to /mcp with the given headers and returns the status.
func post(t *testing.T, url, body string, hdr map[string]string) (int, string) {
	t.Helper()
	resp, b := mcptest.Post(t, url, body, hdr)
	return resp.StatusCode, b
}

// The environment variables of the HTTP transport, as the tests set them.
const (
	envTokensFile  = "MCP_AUTH_TOKENS_FILE"
	envInsecure    = "MCP_HTTP_INSECURE"
	envOAuthIssuer = "OAUTH_ISSUER"
)
