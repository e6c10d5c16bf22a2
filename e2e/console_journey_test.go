package e2e_test

import (
	"bufio"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// The approvals console journey: the agent stages an order over stdio, the
// webhook gets the signed notice, an approver approves in a real browser,
// and StoreLink then holds exactly that order. Refusals run over plain HTTP.

const journeyWebhookSecret = "webhook-signing-secret-0123456789"

// approvalModeEnv is approval mode's environment: approvers are in the state store, no secret on the agent's side.
func approvalModeEnv(w *e2etest.World, extra ...string) []string {
	return w.Env(append([]string{"ALLOW_WRITES=true", "WRITE_APPROVAL=required"}, extra...)...)
}

// hookReceiver is a loopback webhook receiver that passes on the notices
// whose HMAC-SHA256 signature over "t.body" verifies.
type hookReceiver struct {
	url     string
	notices chan map[string]any
	bad     chan string
}

func startHookReceiver(t *testing.T) *hookReceiver {
	t.Helper()
	r := &hookReceiver{notices: make(chan map[string]any, 16), bad: make(chan string, 16)}
	srv := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, req *http.Request) {
		body, _ := io.ReadAll(req.Body)
		if !signatureValid(req.Header.Get("X-Korral-Signature"), body) {
			r.bad <- req.Header.Get("X-Korral-Signature")
			http.Error(rw, "bad signature", http.StatusUnauthorized)
			return
		}
		var n map[string]any
		if err := json.Unmarshal(body, &n); err != nil {
			r.bad <- "not JSON"
			http.Error(rw, "bad body", http.StatusBadRequest)
			return
		}
		r.notices <- n
		rw.WriteHeader(http.StatusNoContent)
	}))
	t.Cleanup(srv.Close)
	r.url = srv.URL + "/hooks/approvals"
	return r
}

func signatureValid(header string, body []byte) bool {
	var ts, sig string
	for _, part := range strings.Split(header, ",") {
		k, v, _ := strings.Cut(part, "=")
		switch k {
		case "t":
			ts = v
		case "v1":
			sig = v
		}
	}
	unix, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || time.Since(time.Unix(unix, 0)).Abs() > 5*time.Minute {
		return false
	}
	m := hmac.New(sha256.New, []byte(journeyWebhookSecret))
	m.Write([]byte(ts + "."))
	m.Write(body)
	want := hex.EncodeToString(m.Sum(nil))
	return hmac.Equal([]byte(want), []byte(sig))
}

// notice waits (bounded) for the next verified notice.
func (r *hookReceiver) notice(t *testing.T) map[string]any {
	t.Helper()
	select {
	case n := <-r.notices:
		return n
	case b := <-r.bad:
		t.Fatalf("the webhook receiver got a notice whose signature does not verify: %q", b)
	case <-time.After(30 * time.Second):
		t.Fatal("no webhook notice within 30 s")
	}
	return nil
}

// consoleProc is a running `storelink-mcp console`.
type consoleProc struct {
	url    string
	stderr *e2etest.SyncBuffer
	// stop ends it (SIGTERM, then a kill after 10 s); it runs once, at the latest at test end.
	stop func()
}

// startConsoleProc runs `storelink-mcp console` on a free port and returns its address from the log.
func startConsoleProc(t *testing.T, env []string) *consoleProc {
	t.Helper()
	cmd := exec.Command(e2etest.Binary(t), "console", "--listen", "127.0.0.1:0")
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH")}, env...)
	pr, pw := io.Pipe()
	buf := &e2etest.SyncBuffer{}
	cmd.Stderr = io.MultiWriter(buf, pw)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); _ = pw.Close(); close(done) }()
	var once sync.Once
	stop := func() {
		once.Do(func() {
			_ = cmd.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(10 * time.Second):
				_ = cmd.Process.Kill()
				<-done
			}
		})
	}
	t.Cleanup(stop)
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			var line map[string]any
			if json.Unmarshal(sc.Bytes(), &line) == nil && line["msg"] == "console.start" {
				a, _ := line["addr"].(string)
				addr <- a
				break
			}
		}
		_, _ = io.Copy(io.Discard, pr)
	}()
	select {
	case a := <-addr:
		return &consoleProc{url: "http://" + a, stderr: buf, stop: stop}
	case <-done:
		t.Fatalf("the console exited before listening:\n%s", buf.String())
	case <-time.After(30 * time.Second):
		t.Fatalf("the console did not report its address within 30 s:\n%s", buf.String())
	}
	return nil
}

// journeyWorld is the mock, the webhook receiver, the environment and approver jana (store 47).
func journeyWorld(t *testing.T) (*e2etest.World, *hookReceiver, []string, string) {
	t.Helper()
	w := e2etest.NewWorld(t)
	hook := startHookReceiver(t)
	env := approvalModeEnv(w, "APPROVAL_WEBHOOK_URL="+hook.url, "APPROVAL_WEBHOOK_SECRET="+journeyWebhookSecret)
	secret := addApprover(t, env, "jana", "--stores", "47")
	return w, hook, env, secret
}

func TestConsoleJourneyInABrowser(t *testing.T) {
	chromium := e2etest.NeedTool(t, "chromium", "chromium")
	w, hook, env, secret := journeyWorld(t)

	// 1. The agent stages the butter order over MCP.
	p := e2etest.StartServer(t, env)
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id, _ := staged["approval_id"].(string)
	if staged["mode"] != "pending_approval" || id == "" {
		t.Fatalf("staged: %v", staged)
	}
	// 2. The receiver gets the signed notice.
	n := hook.notice(t)
	if n["approval_id"] != id || n["store_id"] != "47" || n["sku"] != mockstorelink.SKUButter || n["product_name"] != "Madeta butter 250g" ||
		num(n["quantity_units"]) != 24 || n["expires_at"] == "" || !strings.Contains(plainText(n["text"]), id) {
		t.Errorf("notice: %v", n)
	}
	if len(placed(w)) != 0 {
		t.Fatal("staging raised an order")
	}

	c := startConsoleProc(t, env)
	pg := page{t: t, ctx: browser(t, chromium, 1280, 1000), logs: c.stderr.String}

	// 3. jana logs in, sees the order and approves.
	pg.do("open the console", chromedp.Navigate(c.url+"/"), chromedp.WaitVisible(chromedp.ID("name")))
	pg.do("type the name and secret", chromedp.SendKeys(chromedp.ID("name"), "jana"), chromedp.SendKeys(chromedp.ID("secret"), secret))
	pg.submit("log in", "#login")
	pg.do("wait for the inbox", chromedp.WaitVisible(chromedp.ID("inbox")))
	pg.wantText("#inbox", "Madeta butter 250g", "24 units = 2 cases of 12", "e2e-agent")
	pg.shot("console-inbox.png")
	pg.submit("open the order", `a[href="/orders/`+id+`"]`)
	pg.do("wait for the chart", chromedp.WaitVisible(chromedp.ID("chart")))
	pg.wantText("h1", "Madeta butter 250g")
	pg.wantText("#justification", "Sold in the last 24 h", "confidence")
	bars, err := chromedp.Run(pg.ctx, chromedp.Nodes(chromedp.CSSAll("#chart rect.bar")))
	if err != nil || len(bars) == 0 {
		t.Errorf("the chart has %d bars (%v), want one per evidence day", len(bars), err)
	}
	// The approver sees what the agent saw: the quantity check and the time to stockout.
	if check := pg.text("#check"); !regexp.MustCompile(`^(ok|review|refuse)\b`).MatchString(check) {
		t.Errorf("the order page's quantity check reads %q", check)
	}
	pg.wantText("#shelf", "(")
	pg.shot("console-order.png")
	pg.submit("approve", "#approve")
	pg.do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	pg.wantText("#outcome", "Order raised")

	// Once decided, the page shows the decision, not the expiry, and does
	// not warn about the order itself as a duplicate.
	pg.do("open the decided order", chromedp.Navigate(c.url+"/orders/"+id), chromedp.WaitVisible(chromedp.ID("decision")))
	pg.wantText("#decision", "Approved by jana at ", "StoreLink raised it as order RO-")
	if main := pg.text("main"); strings.Contains(main, "open until") || strings.Contains(main, "other order(s)") || strings.Contains(main, "+00:00") {
		t.Errorf("the decided order page shows the expiry, a duplicate of itself, or a UTC time:\n%s", main)
	}

	// 4. The mock holds exactly one order, and the agent reads it raised.
	if got := len(placed(w)); got != 1 {
		t.Fatalf("StoreLink holds %d orders, want 1", got)
	}
	st := data(t, p.Call("korral_get_order_status", map[string]any{"order_id": id, "store_id": "47"}))
	if led, _ := st["ledger"].(map[string]any); led["state"] != "raised" || led["decided_by"] != "jana" {
		t.Errorf("status after approval: %v", st)
	}
	judge(t, w)
}

// consoleClient is an HTTP client of the console with cookies and the last page's CSRF token.
type consoleClient struct {
	t    *testing.T
	base string
	c    *http.Client
	csrf string
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

func newConsoleClient(t *testing.T, base string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	return &consoleClient{t: t, base: base, c: &http.Client{Jar: jar, Timeout: 30 * time.Second}}
}

func (c *consoleClient) do(req *http.Request) (int, string, *url.URL) {
	c.t.Helper()
	resp, err := c.c.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if m := csrfField.FindSubmatch(b); m != nil {
		c.csrf = string(m[1])
	}
	return resp.StatusCode, string(b), resp.Request.URL
}

func (c *consoleClient) get(path string) (int, string, *url.URL) {
	c.t.Helper()
	req, _ := http.NewRequest(http.MethodGet, c.base+path, nil)
	return c.do(req)
}

// post posts form, with the CSRF token of the last page unless noCSRF.
func (c *consoleClient) post(path string, form url.Values, noCSRF bool) (int, string) {
	c.t.Helper()
	if form == nil {
		form = url.Values{}
	}
	if !noCSRF {
		form.Set("csrf", c.csrf)
	}
	req, _ := http.NewRequest(http.MethodPost, c.base+path, strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	code, body, _ := c.do(req)
	return code, body
}

func (c *consoleClient) login(name, secret string) (int, string) {
	c.t.Helper()
	c.get("/login")
	return c.post("/login", url.Values{"name": {name}, "secret": {secret}}, false)
}

// The refusal branches: each leaves StoreLink without the order.
func TestConsoleJourneyRefusals(t *testing.T) {
	w, hook, env, secret := journeyWorld(t)
	p := e2etest.StartServer(t, env)
	stage := func(qty int) string {
		t.Helper()
		d := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(qty, "confirm", true)))
		id, _ := d["approval_id"].(string)
		if id == "" {
			t.Fatalf("nothing staged: %v", d)
		}
		hook.notice(t)
		return id
	}
	rejected, lapsed, other := stage(24), stage(36), stage(48)
	petr := addApprover(t, env, "petr", "--stores", "102")
	eva := addApprover(t, env, "eva", "--stores", "47")
	c := startConsoleProc(t, env)

	jana := newConsoleClient(t, c.url)
	if code, body := jana.login("jana", secret); code != http.StatusOK || !strings.Contains(body, `id="inbox"`) {
		t.Fatalf("jana's login: %d\n%s", code, body)
	}

	r := consoleRefusals{t: t, w: w, env: env, url: c.url}
	r.csrfThenReject(jana, rejected)
	r.lapsed(jana, lapsed)
	r.outOfScope(petr, other)
	r.revoked(eva, other)
	r.bearerToken(jana)
	r.loginLimit(secret)
	if got := len(placed(w)); got != 0 {
		t.Errorf("StoreLink holds %d orders after refusals only", got)
	}
	judge(t, w)
}

// consoleRefusals is what the steps of TestConsoleJourneyRefusals share.
type consoleRefusals struct {
	t   *testing.T
	w   *e2etest.World
	env []string
	url string
}

// csrfThenReject: a POST without CSRF changes nothing; a reject sends nothing and keeps the reason.
func (r consoleRefusals) csrfThenReject(jana *consoleClient, rejected string) {
	t := r.t
	jana.get("/orders/" + rejected)
	if code, _ := jana.post("/orders/"+rejected+"/reject", url.Values{"reason": {"Too much butter."}}, true); code != http.StatusForbidden {
		t.Errorf("a reject without the CSRF token: %d, want 403", code)
	}
	if s := ledgerState(t, r.w, rejected); s != "pending_approval" {
		t.Errorf("a POST without the CSRF token left the order %s", s)
	}
	jana.get("/orders/" + rejected)
	if code, body := jana.post("/orders/"+rejected+"/reject", url.Values{"reason": {"Store 47 had a delivery this morning."}}, false); code != http.StatusOK || !strings.Contains(body, "Rejected") {
		t.Errorf("reject: %d\n%s", code, body)
	}
	if s := ledgerState(t, r.w, rejected); s != "rejected" {
		t.Errorf("after the rejection the order is %s", s)
	}
	if _, body, _ := jana.get("/orders/" + rejected); !strings.Contains(body, "Store 47 had a delivery this morning.") {
		t.Errorf("the order page does not show the rejection's reason")
	}
}

// lapsed: approving a lapsed approval sends nothing and says so.
func (r consoleRefusals) lapsed(jana *consoleClient, lapsed string) {
	t := r.t
	jana.get("/orders/" + lapsed)
	execState(t, r.w.StatePath, `UPDATE entries SET approval_expires_at = ? WHERE approval_id = ?`, time.Now().Add(-time.Minute).UTC().Format(ledgerTime), lapsed)
	if _, body := jana.post("/orders/"+lapsed+"/approve", nil, false); !strings.Contains(strings.ToLower(body), "lapsed") {
		t.Errorf("approving a lapsed approval reads:\n%s", body)
	}
}

// outOfScope: an approver outside the store's scope neither sees nor decides the order.
func (r consoleRefusals) outOfScope(petrSecret, other string) {
	t := r.t
	pc := newConsoleClient(t, r.url)
	if code, _ := pc.login("petr", petrSecret); code != http.StatusOK {
		t.Fatalf("petr's login: %d", code)
	}
	if _, body, _ := pc.get("/"); strings.Contains(body, other) {
		t.Error("petr's inbox lists an order of store 47")
	}
	if code, _, _ := pc.get("/orders/" + other); code == http.StatusOK {
		t.Error("petr opened an order of store 47")
	}
	pc.get("/")
	pc.post("/orders/"+other+"/approve", nil, false)
}

// revoked: a revoked approver's sessions end and cannot approve, even with
// the order page open.
func (r consoleRefusals) revoked(evaSecret, other string) {
	t := r.t
	ec := newConsoleClient(t, r.url)
	if code, _ := ec.login("eva", evaSecret); code != http.StatusOK {
		t.Fatalf("eva's login: %d", code)
	}
	ec.get("/orders/" + other)
	if _, _, exit := e2etest.RunCLI(t, r.env, "approvers", "revoke", "eva"); exit != 0 {
		t.Fatal("approvers revoke eva failed")
	}
	if _, _, u := ec.get("/"); u.Path != "/login" {
		t.Errorf("a revoked approver's session still opens %s", u)
	}
	// A session revoked while its order page is open cannot approve.
	ec2 := newConsoleClient(t, r.url)
	eva2 := addApprover(t, r.env, "eva", "--stores", "47")
	if code, _ := ec2.login("eva", eva2); code != http.StatusOK {
		t.Fatalf("eva's second login: %d", code)
	}
	ec2.get("/orders/" + other)
	if _, _, exit := e2etest.RunCLI(t, r.env, "approvers", "revoke", "eva"); exit != 0 {
		t.Fatal("approvers revoke eva failed")
	}
	ec2.post("/orders/"+other+"/approve", nil, false)
	if code, _ := ec.login("eva", eva2); code != http.StatusUnauthorized {
		t.Errorf("a revoked approver's login: %d, want 401", code)
	}
	if s := ledgerState(t, r.w, other); s != "pending_approval" {
		t.Errorf("after petr's and eva's attempts the order is %s", s)
	}
}

// bearerToken: the agent's bearer token gets no page.
func (r consoleRefusals) bearerToken(jana *consoleClient) {
	t := r.t
	for _, cl := range []*consoleClient{newConsoleClient(t, r.url), jana} {
		req, _ := http.NewRequest(http.MethodGet, r.url+"/", nil)
		req.Header.Set("Authorization", "Bearer agent-token-0123456789")
		if code, body, _ := cl.do(req); code != http.StatusUnauthorized || strings.Contains(body, "inbox") {
			t.Errorf("a bearer token got %d:\n%s", code, body)
		}
	}
}

// loginLimit: after repeated wrong secrets the limit holds even against the
// right one. One failure is already counted, so four more reach five.
func (r consoleRefusals) loginLimit(secret string) {
	t := r.t
	mc := newConsoleClient(t, r.url)
	for i := range 4 {
		if code, _ := mc.login("jana", "not-janas-secret-at-all"); code != http.StatusUnauthorized {
			t.Fatalf("wrong secret #%d: %d, want 401", i+1, code)
		}
	}
	if code, body := mc.login("jana", secret); code != http.StatusTooManyRequests || strings.Contains(body, `id="inbox"`) {
		t.Errorf("after five failed logins the right secret got %d, want 429", code)
	}
}

// ledgerState is the ledger's state of an approval.
func ledgerState(t *testing.T, w *e2etest.World, approvalID string) string {
	t.Helper()
	for _, e := range ledgerEntries(t, w.StatePath) {
		if e.ApprovalID == approvalID {
			return e.State
		}
	}
	return ""
}
