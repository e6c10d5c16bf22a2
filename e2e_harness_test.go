package storelink_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mockstorelink"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// serverBinary is the real storelink-mcp, built once for all end-to-end tests.
var serverBinary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "storelink-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	serverBinary = filepath.Join(dir, "storelink-mcp")
	build := exec.Command("go", "build", "-o", serverBinary, "./cmd/storelink-mcp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build storelink-mcp:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// syncBuffer is a bytes.Buffer safe for a writer goroutine and a reader.
type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// world is a mock StoreLink on loopback plus the files a server needs to use it.
type world struct {
	mock        *mockstorelink.Running
	keyringPath string
	statePath   string
	dir         string
}

// newWorld starts a mock StoreLink with the real clock (the butter figures
// hold at any time of day) and writes its default keyring to a file.
func newWorld(t *testing.T) *world {
	t.Helper()
	r, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	dir := t.TempDir()
	w := &world{mock: r, dir: dir, keyringPath: filepath.Join(dir, "keyring.json"), statePath: filepath.Join(dir, "state.db")}
	w.writeKeyring(t, r.Server.DefaultKeyring())
	return w
}

func (w *world) writeKeyring(t *testing.T, kr map[string]string) {
	t.Helper()
	b, _ := json.Marshal(kr)
	// Write then rename, as an operator's rotation script would, so the
	// server never reads half a file.
	tmp := w.keyringPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, w.keyringPath); err != nil {
		t.Fatal(err)
	}
}

// env is the server environment pointing at this world.
func (w *world) env(extra ...string) []string {
	return append([]string{
		"UPSTREAM_BASE_URL=" + w.mock.URL,
		"STORELINK_KEYRING_FILE=" + w.keyringPath,
		"STATE_DB_PATH=" + w.statePath,
		"LOG_LEVEL=debug",
		"HOME=" + w.dir,
	}, extra...)
}

func (w *world) requests(match func(mockstorelink.RequestRecord) bool) int {
	return w.mock.Server.RequestCount(match)
}

// proc is one running storelink-mcp process with an MCP client session.
type proc struct {
	t      *testing.T
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stdout *syncBuffer
	stderr *syncBuffer
	done   chan struct{}
}

// startServer spawns the real binary over stdio with env (and nothing from
// the test's own environment) and connects the go-sdk client to it.
func startServer(t *testing.T, env []string) *proc {
	t.Helper()
	return startServerArgs(t, env)
}

// startServerArgs is startServer with command-line arguments.
func startServerArgs(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	cmd := exec.Command(serverBinary, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &proc{t: t, cmd: cmd, stdout: &syncBuffer{}, stderr: &syncBuffer{}, done: make(chan struct{})}
	cmd.Stderr = p.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.done) }()
	t.Cleanup(p.stop)
	transport := &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(stdout, p.stdout)), Writer: stdin}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, p.stderr.String())
	}
	p.cs = cs
	return p
}

// stop closes the session (stdin), waits a bounded time, then kills by PID.
func (p *proc) stop() {
	if p.cs != nil {
		_ = p.cs.Close()
	}
	select {
	case <-p.done:
	case <-time.After(5 * time.Second):
		_ = p.cmd.Process.Kill()
		<-p.done
	}
}

// kill ends the process with SIGKILL, as a crash would.
func (p *proc) kill() {
	_ = p.cmd.Process.Kill()
	<-p.done
}

// call invokes a tool and decodes the envelope from the text content.
func (p *proc) call(name string, args map[string]any) map[string]any {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		p.t.Fatalf("%s: %v\nstderr:\n%s", name, err, p.stderr.String())
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		p.t.Fatalf("%s: not an envelope: %v", name, err)
	}
	if ok, _ := env["ok"].(bool); ok == res.IsError {
		p.t.Fatalf("%s: ok=%v with isError=%v", name, ok, res.IsError)
	}
	return env
}

// callNoCheck invokes a tool whose answer the test does not wait for (the
// process may be killed meanwhile).
func (p *proc) callNoCheck(name string, args map[string]any) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = p.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

func code(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

func data(t *testing.T, env map[string]any) map[string]any {
	t.Helper()
	d, ok := env["data"].(map[string]any)
	if !ok {
		t.Fatalf("no data in %v", env)
	}
	return d
}

// plainText unwraps a value the server marked as untrusted data.
func plainText(v any) string {
	s, _ := v.(string)
	t, _ := mcpserver.UntrustedText(s)
	return t
}

func num(v any) float64 { f, _ := v.(float64); return f }

// logLines parses the server's stderr as JSON lines; any other line fails.
func (p *proc) logLines() []map[string]any {
	p.t.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.stderr.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			p.t.Fatalf("stderr line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

func (p *proc) linesWhere(msg string, kv ...string) []map[string]any {
	var out []map[string]any
	for _, l := range p.logLines() {
		if l["msg"] != msg {
			continue
		}
		ok := true
		for i := 0; i+1 < len(kv); i += 2 {
			if fmt.Sprint(l[kv[i]]) != kv[i+1] {
				ok = false
			}
		}
		if ok {
			out = append(out, l)
		}
	}
	return out
}

// runCLI runs a storelink-mcp subcommand to completion.
func runCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	return runProgram(t, serverBinary, append([]string{"PATH=" + os.Getenv("PATH")}, env...), args...)
}

// runProgram runs bin with exactly the environment env, bounded in time,
// and returns what it printed and its exit code.
func runProgram(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return o.String(), e.String(), ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return o.String(), e.String(), 0
}
