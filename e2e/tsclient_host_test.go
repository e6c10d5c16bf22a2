package e2e_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// The driver of the official TypeScript SDK client (conformance/tsclient).

// tsClientPackage is the client's committed npm project; `make tsclient`
// installs it into .tools/tsclient-<version>.
const tsClientPackage = "conformance/tsclient"

// tsInstall is where the client is installed.
type tsInstall struct{ node, modules string }

// findTSClient finds node and the pinned client. Without them the test is
// skipped, or fails under CI=true.
func findTSClient(t *testing.T) tsInstall {
	t.Helper()
	missing := func(why string) {
		t.Helper()
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s, and CI=true requires the TypeScript SDK client test to run: run `make tsclient`", why)
		}
		t.Skipf("%s: run `make tsclient` to run this test", why)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(e2etest.Path(t, tsClientPackage+"/package.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	version := pkg.Dependencies["@modelcontextprotocol/sdk"]
	node, err := exec.LookPath("node")
	if err != nil {
		missing("node is not on PATH")
	}
	dir := e2etest.Path(t, ".tools/tsclient-"+version)
	var installed struct {
		Version string `json:"version"`
	}
	b, err = os.ReadFile(filepath.Join(dir, "node_modules", "@modelcontextprotocol", "sdk", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &installed)
	}
	if err != nil || installed.Version != version {
		missing(fmt.Sprintf("@modelcontextprotocol/sdk@%s is not installed in %s", version, dir))
	}
	return tsInstall{node: node, modules: filepath.Join(dir, "node_modules")}
}

// tsReply is the driver's answer to one call: the result, or what the client threw.
type tsReply struct {
	ID     int `json:"id"`
	Result *struct {
		IsError           bool             `json:"isError"`
		Content           []map[string]any `json:"content"`
		StructuredContent map[string]any   `json:"structuredContent"`
	} `json:"result"`
	Error *struct {
		Code    *int   `json:"code"`
		Message string `json:"message"`
	} `json:"error"`
}

// journal records every call of the test, as the answer a host got.
type journal struct {
	mu   sync.Mutex
	rows []string
	// statuses are the order statuses korral_get_order_status answered.
	statuses map[string]bool
}

func (j *journal) add(format string, args ...any) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.rows = append(j.rows, fmt.Sprintf(format, args...))
}

// tsHost is one driver process connected to the storelink-mcp it spawned over stdio.
type tsHost struct {
	t       *testing.T
	name    string
	cmd     *exec.Cmd
	stdin   io.WriteCloser
	stderr  *e2etest.SyncBuffer
	journal *journal
	// tools is the tools/list result the client checks answers with.
	tools []map[string]any

	mu      sync.Mutex
	nextID  int
	waiting map[int]chan tsReply
	done    chan struct{}
}

// stageTSScript copies the driver script into a fresh directory beside a link
// to the installed clients, and returns the directory.
func stageTSScript(t *testing.T, inst tsInstall, name string) string {
	t.Helper()
	work := t.TempDir()
	script, err := os.ReadFile(e2etest.Path(t, tsClientPackage+"/"+name))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(work, name), script, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(inst.modules, filepath.Join(work, "node_modules")); err != nil {
		t.Fatal(err)
	}
	return work
}

// startTSHost starts the driver, which spawns the binary with exactly env
// (and PATH), connects and lists the tools.
func startTSHost(t *testing.T, inst tsInstall, j *journal, name string, env []string) *tsHost {
	t.Helper()
	work := stageTSScript(t, inst, "client.mjs")
	cfg, _ := json.Marshal(stdioServer(t, env, nil))
	cmd := exec.Command(inst.node, filepath.Join(work, "client.mjs"), string(cfg))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	h := &tsHost{t: t, name: name, cmd: cmd, stdin: stdin, stderr: &e2etest.SyncBuffer{}, journal: j,
		waiting: map[int]chan tsReply{}, done: make(chan struct{})}
	cmd.Stderr = h.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ready := make(chan error, 1)
	go h.read(stdout, ready)
	t.Cleanup(h.stop)
	select {
	case err := <-ready:
		if err != nil {
			t.Fatalf("%s: %v\nstderr:\n%s", name, err, h.stderr.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: the TypeScript client did not connect in 30 s\nstderr:\n%s", name, h.stderr.String())
	}
	return h
}

// read dispatches the driver's lines: first its readiness, then replies.
func (h *tsHost) read(stdout io.Reader, ready chan<- error) {
	defer close(h.done)
	sc := bufio.NewScanner(stdout)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	first := true
	for sc.Scan() {
		if first {
			first = false
			var r struct {
				Ready bool             `json:"ready"`
				Tools []map[string]any `json:"tools"`
			}
			if err := json.Unmarshal(sc.Bytes(), &r); err != nil || !r.Ready {
				ready <- fmt.Errorf("the client did not connect and list the tools: %s", sc.Text())
				return
			}
			h.tools = r.Tools
			ready <- nil
			continue
		}
		var r tsReply
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			continue
		}
		h.mu.Lock()
		ch := h.waiting[r.ID]
		delete(h.waiting, r.ID)
		h.mu.Unlock()
		if ch != nil {
			ch <- r
		}
	}
	if first {
		ready <- fmt.Errorf("the client ended before connecting")
	}
}

// stop closes the driver's stdin (ending the session and server), bounded in
// time, then kills it by PID.
func (h *tsHost) stop() {
	_ = h.stdin.Close()
	select {
	case <-h.done:
	case <-time.After(15 * time.Second):
		_ = h.cmd.Process.Kill()
		<-h.done
	}
	_ = h.cmd.Wait()
}

// send starts one call; the returned function waits for its answer.
func (h *tsHost) send(label, tool string, args map[string]any, want string) func() map[string]any {
	h.t.Helper()
	h.mu.Lock()
	h.nextID++
	id := h.nextID
	ch := make(chan tsReply, 1)
	h.waiting[id] = ch
	h.mu.Unlock()
	line, _ := json.Marshal(map[string]any{"id": id, "name": tool, "arguments": args})
	if _, err := h.stdin.Write(append(line, '\n')); err != nil {
		h.t.Fatalf("%s: write to the client: %v", h.name, err)
	}
	return func() map[string]any {
		h.t.Helper()
		select {
		case r := <-ch:
			return h.check(label, tool, want, r)
		case <-time.After(90 * time.Second):
			h.t.Fatalf("%s: %s (%s): no answer in 90 s\nstderr:\n%s", h.name, label, tool, tail(h.stderr.String(), 4000))
			return nil
		}
	}
}

// call makes one call; want is "ok" or the expected error code. It returns
// the envelope, or nil when the client threw.
func (h *tsHost) call(label, tool string, args map[string]any, want string) map[string]any {
	h.t.Helper()
	return h.send(label, tool, args, want)()
}

func (h *tsHost) check(label, tool, want string, r tsReply) map[string]any {
	h.t.Helper()
	if r.Error != nil {
		code := "none"
		if r.Error.Code != nil {
			code = fmt.Sprint(*r.Error.Code)
		}
		h.journal.add("| %s | %s | %s | THROWN %s: %s |", h.name, label, tool, code, r.Error.Message)
		h.t.Errorf("%s: %s (%s): the TypeScript client refused the answer: MCP error %s: %s", h.name, label, tool, code, r.Error.Message)
		return nil
	}
	if r.Result == nil || len(r.Result.Content) == 0 {
		h.t.Errorf("%s: %s (%s): no content: %+v", h.name, label, tool, r)
		return nil
	}
	text, _ := r.Result.Content[0]["text"].(string)
	var env map[string]any
	if err := json.Unmarshal([]byte(text), &env); err != nil {
		h.t.Errorf("%s: %s (%s): text is not the envelope: %s", h.name, label, tool, text)
		return nil
	}
	ok, _ := env["ok"].(bool)
	got := "ok"
	if !ok {
		got = e2etest.Code(env)
	}
	outcome := got
	if d, _ := env["data"].(map[string]any); d != nil {
		for _, f := range []string{"mode", "status"} {
			if v, ok := d[f].(string); ok {
				outcome += " " + f + "=" + v
			}
		}
	}
	h.journal.add("| %s | %s | %s | %s |", h.name, label, tool, outcome)
	if st := field(env, "status"); tool == "korral_get_order_status" && st != "" {
		h.journal.mu.Lock()
		h.journal.statuses[st] = true
		h.journal.mu.Unlock()
	}
	switch {
	case ok == r.Result.IsError:
		h.t.Errorf("%s: %s (%s): ok=%v with isError=%v", h.name, label, tool, ok, r.Result.IsError)
	case ok && r.Result.StructuredContent == nil:
		h.t.Errorf("%s: %s (%s): a success without structured content", h.name, label, tool)
	case got != want:
		h.t.Errorf("%s: %s (%s): got %s, want %s: %s", h.name, label, tool, got, want, text)
	}
	return env
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return "..." + s[len(s)-n:]
}

// field reads a string field of an answer's data; "" when absent.
func field(env map[string]any, path ...string) string {
	var v any = env["data"]
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	s, _ := v.(string)
	return s
}
