package e2e_test

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// docCommand is one command line of a document, continuation lines joined
// and a trailing comment dropped.
type docCommand struct{ doc, section, text string }

// commandStart is how a command line of an indented block begins; other
// indented blocks (a folder tree, a go.mod excerpt) are not commands.
var commandStart = regexp.MustCompile(`^(go|make|bin/|storelink-mcp|eval|scripts/|git|npm|node|curl|claude|openssl|umask|printf|[A-Z_]+=)`)

// docCommands returns the commands of a document: every line of its sh
// blocks, and every command line of its indented blocks.
func docCommands(t *testing.T, rel string) []docCommand {
	t.Helper()
	b, err := os.ReadFile(e2etest.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	var out []docCommand
	section, fenced, shBlock, indented := "", false, false, false
	var pending string
	for _, raw := range strings.Split(string(b), "\n") {
		trimmed := strings.TrimSpace(raw)
		switch {
		case strings.HasPrefix(trimmed, "```"):
			fenced, shBlock = !fenced, !fenced && trimmed == "```sh"
			continue
		case !fenced && strings.HasPrefix(raw, "#"):
			section = strings.TrimLeft(raw, "# ")
		}
		isIndented := !fenced && strings.HasPrefix(raw, "    ") && (indented || pending != "" || commandStart.MatchString(trimmed))
		indented = isIndented || (indented && trimmed == "")
		if !(fenced && shBlock) && !isIndented {
			continue
		}
		line := pending + trimmed
		if strings.HasSuffix(line, `\`) {
			pending = strings.TrimSuffix(line, `\`)
			continue
		}
		pending = ""
		line = strings.TrimSpace(regexp.MustCompile(`\s+# .*$`).ReplaceAllString(line, ""))
		if line == "" || strings.HasPrefix(line, "#") || (isIndented && !commandStart.MatchString(line)) {
			continue
		}
		out = append(out, docCommand{rel, section, strings.Join(strings.Fields(line), " ")})
	}
	return out
}

// runBlock runs one document command with bash in dir; it fails the test
// unless the command exits 0.
func runBlock(t *testing.T, dir string, env []string, line string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", line)
	cmd.Dir, cmd.Env, cmd.Stdin = dir, env, strings.NewReader("")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	return string(out)
}

// docBin builds bin/storelink-mcp with the documents' own build line, from
// the repository's root (bin/ is ignored by git), and returns a folder of
// the reader's own in which bin/ is that folder.
func docBin(t *testing.T, build string) string {
	t.Helper()
	if build != "go build -o bin/storelink-mcp ./cmd/storelink-mcp" {
		t.Fatalf("the build line is now %q; the test runs bin/storelink-mcp after it", build)
	}
	runBlock(t, e2etest.Root(t), os.Environ(), build)
	dir := t.TempDir()
	if err := os.Symlink(e2etest.Path(t, "bin"), filepath.Join(dir, "bin")); err != nil {
		t.Fatal(err)
	}
	return dir
}

// TestReadmeServerCommands runs the README's "Running the MCP server"
// block as printed, against a mock StoreLink; only the log file's path is
// moved into the test's folder.
func TestReadmeServerCommands(t *testing.T) {
	if os.Getenv("CI") != "true" {
		t.Skip("builds the server with the README's commands; CI=true runs it")
	}
	var block []string
	for _, c := range docCommands(t, "README.md") {
		if c.section == "Running the MCP server" && (strings.HasPrefix(c.text, "go ") || strings.HasPrefix(c.text, "bin/")) {
			block = append(block, c.text)
		}
	}
	if len(block) != 6 {
		t.Fatalf("the block shows %d commands, the test knows 6: %q", len(block), block)
	}
	w := e2etest.NewWorld(t)
	env := append(os.Environ(), w.Env()...)
	// go run keeps the caller's HOME (its module and build caches); the
	// server's state goes to the test's folder.
	runBlock(t, e2etest.Root(t), append(os.Environ(), "STATE_DB_PATH="+w.StatePath), block[0])
	dir := docBin(t, block[1])
	if out := runBlock(t, dir, env, block[2]); !strings.Contains(out, "ok ") || strings.Contains(out, "FAIL") {
		t.Errorf("doctor: %s", out)
	}
	logFile := filepath.Join(w.Dir, "storelink-mcp.log")
	runBlock(t, dir, env, strings.ReplaceAll(block[3], "/var/log/storelink-mcp.log", logFile))
	if b, err := os.ReadFile(logFile); err != nil || !strings.Contains(string(b), `"server.stop"`) {
		t.Errorf("--log-file: %v %s", err, b)
	}
	if out := runBlock(t, dir, env, block[4]); !strings.Contains(out, "Usage:") {
		t.Errorf("--help: %s", out)
	}
	if out := runBlock(t, dir, env, block[5]); !strings.HasPrefix(out, "storelink-mcp ") {
		t.Errorf("--version: %s", out)
	}
}

// serveBlock starts a document's serve command with bash, its address
// replaced by a free loopback port, and returns the base URL once the
// server logs http.listening; it stops with the test.
func serveBlock(t *testing.T, dir string, env []string, lines []string, addr string) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := l.Addr().String()
	_ = l.Close()
	script := strings.ReplaceAll(strings.Join(lines, "\n"), addr, free)
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGTERM)
		_ = cmd.Wait()
	})
	sc := bufio.NewScanner(stderr)
	for sc.Scan() {
		var line map[string]any
		if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "http.listening" {
			go func() { _, _ = io.Copy(io.Discard, stderr) }()
			return "http://" + free
		}
	}
	t.Fatalf("%s: the server never logged http.listening", script)
	return ""
}

// TestMCPClientsServeCommands runs docs/mcp-clients.md's build line and its
// token-file and serve block as printed (the port made free), then calls
// the endpoint with the token the block wrote.
func TestMCPClientsServeCommands(t *testing.T) {
	if os.Getenv("CI") != "true" {
		t.Skip("builds the server with the document's commands; CI=true runs it")
	}
	cmds := docCommands(t, "docs/mcp-clients.md")
	dir := docBin(t, cmds[0].text)
	var block []string
	for _, c := range cmds {
		if c.section == "Start the server" {
			block = append(block, c.text)
		}
	}
	// The first sh block: the token file and the server on loopback.
	if len(block) < 3 || !strings.Contains(block[2], "serve --http 127.0.0.1:8080") {
		t.Fatalf("the block is now %q", block)
	}
	w := e2etest.NewWorld(t)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.Dir, "STATE_DB_PATH=" + w.StatePath}
	base := serveBlock(t, dir, env, block[:3], "127.0.0.1:8080")
	tokens, err := os.ReadFile(filepath.Join(dir, "tokens.txt"))
	if err != nil {
		t.Fatal(err)
	}
	fields := strings.Fields(string(tokens))
	if fi, err := os.Stat(filepath.Join(dir, "tokens.txt")); err != nil || fi.Mode().Perm() != 0o600 || len(fields) != 2 {
		t.Fatalf("tokens.txt: %v %v %q", err, fi, tokens)
	}
	for token, want := range map[string]int{fields[1]: http.StatusOK, "not-the-token": http.StatusUnauthorized} {
		req, _ := http.NewRequest(http.MethodPost, base+"/mcp", strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Authorization", "Bearer "+token)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		req.Header.Set("MCP-Protocol-Version", "2025-11-25")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if (res.StatusCode == http.StatusUnauthorized) != (want == http.StatusUnauthorized) {
			t.Errorf("token %q: status %d", token[:4], res.StatusCode)
		}
	}
}
