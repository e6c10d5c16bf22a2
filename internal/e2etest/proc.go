package e2etest

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/mockstorelink"
)

// Proc is one running storelink-mcp process with an MCP client session.
type Proc struct {
	T      *testing.T         // the test that started it
	Cmd    *exec.Cmd          // the process
	CS     *mcp.ClientSession // the client's session over the process's stdin and stdout
	Stdout *SyncBuffer        // everything the server wrote to stdout
	Stderr *SyncBuffer        // the server's log
	Done   chan struct{}      // closed when the process has exited
}

// StartServer spawns the real binary over stdio with env (and nothing from
// the test's own environment) and connects the go-sdk client to it.
func StartServer(t *testing.T, env []string) *Proc {
	t.Helper()
	return StartServerArgs(t, env)
}

// StartServerArgs is StartServer with command-line arguments.
func StartServerArgs(t *testing.T, env []string, args ...string) *Proc {
	t.Helper()
	return StartBinary(t, Binary(t), env, args...)
}

// StartBinary is StartServerArgs with another build of storelink-mcp, bin
// (one built from a patched copy of the repository, say).
func StartBinary(t *testing.T, bin string, env []string, args ...string) *Proc {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	p := &Proc{T: t, Cmd: cmd, Stdout: &SyncBuffer{}, Stderr: &SyncBuffer{}, Done: make(chan struct{})}
	cmd.Stderr = p.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = cmd.Wait(); close(p.Done) }()
	t.Cleanup(p.Stop)
	transport := &mcp.IOTransport{Reader: io.NopCloser(io.TeeReader(stdout, p.Stdout)), Writer: stdin}
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-agent", Version: "1"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, transport, nil)
	if err != nil {
		t.Fatalf("connect: %v\nstderr:\n%s", err, p.Stderr.String())
	}
	p.CS = cs
	return p
}

// Stop closes the session (stdin), waits a bounded time, then kills by PID.
func (p *Proc) Stop() {
	if p.CS != nil {
		_ = p.CS.Close()
	}
	select {
	case <-p.Done:
	case <-time.After(5 * time.Second):
		_ = p.Cmd.Process.Kill()
		<-p.Done
	}
}

// Kill ends the process with SIGKILL, as a crash would.
func (p *Proc) Kill() {
	_ = p.Cmd.Process.Kill()
	<-p.Done
}

// Call invokes a tool and decodes the envelope from the text content.
func (p *Proc) Call(name string, args map[string]any) map[string]any {
	p.T.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	res, err := p.CS.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		p.T.Fatalf("%s: %v\nstderr:\n%s", name, err, p.Stderr.String())
	}
	var env map[string]any
	if err := json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &env); err != nil {
		p.T.Fatalf("%s: not an envelope: %v", name, err)
	}
	if ok, _ := env["ok"].(bool); ok == res.IsError {
		p.T.Fatalf("%s: ok=%v with isError=%v", name, ok, res.IsError)
	}
	return env
}

// CallNoCheck invokes a tool whose answer the test does not wait for (the
// process may be killed meanwhile).
func (p *Proc) CallNoCheck(name string, args map[string]any) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _ = p.CS.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
}

// Code is the error code of an envelope, "" when it has none.
func Code(env map[string]any) string {
	e, _ := env["error"].(map[string]any)
	c, _ := e["code"].(string)
	return c
}

// LogLines parses the server's stderr as JSON lines; any other line fails.
func (p *Proc) LogLines() []map[string]any {
	p.T.Helper()
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(p.Stderr.String()))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			p.T.Fatalf("stderr line is not JSON: %q", sc.Text())
		}
		out = append(out, m)
	}
	return out
}

// LinesWhere are the log lines with message msg and, for each key-value
// pair of kv, that value under that key.
func (p *Proc) LinesWhere(msg string, kv ...string) []map[string]any {
	var out []map[string]any
	for _, l := range p.LogLines() {
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

// RunCLI runs a storelink-mcp subcommand to completion.
func RunCLI(t *testing.T, env []string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	return RunProgram(t, Binary(t), append([]string{"PATH=" + os.Getenv("PATH")}, env...), args...)
}

// RunCLIStdin is RunCLI with stdin.
func RunCLIStdin(t *testing.T, env []string, stdin string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	return runProgram(t, Binary(t), append([]string{"PATH=" + os.Getenv("PATH")}, env...), strings.NewReader(stdin), args)
}

// RunProgram runs bin with exactly the environment env, bounded in time,
// and returns what it printed and its exit code.
func RunProgram(t *testing.T, bin string, env []string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	return runProgram(t, bin, env, nil, args)
}

func runProgram(t *testing.T, bin string, env []string, stdin io.Reader, args []string) (stdout, stderr string, exit int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Env = env
	cmd.Stdin = stdin
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

// Order is the arguments of korral_raise_replenishment_order for qty units of
// the scenario's butter at store 47, plus extra as name, value pairs.
func Order(qty int, extra ...any) map[string]any {
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47", "quantity_units": qty,
		"reason": "Projected to sell out before close; 22 sold in 24 h against 5 on hand."}
	for i := 0; i+1 < len(extra); i += 2 {
		args[extra[i].(string)] = extra[i+1]
	}
	return args
}
