package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// hostileName is store 47's name as markup; the views must show it as text.
const hostileName = `Praha <img src=x onerror="document.title='owned'"><b>Smíchov</b>`

// bidiName is the butter's name with an unterminated right-to-left override (U+202E).
const bidiName = "Madeta butter 250g\u202e"

// viewsClock is the instant the plain world's views are taken at, the
// tests' butter clock: Friday 27 November 2026, 14:30 in Prague, when
// butter at store 47 runs out before the 22:00 close and store 102's
// lasts. Pinned (STORELINK_MOCK_NOW), the views and their pictures are the
// same at any hour of the real day.
const viewsClock = "2026-11-27T14:30:00+01:00"

// TestViewsInARealHost renders the two MCP Apps views in chromium, in a host
// built on ext-apps's AppBridge (e2e/appshost/host.js), from real answers of
// the binary, found through tools/list and resources/read as a host does,
// in a 400 px chat column and a 1280 px pane. Every view at both widths
// must be readable (assertReadable: no horizontal overflow, no text under
// 11 px). The plain world is the embedded StoreLink at viewsClock (store
// 47 "Praha Smíchov", "Madeta butter 250g"); the hostile world is a mock
// on the real clock whose names arrive as markup, with a right-to-left
// override and 200 characters without a space, and its views are checked
// for escaping and overflow only. Screenshots of the view's frame go to the
// artefact directory (-artifacts -outputdir DIR); docs/images/view-*.png
// are the plain world's (view-hostile-* are not for the docs).
func TestViewsInARealHost(t *testing.T) {
	chromium := e2etest.NeedTool(t, "chromium", "chromium")
	esbuild := appsHostTool(t)
	w := e2etest.NewWorld(t)
	proxy := hostileProxy(t, w)
	hostile := func(extra ...string) []string {
		e := w.Env(extra...)
		e[0] = "UPSTREAM_BASE_URL=" + proxy.URL
		return e
	}
	v := &viewsWorld{t: t, w: w, cases: map[string]*viewCase{}}
	v.seeded = len(w.Mock.Server.Orders()) // the world's own orders
	v.callPlain()
	v.callHostile(hostile)
	v.serveHost(bundleAppsHost(t, esbuild))
	// About 30 views, each loaded, waited on until it stops resizing,
	// checked and pictured: 150 s on 2 idle cores under -race, so more
	// than browserLimit once the other packages' tests share the cores.
	v.bctx = browserFor(t, 8*time.Minute, chromium, 1340, 1700)

	for _, width := range []int{400, 1280} {
		v.width = width
		v.checkRiskView()
		v.checkOneStore()
		v.checkSweepView()
		v.checkFlaggedDays()
		v.checkOrderView()
		v.checkVerdictStyles()
		v.checkHostileNames()
		v.checkLongNames()
	}
	v.checkBidiOverride()
	v.checkApprovalView()
	v.checkHostTheme()
	if n := len(w.Mock.Server.Orders()) - v.seeded; n != 0 {
		t.Errorf("StoreLink received %d orders after the views were shown", n)
	}
}

// viewsWorld is what TestViewsInARealHost's steps share.
type viewsWorld struct {
	t      *testing.T
	w      *e2etest.World
	seeded int // the orders StoreLink held before the test
	cases  map[string]*viewCase
	host   *httptest.Server
	bctx   context.Context
	width  int // the view's frame, in CSS pixels
}

// bundleAppsHost bundles e2e/appshost/host.js from the pinned ext-apps and returns its path.
func bundleAppsHost(t *testing.T, esbuild string) string {
	t.Helper()
	bundle := filepath.Join(t.TempDir(), "host.js")
	src, err := os.ReadFile(filepath.Join(e2etest.Root(t), "e2e", "appshost", "host.js"))
	if err != nil {
		t.Fatal(err)
	}
	build := exec.Command(esbuild, "--bundle", "--format=esm", "--platform=browser", "--log-level=warning", "--outfile="+bundle)
	// Bare imports resolve from the install's node_modules.
	build.Dir = filepath.Dir(filepath.Dir(filepath.Dir(esbuild)))
	build.Stdin = bytes.NewReader(src)
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("esbuild: %v\n%s", err, out)
	}
	return bundle
}

// hostileProxy serves store 47's name as hostileName and the butter's as bidiName.
func hostileProxy(t *testing.T, w *e2etest.World) *httptest.Server {
	rename := func(rw http.ResponseWriter, r *http.Request, what, name string) {
		rec := httptest.NewRecorder()
		w.Mock.Server.ServeHTTP(rec, r)
		var obj map[string]any
		if rec.Code != http.StatusOK || json.Unmarshal(rec.Body.Bytes(), &obj) != nil || obj["name"] == nil {
			t.Errorf("%s through the proxy: %d %s", what, rec.Code, rec.Body.String())
		}
		obj["name"] = name
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(obj)
	}
	proxy := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		switch {
		case r.Method == http.MethodGet && r.URL.Path == "/v1/skus/"+mockstorelink.SKUButter:
			rename(rw, r, "the butter", bidiName)
		case r.Method == http.MethodGet && r.URL.Path == "/v1/stores/47":
			rename(rw, r, "store 47", hostileName)
		case r.Method == http.MethodGet && r.URL.Path == "/v1/skus/"+mockstorelink.SKUPhantomStockout:
			rename(rw, r, "the phantom stockout SKU", longName)
		default:
			w.Mock.Server.ServeHTTP(rw, r)
		}
	}))
	t.Cleanup(proxy.Close)
	return proxy
}

// plainEnv is a server on the embedded StoreLink with both clocks pinned
// to viewsClock, its state in a directory of its own.
func plainEnv(t *testing.T, extra ...string) []string {
	dir := t.TempDir()
	return append([]string{"STORELINK_MOCK_NOW=" + viewsClock, "HOME=" + dir, "STATE_DB_PATH=" + filepath.Join(dir, "state.db")}, extra...)
}

// callPlain makes the calls of the plain world, whose views go into the
// docs; none sends an order: previews, and a confirm that waits for an
// approver.
func (v *viewsWorld) callPlain() {
	t := v.t
	butter := func(extra ...any) map[string]any {
		args := map[string]any{"sku": mockstorelink.SKUButter}
		for i := 0; i+1 < len(extra); i += 2 {
			args[extra[i].(string)] = extra[i+1]
		}
		return args
	}
	h := startAppsHost(t, plainEnv(t, "ALLOW_WRITES=true"))
	v.cases["risk"] = h.viewCase("korral_check_stock_risk", butter("store_ids", []any{"47", "102"}))
	v.cases["one"] = h.viewCase("korral_check_stock_risk", butter("store_id", "47"))
	// Over StoreLink's whole 28 days the oldest day lies before its
	// history: a flagged day, drawn in the sweep's panel.
	v.cases["sweep"] = h.viewCase("korral_check_stock_risk", butter("store_ids", []any{"all"}, "lookback_days", 28))
	v.cases["flagged"] = h.viewCase("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUPhantomStockout, "store_id": "47"})
	v.cases["order"] = h.viewCase("korral_raise_replenishment_order", e2etest.Order(24))
	for verdict, orders := range verdictOrders() {
		v.cases["order-"+verdict] = h.verdictCase(verdict, orders)
	}

	h = startAppsHost(t, plainEnv(t, "ALLOW_WRITES=true", "WRITE_APPROVAL=required"))
	preview := h.viewCase("korral_raise_replenishment_order", e2etest.Order(24))
	key := preview.data(t)["idempotency_key"]
	v.cases["approval"] = h.viewCase("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true, "idempotency_key", key))
	if mode := v.cases["approval"].data(t)["mode"]; mode != "pending_approval" {
		t.Fatalf("confirmed with approval required: mode %v", mode)
	}
}

// callHostile makes the calls of the hostile world (store 47's name as
// markup, the butter's with a bidi override, the phantom stockout SKU's of
// 200 characters); none sends an order to StoreLink.
func (v *viewsWorld) callHostile(env func(...string) []string) {
	t := v.t
	h := startAppsHost(t, env("ALLOW_WRITES=true"))
	v.cases["hostile-risk"] = h.viewCase("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_ids": []any{"47", "102"}})
	v.cases["hostile-order"] = h.viewCase("korral_raise_replenishment_order", e2etest.Order(24))
	v.cases["hostile-long"] = h.viewCase("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUPhantomStockout, "store_id": "47"})
	v.cases["hostile-order-long"] = h.viewCase("korral_raise_replenishment_order", e2etest.Order(44, "sku", mockstorelink.SKUPhantomStockout))
	if n := len(v.w.Mock.Server.Orders()) - v.seeded; n != 0 {
		t.Fatalf("StoreLink received %d orders from previews", n)
	}
}

// serveHost serves the host page, its bundle, and each case by name.
func (v *viewsWorld) serveHost(bundle string) {
	root := e2etest.Root(v.t)
	page := http.NewServeMux()
	page.HandleFunc("GET /{$}", func(rw http.ResponseWriter, r *http.Request) {
		http.ServeFile(rw, r, filepath.Join(root, "e2e", "appshost", "host.html"))
	})
	page.HandleFunc("GET /host.js", func(rw http.ResponseWriter, r *http.Request) { http.ServeFile(rw, r, bundle) })
	// A case is named name@width: the view's frame is that wide.
	page.HandleFunc("GET /case/{name}", func(rw http.ResponseWriter, r *http.Request) {
		name, width, _ := strings.Cut(r.PathValue("name"), "@")
		c, ok := v.cases[name]
		if !ok {
			http.NotFound(rw, r)
			return
		}
		shown := *c
		shown.Width, _ = strconv.Atoi(width)
		rw.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(rw).Encode(shown)
	})
	v.host = httptest.NewServer(page) // 127.0.0.1
	v.t.Cleanup(v.host.Close)
}

// show loads a case into the host in a frame v.width wide, checks the view
// is readable there, saves a screenshot of the frame, and returns the
// view's document as read by probe.
func (v *viewsWorld) show(name, probe string) map[string]any {
	t, bctx := v.t, v.bctx
	t.Helper()
	what := fmt.Sprintf("%s at %d px", name, v.width)
	if err := chromedp.Do(bctx, chromedp.EmulateViewport(int64(v.width+40), 4000),
		chromedp.Navigate(v.host.URL+"/?case="+name+"@"+strconv.Itoa(v.width))); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		phase, err := chromedp.Run(bctx, chromedp.Evaluate[string](`window.hostState ? window.hostState.phase : "none"`))
		if err == nil && phase == "result-sent" {
			break
		}
		if phase == "failed" || time.Now().After(deadline) {
			state, _ := chromedp.Run(bctx, chromedp.Evaluate[map[string]any](`window.hostState`))
			t.Fatalf("%s: host phase %q (%v): %v", name, phase, err, state)
		}
		time.Sleep(100 * time.Millisecond)
	}
	// chromedp's attach to a frame races with the DOM events of a document
	// still changing (a data race inside chromedp): wait until the view has
	// reported its size and stopped resizing for a few polls first.
	for sizes, still, deadline := -1.0, 0, time.Now().Add(10*time.Second); still < 3 && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		n, _ := chromedp.Run(bctx, chromedp.Evaluate[float64](`window.hostState.log.filter((l) => l.startsWith("size")).length`))
		if n > 0 && n == sizes {
			still++
		} else {
			sizes, still = n, 0
		}
	}
	frame := viewFrame(t, bctx)
	var got map[string]any
	var err error
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		got, err = chromedp.Run(frame, chromedp.Evaluate[map[string]any](probe))
		if err == nil && got["ready"] == true || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatalf("%s: reading the view: %v", name, err)
	}
	// Let the host apply the view's size before the check and the picture.
	time.Sleep(300 * time.Millisecond)
	assertReadable(t, frame, what)
	p := filepath.Join(t.ArtifactDir(), fmt.Sprintf("view-%s-%d.png", name, v.width))
	if err := os.WriteFile(p, frameShot(t, bctx, what), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", p)
	state, _ := chromedp.Run(bctx, chromedp.Evaluate[map[string]any](`window.hostState`))
	if log, _ := state["log"].([]any); strings.Contains(fmt.Sprint(log), "tools/call") {
		t.Errorf("%s: the view asked the host to call a tool: %v", name, log)
	}
	if title, _ := chromedp.Run(bctx, chromedp.Evaluate[string](`document.title`)); title == "owned" {
		t.Errorf("%s: a store name ran script", name)
	}
	return got
}

// checkBidiOverride: the override is shown as a visible escape inside an
// isolated element, and every view shows the product's name.
func (v *viewsWorld) checkBidiOverride() {
	t := v.t
	for _, name := range []string{"hostile-risk", "hostile-order"} {
		got := v.show(name, `(() => {
			const text = document.body.textContent;
			const u = document.querySelector(".untrusted");
			return { ready: !!document.querySelector("h1, section.panel"),
				controls: /[\u202a-\u202e\u2066-\u2069\u200e\u200f]/.test(text),
				escaped: text.includes("Madeta butter 250g\\u202E"),
				isolate: u ? getComputedStyle(u).unicodeBidi : "" };
		})()`)
		if got["controls"] != false || got["escaped"] != true || got["isolate"] != "isolate" {
			t.Errorf("%s view with a bidi override in the product name: %v", name, got)
		}
	}
}

// checkApprovalView: the staged order's view names its approval.
func (v *viewsWorld) checkApprovalView() {
	t := v.t
	staged := v.show("approval", orderProbe)
	approvalID, _ := v.cases["approval"].data(t)["approval_id"].(string)
	if !strings.Contains(staged["mode"].(string), "waiting for an approver") || approvalID == "" || !strings.Contains(staged["approval"].(string), approvalID) {
		t.Errorf("approval view: heading %q, approval panel %q, want approval %q", staged["mode"], staged["approval"], approvalID)
	}
}

// viewCase is a tool's view and one call of that tool, as the binary answered.
type viewCase struct {
	Tool      string          `json:"tool"`
	HTML      string          `json:"html"`
	Width     int             `json:"width,omitempty"`
	HostCtx   map[string]any  `json:"hostContext,omitempty"`
	CSP       any             `json:"csp"`
	Arguments map[string]any  `json:"arguments"`
	Result    json.RawMessage `json:"result"`
}

func (c *viewCase) data(t *testing.T) map[string]any {
	t.Helper()
	var res struct {
		StructuredContent map[string]any `json:"structuredContent"`
	}
	if err := json.Unmarshal(c.Result, &res); err != nil {
		t.Fatal(err)
	}
	d, _ := res.StructuredContent["data"].(map[string]any)
	if d == nil {
		t.Fatalf("%s answered %s", c.Tool, c.Result)
	}
	return d
}

// appsHostSession is the binary over stdio, with a client declaring the MCP Apps extension.
type appsHostSession struct {
	t     *testing.T
	cs    *mcp.ClientSession
	tools map[string]*mcp.Tool
}

func startAppsHost(t *testing.T, env []string) *appsHostSession {
	t.Helper()
	cmd := exec.Command(e2etest.Binary(t))
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	stderr := &e2etest.SyncBuffer{}
	cmd.Stderr = stderr
	caps := &mcp.ClientCapabilities{}
	caps.AddExtension("io.modelcontextprotocol/ui", map[string]any{"mimeTypes": []string{"text/html;profile=mcp-app"}})
	client := mcp.NewClient(&mcp.Implementation{Name: "e2e-apps-host", Version: "1"}, &mcp.ClientOptions{Capabilities: caps})
	ctx, cancel := context.WithTimeout(t.Context(), 15*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect: %v\n%s", err, stderr.String())
	}
	t.Cleanup(func() { _ = cs.Close() })
	list, err := cs.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	h := &appsHostSession{t: t, cs: cs, tools: map[string]*mcp.Tool{}}
	for _, tool := range list.Tools {
		h.tools[tool.Name] = tool
	}
	return h
}

// viewCase finds the tool's view as a host does and calls the tool.
func (h *appsHostSession) viewCase(tool string, args map[string]any) *viewCase {
	t := h.t
	t.Helper()
	ctx := t.Context()
	ui, _ := h.tools[tool].Meta["ui"].(map[string]any)
	uri, _ := ui["resourceUri"].(string)
	if !strings.HasPrefix(uri, "ui://") {
		t.Fatalf("%s names no view for a host declaring the extension: _meta %v", tool, h.tools[tool].Meta)
	}
	rr, err := h.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
	if err != nil || len(rr.Contents) != 1 {
		t.Fatalf("resources/read %s: %v", uri, err)
	}
	c := rr.Contents[0]
	if c.MIMEType != "text/html;profile=mcp-app" {
		t.Fatalf("%s: mimeType %q", uri, c.MIMEType)
	}
	metaUI, _ := c.Meta["ui"].(map[string]any)
	res, err := h.cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", tool, err)
	}
	if res.IsError {
		t.Fatalf("%s: tool error %v", tool, res.Content)
	}
	raw, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return &viewCase{Tool: tool, HTML: c.Text, CSP: metaUI["csp"], Arguments: args, Result: raw}
}

// appsHostTool returns the pinned esbuild, skipping without it, failing under CI.
func appsHostTool(t *testing.T) string {
	t.Helper()
	root := e2etest.Root(t)
	b, err := os.ReadFile(filepath.Join(root, "e2e", "appshost", "package.json"))
	if err != nil {
		t.Fatal(err)
	}
	var pkg struct {
		Dependencies map[string]string `json:"dependencies"`
	}
	if err := json.Unmarshal(b, &pkg); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, ".tools", "appshost-"+pkg.Dependencies["@modelcontextprotocol/ext-apps"])
	esbuild := filepath.Join(dir, "node_modules", ".bin", "esbuild")
	if _, err := os.Stat(filepath.Join(dir, ".installed")); err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the MCP Apps host is not installed (%v), and CI must run this test: make appshost", err)
		}
		t.Skipf("the MCP Apps host is not installed: make appshost (%v)", err)
	}
	return esbuild
}

// viewFrame is a context in the view's sandboxed frame, which chromium may
// run in its own target or in the page's process.
func viewFrame(t *testing.T, page context.Context) context.Context {
	t.Helper()
	infos, err := chromedp.Targets(page)
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range infos {
		if info.Type == "iframe" {
			ctx, cancel := chromedp.NewContext(page, chromedp.WithTargetID(info.TargetID))
			t.Cleanup(cancel)
			return ctx
		}
	}
	t.Fatalf("no frame target among %d targets", len(infos))
	return nil
}
