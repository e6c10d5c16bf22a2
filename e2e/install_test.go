package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
)

// installSection is the README's "### In an MCP host" part.
func installSection(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(e2etest.Path(t, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, sec, ok := strings.Cut(string(b), "\n### In an MCP host\n")
	if !ok {
		t.Fatal("README.md has no \"### In an MCP host\" section")
	}
	sec, _, _ = strings.Cut(sec, "\n## ")
	return sec
}

// hostInstall is what a host starts from a README example.
type hostInstall struct {
	command string
	args    []string
	env     map[string]string
}

// startInstalled installs the binary and keyring as the example expects,
// starts the example's command as a host would (only PATH from the test),
// completes initialize and tools/list, and stops it.
func startInstalled(t *testing.T, home string, in hostInstall) {
	t.Helper()
	w := e2etest.NewWorld(t)
	if !strings.HasPrefix(in.command, home+"/") {
		t.Fatalf("command %q is not under the user's home %s", in.command, home)
	}
	bin, err := os.ReadFile(e2etest.Binary(t))
	if err != nil {
		t.Fatal(err)
	}
	install := func(path string, b []byte, mode os.FileMode) {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, b, mode); err != nil {
			t.Fatal(err)
		}
	}
	install(in.command, bin, 0o755)
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home}
	for k, v := range in.env {
		switch k {
		case "UPSTREAM_BASE_URL":
			if !strings.HasPrefix(v, "https://") {
				t.Errorf("UPSTREAM_BASE_URL=%s: the example's StoreLink is https", v)
			}
			v = w.Mock.URL
		case "STORELINK_KEYRING_FILE":
			kr, err := os.ReadFile(w.KeyringPath)
			if err != nil {
				t.Fatal(err)
			}
			install(v, kr, 0o600)
		default:
			t.Fatalf("the example sets %s, which this test does not know how to fill", k)
		}
		env = append(env, k+"="+v)
	}
	cmd := exec.Command(in.command, in.args...)
	cmd.Env = env
	var stderr e2etest.SyncBuffer
	cmd.Stderr = &stderr
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "install-host", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("initialize: %v\nstderr:\n%s", err, stderr.String())
	}
	t.Cleanup(func() {
		if cmd.ProcessState == nil && cmd.Process != nil {
			_ = cmd.Process.Kill()
		}
	})
	res, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatalf("tools/list: %v\nstderr:\n%s", err, stderr.String())
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	if !slices.Contains(names, "korral_check_stock_risk") {
		t.Errorf("tools %v", names)
	}
	// The keyring the example names, read from StoreLink's side: both stores.
	call, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "korral_list_authorized_stores", Arguments: map[string]any{}})
	if err != nil {
		t.Fatal(err)
	}
	sc, _ := json.Marshal(call.StructuredContent)
	if call.IsError || !strings.Contains(string(sc), `"count":2`) || w.Requests(nil) == 0 {
		t.Errorf("the installed server serves %s (mock saw %d requests)", sc, w.Requests(nil))
	}
	if err := cs.Close(); err != nil {
		t.Errorf("close: %v", err)
	}
	if cmd.ProcessState == nil {
		t.Error("the server still runs after the session closed")
	}
}

// TestReadmeClaudeCodeInstall runs the README's `claude mcp add` line with a
// recording `claude`, then starts the command and --env settings it got.
func TestReadmeClaudeCodeInstall(t *testing.T) {
	var line string
	for _, m := range regexp.MustCompile("(?ms)^```sh\n(.*?)^```\n").FindAllStringSubmatch(installSection(t), -1) {
		for _, l := range strings.Split(m[1], "\n") {
			if strings.HasPrefix(l, "claude mcp add ") {
				line = l
			}
		}
	}
	if line == "" {
		t.Fatal("the README's install section shows no `claude mcp add` line in an sh block")
	}
	home := t.TempDir()
	argv := filepath.Join(t.TempDir(), "argv")
	cmd := exec.Command("bash", "-euo", "pipefail", "-c", `claude() { printf '%s\0' "$@" > "$ARGV"; }; `+line)
	cmd.Env = []string{"HOME=" + home, "ARGV=" + argv, "PATH=" + os.Getenv("PATH")}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("%s: %v\n%s", line, err, out)
	}
	b, err := os.ReadFile(argv)
	if err != nil {
		t.Fatal(err)
	}
	args := strings.Split(strings.TrimSuffix(string(b), "\x00"), "\x00")
	// claude mcp add [options] <name> -- <command> [args...]
	if len(args) < 3 || args[0] != "mcp" || args[1] != "add" {
		t.Fatalf("claude %q is not `claude mcp add`", args)
	}
	in := hostInstall{env: map[string]string{}}
	var name string
	rest := args[2:]
	for len(rest) > 0 && rest[0] != "--" {
		switch a := rest[0]; {
		case a == "--env" || a == "-e":
			if len(rest) < 2 {
				t.Fatalf("%s without a value", a)
			}
			k, v, ok := strings.Cut(rest[1], "=")
			if !ok {
				t.Fatalf("%s %s is not KEY=value", a, rest[1])
			}
			in.env[k] = v
			rest = rest[2:]
		case strings.HasPrefix(a, "-"):
			t.Fatalf("option %s, which this test does not know", a)
		default:
			name, rest = a, rest[1:]
		}
	}
	if name != "korral-storelink" || len(rest) < 2 {
		t.Fatalf("claude %q: want a server named korral-storelink and a command after --", args)
	}
	in.command, in.args = rest[1], rest[2:]
	startInstalled(t, home, in)
}

// TestReadmeVSCodeInstall starts the server from the README's mcp.json.
func TestReadmeVSCodeInstall(t *testing.T) {
	var block string
	for _, m := range regexp.MustCompile("(?ms)^```json\n(.*?)^```\n").FindAllStringSubmatch(installSection(t), -1) {
		if strings.Contains(m[1], `"servers"`) {
			block = m[1]
		}
	}
	if block == "" {
		t.Fatal("the README's install section shows no mcp.json")
	}
	var cfg struct {
		Servers map[string]struct {
			Type    string            `json:"type"`
			Command string            `json:"command"`
			Args    []string          `json:"args"`
			Env     map[string]string `json:"env"`
		} `json:"servers"`
	}
	dec := json.NewDecoder(strings.NewReader(block))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		t.Fatalf("the mcp.json does not parse: %v", err)
	}
	s, ok := cfg.Servers["korral-storelink"]
	if !ok || s.Type != "stdio" || len(cfg.Servers) != 1 {
		t.Fatalf("mcp.json: %+v", cfg)
	}
	home := t.TempDir()
	sub := func(v string) string { return strings.ReplaceAll(v, "${userHome}", home) }
	in := hostInstall{command: sub(s.Command), env: map[string]string{}}
	for _, a := range s.Args {
		in.args = append(in.args, sub(a))
	}
	for k, v := range s.Env {
		in.env[k] = sub(v)
	}
	startInstalled(t, home, in)
}
