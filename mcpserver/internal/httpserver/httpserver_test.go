package httpserver

// Test harness: a server around a one-tool MCP server whose call waits for
// the test, and an MCP client with a bearer token.

import (
	"context"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const (
	testToken  = "test-token-0123456789abcdefghijklmnop"
	otherToken = "other-token-0123456789abcdefghijklmno"
	initBody   = `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"probe","version":"1"}}}`
)

func countLines(s, msg string) int {
	n := 0
	for _, l := range mcptest.LogLines(s) {
		if l["msg"] == msg {
			n++
		}
	}
	return n
}

// tokenFile is a real token file, as `serve --http` opens it.
func tokenFile(t *testing.T, content string) *bearer.File {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	f, err := bearer.Open(p, nil)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// gate is a tool that holds its call until the test opens the gate or the
// call's context ends.
type gate struct {
	entered chan struct{}
	open    chan struct{}
}

func newGate() *gate { return &gate{entered: make(chan struct{}, 16), open: make(chan struct{})} }

type waitIn struct{}

type waitOut struct {
	Done string `json:"done"`
}

// mcpServer is a small MCP server with the gate as its one tool.
func mcpServer(g *gate) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "wait", Description: "waits for the gate"}, func(ctx context.Context, _ *mcp.CallToolRequest, _ waitIn) (*mcp.CallToolResult, waitOut, error) {
		g.entered <- struct{}{}
		select {
		case <-g.open:
			return nil, waitOut{Done: "released"}, nil
		case <-ctx.Done():
			return nil, waitOut{}, ctx.Err()
		}
	})
	return s
}

// testOptions are valid options around a fresh server with a gate tool,
// logging JSON into the returned buffer.
func testOptions(g *gate) (Options, *mcptest.SyncBuffer) {
	logs := &mcptest.SyncBuffer{}
	return Options{
		Server:              mcpServer(g),
		Logger:              slog.New(slog.NewJSONHandler(logs, nil)),
		ListenHost:          "127.0.0.1",
		RequestTimeout:      time.Minute,
		MaxSessions:         1000,
		MaxSessionsPerToken: 100,
		SessionIdleTimeout:  30 * time.Minute,
	}, logs
}

// serving is a Server on a loopback port.
type serving struct {
	*Server
	base string
	done chan error
}

// start serves opts on 127.0.0.1 until the test ends.
func start(t *testing.T, opts Options) *serving {
	t.Helper()
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &serving{Server: s, base: "http://" + ln.Addr().String(), done: make(chan error, 1)}
	go func() { r.done <- s.Serve(ln) }()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		_ = s.Shutdown(ctx)
		if err := <-r.done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return r
}

// bearerTransport adds the token to every request of an MCP client.
type bearerTransport struct{ token string }

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

func connect(t *testing.T, ctx context.Context, base, token string) *mcp.ClientSession {
	t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "unit-agent", Version: "1"}, nil)
	hc := http.DefaultClient
	if token != "" {
		hc = &http.Client{Transport: bearerTransport{token}}
	}
	cs, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", HTTPClient: hc}, nil)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() { _ = cs.Close() })
	return cs
}

func TestNewRefusesUnboundedOptions(t *testing.T) {
	valid, _ := testOptions(newGate())
	for name, edit := range map[string]func(*Options){
		"no server":             func(o *Options) { o.Server = nil },
		"no logger":             func(o *Options) { o.Logger = nil },
		"no request timeout":    func(o *Options) { o.RequestTimeout = 0 },
		"no session cap":        func(o *Options) { o.MaxSessions = 0 },
		"no per-token cap":      func(o *Options) { o.MaxSessionsPerToken = 0 },
		"no idle timeout":       func(o *Options) { o.SessionIdleTimeout = 0 },
		"negative idle timeout": func(o *Options) { o.SessionIdleTimeout = -time.Second },
	} {
		t.Run(name, func(t *testing.T) {
			o := valid
			edit(&o)
			if _, err := New(o); err == nil {
				t.Fatal("New accepted the options")
			}
		})
	}
	stateless := valid
	stateless.Stateless, stateless.MaxSessions, stateless.MaxSessionsPerToken, stateless.SessionIdleTimeout = true, 0, 0, 0
	if _, err := New(stateless); err != nil {
		t.Fatalf("a stateless server needs no session caps: %v", err)
	}
}

func TestServeLogsWhereItListens(t *testing.T) {
	opts, logs := testOptions(newGate())
	opts.Tokens = tokenFile(t, "agent "+testToken+"\n")
	opts.AllowedHosts = []string{"mcp.korral.example"}
	r := start(t, opts)
	// Serve logs before it accepts, so an answered request means the line
	// is written.
	if resp, _ := mcptest.Post(t, r.base+"/mcp", initBody, map[string]string{"Authorization": "Bearer " + testToken}); resp.StatusCode != http.StatusOK {
		t.Fatalf("initialize: %d", resp.StatusCode)
	}
	var line map[string]any
	for _, l := range mcptest.LogLines(logs.String()) {
		if l["msg"] == "http.listening" {
			line = l
		}
	}
	if line == nil || "http://"+line["addr"].(string) != r.base || line["auth"] != "bearer" || line["url"] != r.base+"/mcp" {
		t.Fatalf("http.listening: %v", line)
	}
	hosts, _ := json.Marshal(line["allowed_hosts"])
	if string(hosts) != `["localhost","127.0.0.1","::1","mcp.korral.example"]` {
		t.Fatalf("allowed_hosts %s", hosts)
	}
}
