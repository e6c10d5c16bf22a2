package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/korral/storelink/mcpserver"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// mockNow pins the embedded StoreLink's clock, so every run gets the same
// answer.
const mockNow = "2026-11-27T14:30:00+01:00"

// butter is the measured call. Each call gets its own params, since the SDK
// may write metadata into them.
func butter() *mcp.CallToolParams {
	return &mcp.CallToolParams{Name: "korral_check_stock_risk", Arguments: map[string]any{"store_id": "47", "sku": "8847291"}}
}

// mcpServer is one running storelink-mcp with a client session to it.
type mcpServer struct {
	proc     *child
	sessions []*mcp.ClientSession
	logPath  string
	// http servers are sent SIGTERM.
	http bool
	// params is the call that drive and warmUp make; nil is butter.
	params func() *mcp.CallToolParams
}

// call is the params of the next call to s.
func (s *mcpServer) call() *mcp.CallToolParams {
	if s.params == nil {
		return butter()
	}
	return s.params()
}

// serverEnv is a server's environment: PATH, a private HOME and state
// database, and the pinned clock unless StoreLink is external.
func serverEnv(dir string, extra ...string) []string {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + dir,
		"STATE_DB_PATH=" + filepath.Join(dir, "state.db"),
	}
	external := false
	for _, e := range extra {
		if strings.HasPrefix(e, "UPSTREAM_BASE_URL=") {
			external = true
		}
	}
	if !external {
		env = append(env, "STORELINK_MOCK_NOW="+mockNow)
	}
	env = append(env, extra...)
	return append(env, extraServerEnv...)
}

// extraServerEnv is --server-env, added to every server's environment.
var extraServerEnv []string

// startStdio spawns the binary and connects a client over stdio; logs go
// to a file in dir.
func startStdio(ctx context.Context, bin, dir string, env []string) (*mcpServer, error) {
	cmd := exec.Command(bin)
	cmd.Env = env
	logPath := filepath.Join(dir, fmt.Sprintf("stderr-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close() // the child holds its own descriptor
	cmd.Stderr = logf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	p, err := startChild(cmd)
	if err != nil {
		return nil, err
	}
	s := &mcpServer{proc: p, logPath: logPath}
	client := mcp.NewClient(&mcp.Implementation{Name: "loadgen", Version: "1"}, nil)
	cs, err := client.Connect(ctx, &mcp.IOTransport{Reader: stdout, Writer: stdin}, nil)
	if err != nil {
		s.close()
		return nil, fmt.Errorf("connect over stdio: %w%s", err, s.logTail())
	}
	s.sessions = []*mcp.ClientSession{cs}
	return s, nil
}

// close ends the sessions, then the process.
func (s *mcpServer) close() {
	for _, cs := range s.sessions {
		_ = cs.Close()
	}
	s.proc.stop(5*time.Second, s.http || len(s.sessions) == 0)
}

func (s *mcpServer) logTail() string {
	b, _ := os.ReadFile(s.logPath)
	if len(b) > 2000 {
		b = b[len(b)-2000:]
	}
	if len(b) == 0 {
		return ""
	}
	return "\nserver stderr (tail):\n" + string(b)
}

// toolsInfo is the size of the tool definitions as served.
type toolsInfo struct {
	Tools             int `json:"tools"`
	ModelVisibleBytes int `json:"model_visible_bytes"`
	ToolsListBytes    int `json:"tools_list_bytes"` // the whole result, output schemas included
}

// coldStarts spawns the binary n times and times each from exec to a
// completed tools/list.
func coldStarts(ctx context.Context, bin, dir string, n int, env []string) ([]time.Duration, toolsInfo, error) {
	// One untimed start creates the state database.
	var info toolsInfo
	var out []time.Duration
	for i := -1; i < n; i++ {
		d, res, err := coldStart(ctx, bin, dir, env)
		if err != nil {
			return nil, info, err
		}
		if i >= 0 {
			out = append(out, d)
		} else {
			raw, _ := json.Marshal(res)
			info = toolsInfo{Tools: len(res.Tools), ModelVisibleBytes: mcpserver.ModelVisibleBytes(res.Tools), ToolsListBytes: len(raw)}
		}
	}
	return out, info, nil
}

// coldStart spawns the binary once, times it from exec to a completed
// tools/list, and ends it.
func coldStart(ctx context.Context, bin, dir string, env []string) (time.Duration, *mcp.ListToolsResult, error) {
	t0 := time.Now()
	s, err := startStdio(ctx, bin, dir, env)
	if err != nil {
		return 0, nil, err
	}
	defer s.close()
	res, err := s.sessions[0].ListTools(ctx, nil)
	d := time.Since(t0)
	if err != nil {
		return 0, nil, fmt.Errorf("tools/list: %w%s", err, s.logTail())
	}
	return d, res, nil
}

// loadResult is one load phase against one server process.
type loadResult struct {
	Latency latencies `json:"latency"`
	// Idle is the server's memory when the phase starts.
	Idle memory `json:"idle"`
	// Checkpoints are the memory after every tenth of the calls.
	Checkpoints []checkpoint `json:"checkpoints"`
	End         memory       `json:"end"`
	// CPUPerCallMS is the server's CPU time (user + system) per call.
	CPUPerCallMS float64 `json:"cpu_per_call_ms"`
}

// checkpoint is the server's memory after a number of calls.
type checkpoint struct {
	Calls int `json:"calls"`
	memory
}

// growth is the resident-set change over the second half of the phase, in
// KiB, after caches have settled.
func (l *loadResult) growth() (int64, bool) {
	n := len(l.Checkpoints)
	if n < 2 {
		return 0, false
	}
	return l.Checkpoints[n-1].RSSKB - l.Checkpoints[n/2-1].RSSKB, true
}

// checkpoints is how many times a phase samples the server's memory.
const checkpoints = 10

// drive makes total calls over callers goroutines, sharing sessions
// round-robin, and samples the server's memory.
func drive(ctx context.Context, s *mcpServer, callers, total int) (loadResult, error) {
	var r loadResult
	var err error
	pid := s.proc.pid()
	if r.Idle, err = readMemory(pid); err != nil {
		return r, err
	}
	cpu0, err := cpuTime(pid)
	if err != nil {
		return r, err
	}
	durs := make([]time.Duration, total)
	var next, done, errs atomic.Int64
	var firstErr atomic.Value
	var mu sync.Mutex
	var wg sync.WaitGroup
	start := time.Now()
	for c := range callers {
		cs := s.sessions[c%len(s.sessions)]
		wg.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= total {
					return
				}
				t0 := time.Now()
				res, err := cs.CallTool(ctx, s.call())
				durs[i] = time.Since(t0)
				if err != nil || res.IsError {
					errs.Add(1)
					if err == nil {
						err = fmt.Errorf("tool error: %s", resultText(res))
					}
					firstErr.CompareAndSwap(nil, err)
				}
				if n := int(done.Add(1)); n%max(total/checkpoints, 1) == 0 {
					if m, err := readMemory(pid); err == nil {
						mu.Lock()
						r.Checkpoints = append(r.Checkpoints, checkpoint{Calls: n, memory: m})
						mu.Unlock()
					}
				}
			}
		})
	}
	wg.Wait()
	wall := time.Since(start)
	slices.SortFunc(r.Checkpoints, func(a, b checkpoint) int { return a.Calls - b.Calls })
	if r.End, err = readMemory(pid); err != nil {
		return r, err
	}
	cpu1, err := cpuTime(pid)
	if err != nil {
		return r, err
	}
	r.CPUPerCallMS = msf(cpu1-cpu0) / float64(total)
	r.Latency = summarise(durs, int(errs.Load()), wall)
	if e, ok := firstErr.Load().(error); ok {
		return r, fmt.Errorf("%d of %d calls failed, first: %w%s", errs.Load(), total, e, s.logTail())
	}
	return r, nil
}

func resultText(res *mcp.CallToolResult) string {
	if res == nil || len(res.Content) == 0 {
		return "(empty result)"
	}
	if t, ok := res.Content[0].(*mcp.TextContent); ok {
		return t.Text
	}
	return "(non-text result)"
}

// warmUp makes n unmeasured sequential calls.
func warmUp(ctx context.Context, s *mcpServer, n int) error {
	for range n {
		for _, cs := range s.sessions {
			res, err := cs.CallTool(ctx, s.call())
			if err != nil {
				return fmt.Errorf("warm-up call: %w%s", err, s.logTail())
			}
			if res.IsError {
				return fmt.Errorf("warm-up call: %s", resultText(res))
			}
		}
	}
	return nil
}

// freeAddr returns a loopback address with a port that was just free.
func freeAddr() (string, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	addr := ln.Addr().String()
	return addr, ln.Close()
}

// httpOptions says how to start the server's HTTP transport.
type httpOptions struct {
	// Args is the command line after the binary, with {addr} in place of
	// the listen address.
	Args []string
	// TokenEnv names the bearer token file variable; "" for none.
	TokenEnv string
}

// httpToken is the bearer token every HTTP client of the driver sends.
const httpToken = "loadgen-0123456789abcdefghijklmnopqrstuvwxyz"

// bearer adds the token to every request.
type bearer struct {
	token string
	base  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// startHTTP runs the server over HTTP on a free loopback port and connects
// n sessions, each with its own HTTP client.
func startHTTP(ctx context.Context, bin, dir string, env []string, hopts httpOptions, n int) (*mcpServer, error) {
	addr, err := freeAddr()
	if err != nil {
		return nil, err
	}
	env = slices.Clone(env)
	if hopts.TokenEnv != "" {
		path := filepath.Join(dir, "tokens")
		if err := os.WriteFile(path, []byte("loadgen "+httpToken+"\n"), 0o600); err != nil {
			return nil, err
		}
		env = append(env, hopts.TokenEnv+"="+path)
	}
	args := make([]string, len(hopts.Args))
	for i, a := range hopts.Args {
		args[i] = strings.ReplaceAll(a, "{addr}", addr)
	}
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	logPath := filepath.Join(dir, fmt.Sprintf("stderr-http-%d.log", time.Now().UnixNano()))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	cmd.Stderr, cmd.Stdout = logf, logf
	p, err := startChild(cmd)
	if err != nil {
		return nil, err
	}
	s := &mcpServer{proc: p, logPath: logPath, http: true}
	if err := waitTCP(ctx, addr, p, 10*time.Second); err != nil {
		s.close()
		return nil, fmt.Errorf("server never listened on %s: %w%s", addr, err, s.logTail())
	}
	for range n {
		hc := &http.Client{Transport: bearer{token: httpToken, base: &http.Transport{MaxIdleConnsPerHost: 4}}}
		t := &mcp.StreamableClientTransport{Endpoint: "http://" + addr + "/mcp", HTTPClient: hc, DisableStandaloneSSE: true, MaxRetries: -1}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "loadgen", Version: "1"}, nil).Connect(ctx, t, nil)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("connect over HTTP: %w%s", err, s.logTail())
		}
		s.sessions = append(s.sessions, cs)
	}
	return s, nil
}

func waitTCP(ctx context.Context, addr string, p *child, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		select {
		case <-p.done:
			return errors.New("process exited")
		case <-ctx.Done():
			return ctx.Err()
		default:
		}
		c, err := net.DialTimeout("tcp", addr, 200*time.Millisecond)
		if err == nil {
			_ = c.Close()
			return nil
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("timed out after %s", limit)
}
