package e2etest

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// HTTPProc is one `storelink-mcp serve --http` process.
type HTTPProc struct {
	T      *testing.T    // the test that started it
	Cmd    *exec.Cmd     // the process
	Stderr *SyncBuffer   // the server's log
	Base   string        // http://127.0.0.1:PORT
	Done   chan struct{} // closed when the process has exited
	Exit   error         // what Cmd.Wait returned, once Done is closed
}

// StartHTTP spawns `serve --http 127.0.0.1:0` with env (and only PATH from
// the test's environment) and waits for the address it logs.
func StartHTTP(t *testing.T, env []string, args ...string) *HTTPProc {
	t.Helper()
	cmd := exec.Command(Binary(t), append([]string{"serve", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	return LaunchHTTP(t, cmd)
}

// LaunchHTTP starts a prepared `serve --http` command and waits for the
// address it logs.
func LaunchHTTP(t *testing.T, cmd *exec.Cmd) *HTTPProc {
	t.Helper()
	p := &HTTPProc{T: t, Cmd: cmd, Stderr: &SyncBuffer{}, Done: make(chan struct{})}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { p.Exit = cmd.Wait(); close(p.Done) }()
	t.Cleanup(p.Stop)
	deadline := time.Now().Add(15 * time.Second)
	for time.Now().Before(deadline) {
		for _, l := range p.LogLines() {
			if l["msg"] == "http.listening" {
				p.Base = "http://" + l["addr"].(string)
				return p
			}
		}
		select {
		case <-p.Done:
			t.Fatalf("serve exited before listening: %v\n%s", p.Exit, p.Stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
	}
	t.Fatalf("serve did not report its address:\n%s", p.Stderr.String())
	return nil
}

// Stop sends SIGTERM, waits a bounded time, then kills by PID.
func (p *HTTPProc) Stop() {
	select {
	case <-p.Done:
		return
	default:
	}
	_ = p.Cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.Done:
	case <-time.After(30 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.Done
	}
}

// LogLines parses the server's stderr as JSON lines, skipping any other line.
func (p *HTTPProc) LogLines() []map[string]any {
	var out []map[string]any
	for _, line := range strings.Split(p.Stderr.String(), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(line), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}

// Logged reports whether the server logged a line with message msg.
func (p *HTTPProc) Logged(msg string) bool {
	for _, l := range p.LogLines() {
		if l["msg"] == msg {
			return true
		}
	}
	return false
}

// BearerTransport adds a bearer token to every request.
type BearerTransport struct {
	Token string // sent as "Authorization: Bearer <Token>"
}

// RoundTrip sends r with the token.
func (b BearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.Token)
	return http.DefaultTransport.RoundTrip(r)
}

// Connect opens an MCP session over Streamable HTTP with token.
func (p *HTTPProc) Connect(token, name string) *mcp.ClientSession {
	p.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   p.Base + "/mcp",
		HTTPClient: &http.Client{Transport: BearerTransport{Token: token}},
	}, nil)
	if err != nil {
		p.T.Fatalf("connect: %v\n%s", err, p.Stderr.String())
	}
	p.T.Cleanup(func() { _ = cs.Close() })
	return cs
}

// WriteTokenFile replaces the token file by rename and moves its
// modification time forward, so the server sees the new version even where
// timestamps are coarse.
func WriteTokenFile(t *testing.T, path, content string, mod time.Time) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mod, mod); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// ConnectAt is Connect with the protocol revision the go-sdk client asks
// for: "2025-11-25" opens a session with initialize; "" is the client's
// default, 2026-07-28 (server/discover, then stateless requests).
func (p *HTTPProc) ConnectAt(token, name, version string) *mcp.ClientSession {
	p.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	client := mcp.NewClient(&mcp.Implementation{Name: name, Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint:   p.Base + "/mcp",
		HTTPClient: &http.Client{Transport: BearerTransport{Token: token}},
	}, &mcp.ClientSessionOptions{ProtocolVersion: version})
	if err != nil {
		p.T.Fatalf("connect at %q: %v\n%s", version, err, p.Stderr.String())
	}
	p.T.Cleanup(func() { _ = cs.Close() })
	return cs
}

// MetricsAddr is the address `serve --metrics 127.0.0.1:0` reports.
func (p *HTTPProc) MetricsAddr(t *testing.T) string {
	t.Helper()
	for _, l := range p.LogLines() {
		if l["msg"] == "metrics.listening" {
			return l["addr"].(string)
		}
	}
	t.Fatalf("no metrics.listening line:\n%s", p.Stderr.String())
	return ""
}

// Tokens of the HTTP tests; 32 characters or more, as the token file demands.
const (
	TokenDairy = "dairy-0123456789abcdefghijklmnopqrstuv"
	TokenBrno  = "brno-0123456789abcdefghijklmnopqrstuvw"
	TokenWrong = "wrong-0123456789abcdefghijklmnopqrstuv"
)

// CallHTTP invokes a tool and decodes the envelope.
func CallHTTP(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (map[string]any, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return nil, err
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		return nil, fmt.Errorf("%s: not an envelope: %w", name, err)
	}
	if ok, _ := env["ok"].(bool); ok == res.IsError {
		return nil, fmt.Errorf("%s: ok=%v with isError=%v", name, ok, res.IsError)
	}
	return env, nil
}
