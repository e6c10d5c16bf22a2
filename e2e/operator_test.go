package e2e_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mcpserver"
	"github.com/korral/storelink/mockstorelink"
)

// demoEnv runs the server on its embedded demo StoreLink.
func demoEnv(t *testing.T) []string {
	dir := t.TempDir()
	return []string{"STATE_DB_PATH=" + filepath.Join(dir, "state.db"), "HOME=" + dir, "LOG_LEVEL=debug"}
}

// demoNotice is an answer's notice: in a success's data or a tool error's envelope.
func demoNotice(env map[string]any) string {
	if d, ok := env["data"].(map[string]any); ok {
		env = d
	}
	s, _ := env["demo_notice"].(string)
	return s
}

// TestEmbeddedDemoIsUnmistakable: with the embedded StoreLink the
// instructions and every answer say the data is made up; against a real
// StoreLink none does.
func TestEmbeddedDemoIsUnmistakable(t *testing.T) {
	order := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47", "quantity_units": 24, "reason": "restock"}
	for _, embedded := range []bool{true, false} {
		env := demoEnv(t)
		if !embedded {
			env = e2etest.NewWorld(t).Env()
		}
		p := e2etest.StartServer(t, env)
		surfaces := map[string]string{
			"instructions": p.CS.InitializeResult().Instructions,
			"store list":   demoNotice(p.Call("korral_list_authorized_stores", map[string]any{})),
			"write result": demoNotice(p.Call("korral_raise_replenishment_order", order)),
			"risk check":   demoNotice(p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})),
			"sales":        demoNotice(p.Call("korral_list_recent_sales", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})),
			"tool error":   demoNotice(p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "55"})),
		}
		for what, text := range surfaces {
			if has := strings.Contains(text, mcpserver.DemoNotice); has != embedded {
				t.Errorf("embedded=%v: the %s carries the demo notice: %v", embedded, what, has)
			}
		}
		if strings.Contains(p.Stderr.String(), "keyring{}") {
			t.Errorf("embedded=%v: the log prints an empty keyring", embedded)
		}
		if embedded && len(p.LinesWhere("server.start", "upstream", "embedded_demo")) != 1 {
			t.Error("the start-up line does not say the demo StoreLink serves")
		}
	}
}

func TestKeyringWithoutStoreLinkIsAConfigurationError(t *testing.T) {
	w := e2etest.NewWorld(t)
	_, stderr, exit := e2etest.RunCLI(t, append(demoEnv(t), "STORELINK_KEYRING_FILE="+w.KeyringPath))
	if exit != 2 || !strings.Contains(stderr, "STORELINK_KEYRING_FILE is set but UPSTREAM_BASE_URL is not") {
		t.Fatalf("exit %d, stderr %q", exit, stderr)
	}
}

func TestReadyzSaysWhichStoreLink(t *testing.T) {
	for want, env := range map[string][]string{"embedded_demo": demoEnv(t), "storelink": e2etest.NewWorld(t).Env()} {
		p := e2etest.StartHTTP(t, env)
		resp, err := http.Get(p.Base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		err = json.NewDecoder(resp.Body).Decode(&m)
		resp.Body.Close()
		if err != nil || m["upstream"] != want {
			t.Errorf("readyz = %v (%v), want upstream %q", m, err, want)
		}
		// In demo mode the start-up line says so instead of an empty keyring.
		if strings.Contains(p.Stderr.String(), "keyring{}") || (want == "embedded_demo") != strings.Contains(p.Stderr.String(), "keyring=embedded-demo") {
			t.Errorf("start-up log for %s:\n%s", want, p.Stderr.String())
		}
	}
}

// notStoreLink is a web server at the wrong address: HTML 404 for all.
func notStoreLink(t *testing.T) string {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.WriteHeader(http.StatusNotFound)
		_, _ = io.WriteString(w, "<html><body><h1>404 Not Found</h1></body></html>")
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestWrongBaseURLIsNeverNotFound: a StoreLink URL pointing elsewhere never
// makes a SKU look unknown.
func TestWrongBaseURLIsNeverNotFound(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("UPSTREAM_BASE_URL="+notStoreLink(t)))
	env := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
	e, _ := env["error"].(map[string]any)
	if e2etest.Code(env) != "UPSTREAM_CONTRACT_ERROR" || !strings.Contains(e["remediation"].(string), "storelink-mcp doctor") ||
		!strings.Contains(e["remediation"].(string), "UPSTREAM_BASE_URL") {
		t.Fatalf("answer: %v", env)
	}
}

// TestDoctor: healthy, a wrong URL, and a key rotated on StoreLink's side.
func TestDoctor(t *testing.T) {
	const admin = "admin-token-for-the-doctor-test"
	w := e2etest.NewWorld(t, e2etest.WithAdminToken(admin))
	r := w.Mock

	stdout, stderr, exit := e2etest.RunCLI(t, w.Env(), "doctor")
	if exit != 0 {
		t.Fatalf("healthy: exit %d\n%s\n%s", exit, stdout, stderr)
	}
	for _, want := range []string{"ok    configuration:", "ok    upstream: StoreLink answers at " + r.URL, "ok    key of store 47:",
		"ok    key of store 102:", "ok    state database:", "ok    token file:", "ok    clock:"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("healthy doctor lacks %q:\n%s", want, stdout)
		}
	}

	stdout, _, exit = e2etest.RunCLI(t, w.Env("UPSTREAM_BASE_URL="+notStoreLink(t)), "doctor")
	if exit == 0 || !strings.Contains(stdout, "FAIL  upstream: UPSTREAM_BASE_URL=") || !strings.Contains(stdout, "fix: set UPSTREAM_BASE_URL") {
		t.Errorf("wrong URL: exit %d\n%s", exit, stdout)
	}

	req, _ := http.NewRequest(http.MethodPost, r.URL+"/_admin/keys/47/rotate", nil)
	req.Header.Set("Authorization", "Bearer "+admin)
	resp, err := http.DefaultClient.Do(req)
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("rotate through the admin API: %v %v", resp, err)
	}
	resp.Body.Close()
	stdout, _, exit = e2etest.RunCLI(t, w.Env(), "doctor")
	if exit == 0 || !strings.Contains(stdout, "FAIL  key of store 47: StoreLink refused to read store 47: AUTH_KEY_INVALID") ||
		!strings.Contains(stdout, "ok    key of store 102:") {
		t.Errorf("rotated key: exit %d\n%s", exit, stdout)
	}
	if strings.Contains(stdout, r.Server.DefaultKeyring()["102"]) {
		t.Error("doctor prints a key")
	}

	stdout, _, exit = e2etest.RunCLI(t, demoEnv(t), "doctor")
	if exit == 0 || !strings.Contains(stdout, "FAIL  upstream: UPSTREAM_BASE_URL is not set") {
		t.Errorf("demo: exit %d\n%s", exit, stdout)
	}
}

// TestAuditReportAnswersThePilotQuestions makes the pilot's two follow-ups, then reads the JSON report.
func TestAuditReportAnswersThePilotQuestions(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartServer(t, w.Env("ALLOW_WRITES=true"))
	args := map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"}
	p.Call("korral_check_stock_risk", args)
	p.Call("korral_list_recent_sales", args)
	p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "102"})
	raised := data(t, p.Call("korral_raise_replenishment_order", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47",
		"quantity_units": 24, "reason": "restock", "confirm": true}))
	if raised["mode"] != "raised" {
		t.Fatalf("raise: %v", raised)
	}
	p.Call("korral_get_order_status", map[string]any{"order_id": raised["order_id"], "store_id": "47"})
	p.Stop()

	stdout, stderr, exit := e2etest.RunCLI(t, w.Env(), "audit", "report", "--format", "json")
	if exit != 0 {
		t.Fatalf("audit report: exit %d %s", exit, stderr)
	}
	var rep struct {
		Tools []map[string]any `json:"tools"`
		Pilot map[string]int   `json:"pilot"`
	}
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil {
		t.Fatalf("%v: %s", err, stdout)
	}
	want := map[string]int{"risk_checks": 2, "followed_by_sales": 1, "orders_raised": 1, "status_checked": 1}
	for k, v := range want {
		if rep.Pilot[k] != v {
			t.Errorf("pilot %s = %d, want %d (%v)", k, rep.Pilot[k], v, rep.Pilot)
		}
	}
	for _, tool := range rep.Tools {
		for _, key := range []string{"tool", "calls", "ok", "errors", "error_rate", "p50_ms", "p95_ms", "p99_ms", "error_codes"} {
			if _, ok := tool[key]; !ok {
				t.Errorf("report line %v lacks %q", tool, key)
			}
		}
	}

	stdout, _, _ = e2etest.RunCLI(t, w.Env(), "audit", "report")
	if !strings.Contains(stdout, "same store and SKU in the same session: 1 of 2 (50.0%)") || !strings.Contains(stdout, "1 of 1 (100.0%)") {
		t.Errorf("text report:\n%s", stdout)
	}
	// The table prints short names; --tool takes them as well as full ones.
	for _, name := range []string{"check_stock_risk", "korral_check_stock_risk"} {
		stdout, _, exit = e2etest.RunCLI(t, w.Env(), "audit", "--tool", name, "--format", "json")
		if exit != 0 || strings.Count(stdout, "\n") != 2 {
			t.Errorf("audit --tool %s: exit %d, %d rows", name, exit, strings.Count(stdout, "\n"))
		}
	}
	if _, stderr, exit := e2etest.RunCLI(t, w.Env(), "audit", "--tool", "stock_risk"); exit != 2 || strings.Count(stderr, "\n") != 1 {
		t.Errorf("unknown tool: exit %d %q", exit, stderr)
	}
}

// TestSettingFlags: --read-only and --log-file work like their variables.
func TestSettingFlags(t *testing.T) {
	w := e2etest.NewWorld(t)
	logFile := filepath.Join(w.Dir, "server.log")
	p := e2etest.StartServerArgs(t, w.Env(), "--read-only", "--log-file", logFile, "--log-level", "info")
	tools, err := p.CS.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if tool.Name == "korral_raise_replenishment_order" {
			t.Error("--read-only still offers the write tool")
		}
	}
	if strings.Contains(p.CS.InitializeResult().Instructions, "korral_raise_replenishment_order") {
		t.Error("the read-only server's instructions name the write tool")
	}
	p.Call("korral_list_authorized_stores", map[string]any{})
	p.Stop()
	logged, err := os.ReadFile(logFile)
	if err != nil || !strings.Contains(string(logged), `"msg":"tool.ok"`) || strings.Contains(string(logged), `"level":"DEBUG"`) {
		t.Errorf("log file (%v):\n%s", err, logged)
	}
	if strings.Contains(p.Stderr.String(), "tool.ok") {
		t.Error("with --log-file the logs still go to stderr")
	}
}

// binaries builds the toolkit's other programs once for the CLI test.
func buildBinaries(t *testing.T, ldflags string, names ...string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	out := map[string]string{}
	for _, name := range names {
		out[name] = filepath.Join(dir, name)
		cmd := exec.Command("go", "build", "-ldflags", ldflags, "-o", out[name], "./cmd/"+name)
		cmd.Dir = e2etest.Root(t)
		if b, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("build %s: %v\n%s", name, err, b)
		}
	}
	return out
}

func runBinary(t *testing.T, bin string, args ...string) (stdout, stderr string, exit int) {
	t.Helper()
	return e2etest.RunProgram(t, bin, []string{"PATH=" + os.Getenv("PATH"), "HOME=" + t.TempDir()}, args...)
}

// TestEveryBinaryFollowsTheCLIConvention: help on stdout with exit 0, the
// stamped version, and a usage error as one line on stderr with exit 2.
func TestEveryBinaryFollowsTheCLIConvention(t *testing.T) {
	const pkg = "github.com/korral/storelink/mcpserver/buildinfo"
	bins := buildBinaries(t, "-X "+pkg+".Version=v9.8.7-test -X "+pkg+".Commit=c0ffee -X "+pkg+".Date=2026-11-30T12:00:00Z",
		"storelink-mcp", "mockstorelink", "storelink-contract", "storelink-demo")
	for name, bin := range bins {
		for _, args := range [][]string{{"--help"}, {"-h"}, {"help"}} {
			if name == "mockstorelink" && args[0] == "help" {
				continue // it has no subcommands, so "help" is a stray argument
			}
			stdout, stderr, exit := runBinary(t, bin, args...)
			if exit != 0 || stderr != "" || !strings.Contains(stdout, "Usage") {
				t.Errorf("%s %v: exit %d, stderr %q, stdout %q", name, args, exit, stderr, stdout)
			}
		}
		for _, args := range [][]string{{"--version"}, {"version"}} {
			stdout, _, exit := runBinary(t, bin, args...)
			if want := name + " v9.8.7-test (commit c0ffee, built 2026-11-30T12:00:00Z)\n"; exit != 0 || stdout != want {
				t.Errorf("%s %v: exit %d, %q, want %q", name, args, exit, stdout, want)
			}
		}
		_, stderr, exit := runBinary(t, bin, "--no-such-flag")
		if name == "storelink-contract" {
			_, stderr, exit = runBinary(t, bin, "check", "--no-such-flag")
		}
		if exit != 2 || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "no-such-flag") {
			t.Errorf("%s with a bad flag: exit %d, stderr %q", name, exit, stderr)
		}
	}
	mcpBin := bins["storelink-mcp"]
	for _, args := range [][]string{{"serve", "--help"}, {"stdio", "-h"}, {"doctor", "--help"}, {"audit", "--help"},
		{"audit", "report", "--help"}, {"approvals", "--help"}, {"approvals", "approve", "--help"}, {"serve", "--stateless", "--help"},
		{"approvers", "--help"}, {"approvers", "add", "--help"}} {
		stdout, stderr, exit := runBinary(t, mcpBin, args...)
		if exit != 0 || stderr != "" || !strings.HasPrefix(stdout, "Usage: storelink-mcp ") || !strings.Contains(strings.SplitN(stdout, "\n", 2)[0], args[0]) {
			t.Errorf("storelink-mcp %v: exit %d, stderr %q, stdout %q", args, exit, stderr, stdout)
		}
	}
	top, _, _ := runBinary(t, mcpBin, "--help")
	for _, cmd := range []string{"stdio", "serve", "doctor", "audit", "audit report", "approvals", "approvers", "version", "--read-only", "--log-level", "--log-file"} {
		if !strings.Contains(top, cmd) {
			t.Errorf("storelink-mcp --help does not list %s", cmd)
		}
	}
	if demo, _, _ := runBinary(t, bins["storelink-demo"], "--help"); !strings.Contains(demo, "storelink-demo eval") {
		t.Errorf("storelink-demo --help does not list eval:\n%s", demo)
	}

	// The MCP handshake reports the same stamped version.
	dir := t.TempDir()
	cmd := exec.Command(mcpBin)
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + dir, "STATE_DB_PATH=" + filepath.Join(dir, "state.db")}
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "version-check", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if v := cs.InitializeResult().ServerInfo.Version; v != "v9.8.7-test" {
		t.Errorf("handshake version %q", v)
	}
}

// stdioClientConfig is a document's first .mcp.json example of a local server.
func stdioClientConfig(t *testing.T, doc string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(e2etest.Path(t, doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, block := range strings.Split(string(b), "```json\n")[1:] {
		block, _, _ = strings.Cut(block, "```")
		if !strings.Contains(block, `"mcpServers"`) || !strings.Contains(block, `"command": "/`) {
			continue
		}
		var cfg map[string]any
		if err := json.Unmarshal([]byte(block), &cfg); err != nil {
			t.Fatalf("%s: the .mcp.json example does not parse: %v", doc, err)
		}
		return cfg
	}
	t.Fatalf("%s has no .mcp.json example of a local server", doc)
	return nil
}

// TestClientConfigExamplesAgreeAndWork: the README and docs/mcp-clients.md
// show one .mcp.json, and the server starts from it.
func TestClientConfigExamplesAgreeAndWork(t *testing.T) {
	readme := stdioClientConfig(t, "README.md")
	clients := stdioClientConfig(t, "docs/mcp-clients.md")
	if diff := cmp.Diff(readme, clients); diff != "" {
		t.Fatalf(".mcp.json examples differ (-README +docs/mcp-clients.md):\n%s", diff)
	}
	server := readme["mcpServers"].(map[string]any)["korral-storelink"].(map[string]any)
	w := e2etest.NewWorld(t)
	ours := map[string]string{"UPSTREAM_BASE_URL": w.Mock.URL, "STORELINK_KEYRING_FILE": w.KeyringPath, "STATE_DB_PATH": w.StatePath}
	env := []string{"HOME=" + w.Dir}
	for name := range server["env"].(map[string]any) {
		v, ok := ours[name]
		if !ok {
			t.Fatalf("the example sets %s, which this test does not know how to fill", name)
		}
		env = append(env, name+"="+v)
	}
	var args []string
	for _, a := range server["args"].([]any) {
		args = append(args, a.(string))
	}
	p := e2etest.StartServerArgs(t, env, args...)
	reply := p.Call("korral_list_authorized_stores", map[string]any{})
	stores := data(t, reply)
	if stores["count"] != float64(2) || demoNotice(reply) != "" {
		t.Errorf("the example configuration serves %v", stores)
	}
}
