package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// Both MCP revisions (2025-11-25 with the 1.x SDK, 2026-07-28 with the 2.x
// client) over stdio and a default `serve --http`: list, prompt, complete
// and a risk check.

// revisionTools are a default deployment's tools, in tools/list's stable order.
var revisionTools = []string{"korral_check_stock_risk", "korral_get_order_status", "korral_list_authorized_stores",
	"korral_list_recent_sales", "korral_raise_replenishment_order"}

// findTSClients is findTSClient plus the pinned 2.x client; without it the
// test is skipped, or fails under CI=true.
func findTSClients(t *testing.T) tsInstall {
	t.Helper()
	inst := findTSClient(t)
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	b, err := os.ReadFile(e2etest.Path(t, tsClientPackage+"/package.json"))
	if err == nil {
		err = json.Unmarshal(b, &pkg)
	}
	if err != nil {
		t.Fatal(err)
	}
	want := pkg.Dependencies["@modelcontextprotocol/client"]
	var installed struct {
		Version string `json:"version"`
	}
	b, err = os.ReadFile(filepath.Join(inst.modules, "@modelcontextprotocol", "client", "package.json"))
	if err == nil {
		err = json.Unmarshal(b, &installed)
	}
	if err != nil || want == "" || installed.Version != want {
		why := fmt.Sprintf("@modelcontextprotocol/client@%s is not installed in %s", want, inst.modules)
		if os.Getenv("CI") == "true" {
			t.Fatalf("%s, and CI=true requires the TypeScript client test to run: run `make tsclient`", why)
		}
		t.Skipf("%s: run `make tsclient` to run this test", why)
	}
	return inst
}

// revisionRun is revisions.mjs's answer.
type revisionRun struct {
	OK              bool           `json:"ok"`
	Step            string         `json:"step"`
	Error           map[string]any `json:"error"`
	ProtocolVersion string         `json:"protocol_version"`
	Capabilities    map[string]any `json:"capabilities"`
	Tools           [][]string     `json:"tools"`
	Prompts         []string       `json:"prompts"`
	PromptText      string         `json:"prompt_text"`
	Completion      []string       `json:"completion"`
	Risk            struct {
		IsError           bool           `json:"isError"`
		StructuredContent map[string]any `json:"structuredContent"`
	} `json:"risk"`
}

// runRevisions runs the driver once with cfg and returns its answer.
func runRevisions(t *testing.T, inst tsInstall, cfg map[string]any) (revisionRun, string) {
	t.Helper()
	work := stageTSScript(t, inst, "revisions.mjs")
	arg, _ := json.Marshal(cfg)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, inst.node, filepath.Join(work, "revisions.mjs"), string(arg))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + work}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	runErr := cmd.Run()
	var out revisionRun
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &out); err != nil {
		t.Fatalf("%v: driver said %q (%v)\nstderr:\n%s", cfg["sdk"], stdout.String(), runErr, tail(stderr.String(), 4000))
	}
	return out, stderr.String()
}

func TestBothRevisionsOnBothTransports(t *testing.T) {
	inst := findTSClients(t)
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "revisions-agent "+e2etest.TokenDairy+"\n", time.Now())
	// No flags: the default configuration serves both revisions.
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens))
	stdioEnv := map[string]string{"PATH": os.Getenv("PATH")}
	for _, kv := range w.Env() {
		k, v, _ := strings.Cut(kv, "=")
		stdioEnv[k] = v
	}
	const sku, store = "8847291", mockstorelink.StoreSmichov
	for _, sdk := range []string{"v1", "v2"} {
		want := map[string]string{"v1": "2025-11-25", "v2": "2026-07-28"}[sdk]
		for _, transport := range []string{"stdio", "http"} {
			t.Run(want+" over "+transport, func(t *testing.T) {
				cfg := map[string]any{"sdk": sdk, "transport": transport, "sku": sku, "store": store}
				if transport == "stdio" {
					cfg["command"], cfg["env"] = e2etest.Binary(t), stdioEnv
				} else {
					cfg["url"], cfg["token"] = p.Base+"/mcp", e2etest.TokenDairy
				}
				r, stderr := runRevisions(t, inst, cfg)
				if !r.OK {
					t.Fatalf("%s failed at %s: %v\nclient stderr:\n%s\nserver log:\n%s", want, r.Step, r.Error, tail(stderr, 4000), tail(p.Stderr.String(), 4000))
				}
				if r.ProtocolVersion != want {
					t.Errorf("negotiated %q, want %s", r.ProtocolVersion, want)
				}
				for i, got := range r.Tools {
					if !slices.Equal(got, revisionTools) {
						t.Errorf("tools/list #%d: %v, want %v in that order", i+1, got, revisionTools)
					}
				}
				if !slices.Contains(r.Prompts, "korral_restock_gaps") || !slices.Contains(r.Prompts, "korral_orders_since") {
					t.Errorf("prompts/list: %v", r.Prompts)
				}
				if !strings.Contains(r.PromptText, "korral_check_stock_risk for SKU "+sku+" at stores "+store+".") {
					t.Errorf("prompt text: %s", r.PromptText)
				}
				if !slices.Contains(r.Completion, store) {
					t.Errorf("completion of store_ids: %v, want it to offer %s", r.Completion, store)
				}
				sc := r.Risk.StructuredContent
				if ok, _ := sc["ok"].(bool); !ok || r.Risk.IsError {
					t.Errorf("risk check: %v", sc)
				} else if stores, _ := sc["data"].(map[string]any)["stores"].([]any); len(stores) != 1 || stores[0].(map[string]any)["store_id"] != store {
					t.Errorf("risk check answered for %v", sc["data"])
				}
				for _, c := range []string{"tools", "prompts", "completions"} {
					if _, ok := r.Capabilities[c]; !ok {
						t.Errorf("capabilities %v lack %s", r.Capabilities, c)
					}
				}
				// The MCP Apps views are the resources (ADR 0020).
				if _, ok := r.Capabilities["resources"]; !ok {
					t.Errorf("capabilities %v lack resources (the views)", r.Capabilities)
				}
			})
		}
	}
	p.Stop()
	// Over HTTP the audit trail names the token for each call.
	var labelled int
	for _, row := range auditRows(t, w) {
		if row["tool"] == "korral_check_stock_risk" && strings.HasPrefix(fmt.Sprint(row["client"]), "token:revisions-agent") {
			labelled++
		}
	}
	if labelled != 2 {
		t.Errorf("%d risk checks over HTTP name token:revisions-agent in the audit trail, want 2 (one per revision)", labelled)
	}
}

func anyList(v any) []any { l, _ := v.([]any); return l }

// resultOf is a JSON-RPC response's result, empty when there is none.
func resultOf(r map[string]any) map[string]any {
	if m, ok := r["result"].(map[string]any); ok {
		return m
	}
	return map[string]any{}
}

// TestDiscoverDeclaresWhatIsServed: server/discover declares what initialize
// does, only declared capabilities answer, removed methods get 404 with
// -32601, and lists carry caching hints.
func TestDiscoverDeclaresWhatIsServed(t *testing.T) {
	w := e2etest.NewWorld(t)
	p := e2etest.StartHTTP(t, w.Env())
	url := p.Base + "/mcp"

	code, disc := post2026(t, url, "server/discover", "", nil)
	res, _ := disc["result"].(map[string]any)
	if code != http.StatusOK || res == nil {
		t.Fatalf("server/discover: %d %v", code, disc)
	}
	versions, _ := res["supportedVersions"].([]any)
	for _, v := range []string{"2026-07-28", "2025-11-25"} {
		if !slices.Contains(versions, any(v)) {
			t.Errorf("discover supportedVersions %v lack %s", versions, v)
		}
	}
	caps, _ := res["capabilities"].(map[string]any)

	// The same endpoint's 2025-11-25 session is told the same.
	cs := p.Connect("", "legacy-session")
	legacy, _ := json.Marshal(cs.InitializeResult().Capabilities)
	discovered, _ := json.Marshal(caps)
	if string(legacy) != string(discovered) {
		t.Errorf("discover declares %s, initialize %s", discovered, legacy)
	}
	if string(discovered) != `{"completions":{},"logging":{},"prompts":{},"resources":{},"tools":{}}` {
		t.Errorf("declared capabilities %s", discovered)
	}

	checkDeclaredAnswers(t, url, caps)
	checkOnlyViewsAreResources(t, url, caps)
	checkAppsHostToolList(t, url)
	// The lists may be cached for a while, by anyone.
	for _, m := range []string{"tools/list", "prompts/list"} {
		_, r := post2026(t, url, m, "", nil)
		got := resultOf(r)
		if ttl, _ := got["ttlMs"].(float64); ttl <= 0 || got["cacheScope"] != "public" {
			t.Errorf("%s: ttlMs %v cacheScope %v", m, got["ttlMs"], got["cacheScope"])
		}
	}

	// What 2026-07-28 removed is not found, not a version error.
	for _, m := range []string{"initialize", "ping", "logging/setLevel"} {
		code, r := post2026(t, url, m, "", map[string]any{"level": "info"})
		e, _ := r["error"].(map[string]any)
		if code != http.StatusNotFound || e == nil || e["code"] != float64(-32601) {
			t.Errorf("%s on 2026-07-28: %d %v, want 404 and -32601", m, code, r)
		}
	}
}

// checkDeclaredAnswers: declared capabilities answer; the others do not.
func checkDeclaredAnswers(t *testing.T, url string, caps map[string]any) {
	t.Helper()
	answers := func(method string, params map[string]any, field string) bool {
		code, r := post2026(t, url, method, "", params)
		got, _ := r["result"].(map[string]any)
		return code == http.StatusOK && got != nil && got[field] != nil
	}
	for name, c := range map[string]struct {
		method string
		params map[string]any
		field  string
	}{
		"tools":   {"tools/list", nil, "tools"},
		"prompts": {"prompts/list", nil, "prompts"},
		"completions": {"completion/complete", map[string]any{"ref": map[string]any{"type": "ref/prompt", "name": "korral_orders_since"},
			"argument": map[string]any{"name": "store_id", "value": ""}}, "completion"},
	} {
		_, declared := caps[name]
		if works := answers(c.method, c.params, c.field); declared != works {
			t.Errorf("%s: declared %v, %s answers %v", name, declared, c.method, works)
		}
	}
}

// checkOnlyViewsAreResources: the two MCP Apps views are the only resources.
func checkOnlyViewsAreResources(t *testing.T, url string, caps map[string]any) {
	t.Helper()
	if _, declared := caps["resources"]; !declared {
		t.Errorf("resources not declared")
	}
	if _, r := post2026(t, url, "resources/list", "", nil); len(anyList(resultOf(r)["resources"])) != 2 {
		t.Errorf("resources/list: %v", r)
	}
	if _, r := post2026(t, url, "resources/read", "ui://korral/stock-risk.html", map[string]any{"uri": "ui://korral/stock-risk.html"}); r["error"] != nil {
		t.Errorf("resources/read of a view: %v", r)
	}
	if _, r := post2026(t, url, "resources/read", "test://static-text", map[string]any{"uri": "test://static-text"}); r["error"] == nil {
		t.Errorf("resources/read answered: %v", r)
	}
}

// checkAppsHostToolList: a client declaring MCP Apps gets tools naming their
// views, cached privately.
func checkAppsHostToolList(t *testing.T, url string) {
	t.Helper()
	apps := map[string]any{"_meta": map[string]any{"io.modelcontextprotocol/clientCapabilities": map[string]any{
		"extensions": map[string]any{"io.modelcontextprotocol/ui": map[string]any{"mimeTypes": []any{"text/html;profile=mcp-app"}}}}}}
	_, r := post2026(t, url, "tools/list", "", apps)
	named := 0
	for _, tool := range anyList(resultOf(r)["tools"]) {
		if meta, _ := tool.(map[string]any)["_meta"].(map[string]any); meta != nil && meta["ui"] != nil {
			named++
		}
	}
	if named != 2 || resultOf(r)["cacheScope"] != "private" {
		t.Errorf("tools/list for an MCP Apps host: %d tools name a view (want the risk check and the order tool), cacheScope %v", named, resultOf(r)["cacheScope"])
	}
}

// TestClientsDocDiscoverCommand runs docs/mcp-clients.md's discover command
// and checks the answer it describes.
func TestClientsDocDiscoverCommand(t *testing.T) {
	if _, err := exec.LookPath("curl"); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("curl is not on PATH, and CI=true requires the document's command to run (.ci/run installs it)")
		}
		t.Skip("curl is not on PATH")
	}
	doc, err := os.ReadFile(e2etest.Path(t, "docs/mcp-clients.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "### Both protocol revisions on one endpoint\n")
	section, _, _ = strings.Cut(section, "\n### ")
	m := regexp.MustCompile("(?s)```sh\n(.*?)```").FindStringSubmatch(section)
	if !ok || m == nil {
		t.Fatal("docs/mcp-clients.md has no sh block under \"Both protocol revisions on one endpoint\"")
	}
	w := e2etest.NewWorld(t)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "doc-reader "+e2etest.TokenDairy+"\n", time.Now())
	p := e2etest.StartHTTP(t, w.Env("MCP_AUTH_TOKENS_FILE="+tokens))
	const docBase = "http://127.0.0.1:8080"
	if !strings.Contains(m[1], docBase) {
		t.Fatalf("the command does not use the document's address %s:\n%s", docBase, m[1])
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", strings.ReplaceAll(m[1], docBase, p.Base))
	cmd.Env = []string{"PATH=" + os.Getenv("PATH"), "HOME=" + w.Dir, "STORELINK_MCP_TOKEN=" + e2etest.TokenDairy}
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the document's command failed: %v\n%s", err, out)
	}
	var res struct {
		Result struct {
			SupportedVersions []string        `json:"supportedVersions"`
			Capabilities      json.RawMessage `json:"capabilities"`
			TTLMs             int             `json:"ttlMs"`
		} `json:"result"`
	}
	data, found := strings.CutPrefix(strings.TrimSpace(string(out)), "event: message\ndata: ")
	if !found || json.Unmarshal([]byte(data), &res) != nil {
		t.Fatalf("not the one server-sent event the document describes:\n%s", out)
	}
	if v := res.Result.SupportedVersions; len(v) < 2 || v[0] != "2026-07-28" || v[1] != "2025-11-25" {
		t.Errorf("supportedVersions %v: the document says 2026-07-28 first, then 2025-11-25", v)
	}
	if got := string(res.Result.Capabilities); got != `{"completions":{},"logging":{},"prompts":{},"resources":{},"tools":{}}` {
		t.Errorf("capabilities %s, not the document's tools, prompts, completions, logging and resources", got)
	}
	if res.Result.TTLMs != 5*60*1000 {
		t.Errorf("ttlMs %d, the document says five minutes", res.Result.TTLMs)
	}
}
