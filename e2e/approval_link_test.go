package e2e_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/korral/storelink/internal/e2etest"
)

// Approval in the conversation (ADR 0021): the console and the MCP server
// are separate processes sharing only the ledger.

// TestWebhookLinkOpensTheOrder: a webhook's console_url leads through the
// log-in to the order's page; the tool's answer carries the same link.
func TestWebhookLinkOpensTheOrder(t *testing.T) {
	_, hook, env, secret := journeyWorld(t)
	c := startConsoleProc(t, env)
	p := e2etest.StartServer(t, append(env, "CONSOLE_PUBLIC_URL="+c.url))
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id, _ := staged["approval_id"].(string)
	if staged["mode"] != "pending_approval" || id == "" {
		t.Fatalf("staged: %v", staged)
	}
	link := c.url + "/orders/" + id
	if next, _ := staged["next_step"].(string); !strings.Contains(next, link) || !strings.Contains(next, "log") {
		t.Errorf("a host without URL elicitation does not read the link in next_step: %q", next)
	}
	n := hook.notice(t)
	if n["console_url"] != link || !strings.Contains(plainText(n["text"]), link) {
		t.Fatalf("the notice links to %v (text %q), want %s", n["console_url"], n["text"], link)
	}

	jana := newConsoleClient(t, c.url)
	code, body, at := jana.get(strings.TrimPrefix(n["console_url"].(string), c.url))
	if at.Path != "/login" || !strings.Contains(body, `name="next" value="/orders/`+id+`"`) {
		t.Fatalf("the link without a session answered %d at %s:\n%s", code, at, body)
	}
	code, body = jana.post("/login", map[string][]string{"name": {"jana"}, "secret": {secret}, "next": {"/orders/" + id}}, false)
	if code != http.StatusOK || !strings.Contains(body, id) || !strings.Contains(body, "Madeta butter 250g") || !strings.Contains(body, `id="approve"`) {
		t.Fatalf("the log-in from the link: %d\n%s", code, body)
	}
	// Logged in, the link opens the order at once.
	if code, body, at := jana.get("/orders/" + id); code != http.StatusOK || at.Path != "/orders/"+id || !strings.Contains(body, "24 units") {
		t.Errorf("the link with a session: %d at %s", code, at)
	}
}

// TestApprovalThroughURLElicitation: the 1.x client gets a URL elicitation,
// chromium approves there, the client is notified of completion and the mock
// holds exactly one order. Rejecting, lapsing and an out-of-scope approver
// each send nothing.
func TestApprovalThroughURLElicitation(t *testing.T) {
	inst := findTSClient(t)
	chromium := e2etest.NeedTool(t, "chromium", "chromium")
	w, hook, env, secret := journeyWorld(t)
	petr := addApprover(t, env, "petr", "--stores", "102")
	c := startConsoleProc(t, env)
	h := launchConsentHost(t, inst, "url host", stdioServer(t, append(env, "CONSOLE_PUBLIC_URL="+c.url), map[string]any{"generation": "1", "url_elicitation": true}))
	if h.protocol != "2025-11-25" {
		t.Fatalf("the client connected with %s", h.protocol)
	}
	u := &urlApproval{t: t, w: w, h: h, hook: hook, c: c, pg: page{t: t, ctx: browser(t, chromium, 1280, 1000), logs: c.stderr.String}}
	u.approve(secret)
	creates := w.Requests(isCreate)
	u.reject()
	sentNothing(t, w, "rejected", creates)
	u.lapse()
	sentNothing(t, w, "lapsed", creates)
	u.outOfScope(petr)
	sentNothing(t, w, "out of scope", creates)
	if got := len(placed(w)); got != 1 {
		t.Errorf("StoreLink holds %d orders, want still 1", got)
	}
	for _, o := range placed(w) {
		if o.QuantityUnits != 24 {
			t.Errorf("StoreLink holds an order of %d units", o.QuantityUnits)
		}
	}
	judge(t, w)
}

// urlApproval is what the steps of TestApprovalThroughURLElicitation share.
type urlApproval struct {
	t    *testing.T
	w    *e2etest.World
	h    *consentHost
	hook *hookReceiver
	c    *consoleProc
	pg   page
}

// stage confirms an order; the host is asked to open its page.
func (u *urlApproval) stage(label string, qty int, key string) (id, link string) {
	t, h := u.t, u.h
	t.Helper()
	r := h.do(label, map[string]any{"arguments": e2etest.Order(qty, "confirm", true, "idempotency_key", key), "answer": map[string]any{"action": "accept"}})
	d := data(t, h.expect(label, r, "ok"))
	id, _ = d["approval_id"].(string)
	if d["mode"] != "pending_approval" || id == "" {
		t.Fatalf("%s: staged %v", label, d)
	}
	if len(r.Asked) != 1 {
		t.Fatalf("%s: the host was asked %d question(s), want one", label, len(r.Asked))
	}
	q := r.Asked[0]
	link = u.c.url + "/orders/" + id
	if q.Mode != "url" || q.URL != link || q.ElicitationID != id || !strings.Contains(q.Message, "log-in required") {
		t.Fatalf("%s: the host was asked %+v, want mode url, %s, elicitation id %s", label, q, link, id)
	}
	if strings.Contains(q.URL, "token") || strings.Contains(q.URL, "secret") || strings.Contains(q.URL, "?") {
		t.Errorf("%s: the link carries more than the approval id: %s", label, q.URL)
	}
	if next, _ := d["next_step"].(string); !strings.Contains(next, "host opened the order's page") {
		t.Errorf("%s: next_step %q", label, next)
	}
	if n := u.hook.notice(t); n["console_url"] != link {
		t.Errorf("%s: the notice links to %v, want %s", label, n["console_url"], link)
	}
	return id, link
}

func (u *urlApproval) awaitComplete(label, id string, want bool) {
	u.t.Helper()
	if got := u.h.completed(label, id); got != want {
		u.t.Errorf("%s: notifications/elicitation/complete for %s received: %v, want %v\nserver stderr:\n%s", label, id, got, want, tail(u.h.stderr.String(), 4000))
	}
}

// approve: jana opens the URL, logs in and approves; exactly that order lands.
func (u *urlApproval) approve(secret string) {
	t := u.t
	id, link := u.stage("confirm", 24, "url-elicit-approve-0001")
	if len(placed(u.w)) != 0 {
		t.Fatal("staging raised an order")
	}
	u.pg.do("open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("name")))
	u.pg.do("type the name and secret", chromedp.SendKeys(chromedp.ID("name"), "jana"), chromedp.SendKeys(chromedp.ID("secret"), secret))
	u.pg.submit("log in", "#login")
	u.pg.do("wait for the order", chromedp.WaitVisible(chromedp.ID("approve")))
	if loc, err := chromedp.Run(u.pg.ctx, chromedp.Location()); err != nil || !strings.HasSuffix(loc, "/orders/"+id) {
		t.Errorf("after the log-in the browser is at %s (%v), want the order", loc, err)
	}
	if h1 := u.pg.text("h1"); !strings.Contains(h1, "Madeta butter 250g") {
		t.Errorf("the order page's heading: %q", h1)
	}
	u.pg.submit("approve", "#approve")
	u.pg.do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	if got := u.pg.text("#outcome"); !strings.Contains(got, "Order raised") {
		t.Errorf("the outcome reads %q", got)
	}
	u.awaitComplete("approved", id, true)
	if led := u.h.statusLedger("status after approval", id); led["state"] != "raised" || led["decided_by"] != "jana" {
		t.Errorf("status after approval: %v", led)
	}
	if got := len(placed(u.w)); got != 1 {
		t.Fatalf("StoreLink holds %d orders, want exactly 1", got)
	}
}

// reject: the logged-in approver rejects the next one with a reason.
func (u *urlApproval) reject() {
	id, link := u.stage("confirm to reject", 36, "url-elicit-reject-0001")
	u.pg.do("open the link", chromedp.Navigate(link), chromedp.WaitVisible(chromedp.ID("reason")))
	u.pg.do("type the reason", chromedp.SendKeys(chromedp.ID("reason"), "Store 47 had a delivery this morning."))
	u.pg.submit("reject", "#reject")
	u.pg.do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	u.awaitComplete("rejected", id, true)
	if led := u.h.statusLedger("status after rejection", id); led["state"] != "rejected" {
		u.t.Errorf("status after rejection: %v", led)
	}
}

// lapse: the host is told the approval ran out, and a late approve is not raised.
func (u *urlApproval) lapse() {
	id, link := u.stage("confirm to lapse", 48, "url-elicit-lapse-00001")
	execState(u.t, u.w.StatePath, `UPDATE entries SET approval_expires_at = ? WHERE approval_id = ?`, time.Now().Add(-time.Minute).UTC().Format(ledgerTime), id)
	u.awaitComplete("lapsed", id, true)
	u.pg.do("open the link", chromedp.Navigate(link), chromedp.WaitReady("body"))
	if ok, _ := chromedp.Run(u.pg.ctx, chromedp.Evaluate[bool](`!!document.querySelector("#approve")`)); ok {
		u.pg.submit("approve the lapsed order", "#approve")
	}
	if led := u.h.statusLedger("status after the lapse", id); led["state"] == "raised" {
		u.t.Errorf("a lapsed approval was raised: %v", led)
	}
}

// outOfScope: petr (store 102) neither sees nor decides the store 47 order,
// and the host is not told it is complete.
func (u *urlApproval) outOfScope(petrSecret string) {
	t := u.t
	id, link := u.stage("confirm for petr", 12, "url-elicit-scope-00001")
	pc := newConsoleClient(t, u.c.url)
	if _, _, at := pc.get(strings.TrimPrefix(link, u.c.url)); at.Path != "/login" {
		t.Fatalf("the link without a session went to %s", at)
	}
	code, body := pc.post("/login", map[string][]string{"name": {"petr"}, "secret": {petrSecret}, "next": {"/orders/" + id}}, false)
	if code == http.StatusOK && strings.Contains(body, `id="approve"`) {
		t.Errorf("petr, out of scope, got the order's approve form")
	}
	pc.get("/")
	pc.post("/orders/"+id+"/approve", nil, false)
	if led := u.h.statusLedger("status after petr", id); led["state"] != "pending_approval" {
		t.Errorf("after petr's attempt the order is %v", led)
	}
	u.awaitComplete("out of scope", id, false)
}

// statusLedger returns the ledger part of id's status at store 47.
func (h *consentHost) statusLedger(label, id string) map[string]any {
	h.t.Helper()
	r := h.do(label, map[string]any{"name": "korral_get_order_status", "arguments": map[string]any{"order_id": id, "store_id": "47"}})
	led, _ := data(h.t, h.expect(label, r, "ok"))["ledger"].(map[string]any)
	return led
}

// janaApproves logs jana in from approval id's link and approves it.
func janaApproves(t *testing.T, consoleURL, secret, id string) {
	t.Helper()
	jana := newConsoleClient(t, consoleURL)
	jana.get("/orders/" + id)
	if code, body := jana.post("/login", map[string][]string{"name": {"jana"}, "secret": {secret}, "next": {"/orders/" + id}}, false); code != http.StatusOK || !strings.Contains(body, `id="approve"`) {
		t.Fatalf("jana's log-in from the link: %d", code)
	}
	if code, body := jana.post("/orders/"+id+"/approve", nil, false); code != http.StatusOK || !strings.Contains(body, "Order raised") {
		t.Fatalf("approve: %d\n%s", code, body)
	}
}

// completed reports whether notifications/elicitation/complete for id arrived (within 15 s).
func (h *consentHost) completed(label, id string) bool {
	h.t.Helper()
	h.nextID++
	line, _ := json.Marshal(map[string]any{"id": h.nextID, "await_complete": id, "timeout_ms": 15000})
	if _, err := h.stdin.Write(append(line, '\n')); err != nil {
		h.t.Fatal(err)
	}
	var got struct {
		ID        int  `json:"id"`
		Completed bool `json:"completed"`
	}
	if raw := h.next(30 * time.Second); raw == nil || json.Unmarshal(raw, &got) != nil || got.ID != h.nextID {
		h.t.Fatalf("%s: no answer to await_complete: %s\nstderr:\n%s", label, raw, tail(h.stderr.String(), 4000))
	}
	return got.Completed
}

// TestApprovalThroughInputRequired is the same on 2026-07-28: the confirm is
// answered input_required with a URL request, the client retries, and the
// status tool reports the approver's decision.
func TestApprovalThroughInputRequired(t *testing.T) {
	inst := findTSClient(t)
	requireClient2(t, inst)
	w, hook, env, secret := journeyWorld(t)
	c := startConsoleProc(t, env)
	h := launchConsentHost(t, inst, "url host 2026", stdioServer(t, append(env, "CONSOLE_PUBLIC_URL="+c.url), map[string]any{"generation": "2", "url_elicitation": true}))

	r := h.do("confirm", map[string]any{"arguments": e2etest.Order(24, "confirm", true, "idempotency_key", "url-input-required-01"), "answer": map[string]any{"action": "accept"}})
	d := data(t, h.expect("confirm", r, "ok"))
	id, _ := d["approval_id"].(string)
	link := c.url + "/orders/" + id
	if id == "" || len(r.Asked) != 1 {
		t.Fatalf("confirm: asked %d question(s), answer %v", len(r.Asked), d)
	}
	if q := r.Asked[0]; q.Mode != "url" || q.URL != link || q.ElicitationID != "" || !strings.Contains(q.Message, "log-in required") {
		t.Errorf("the host was asked %+v, want mode url and %s", q, link)
	}
	if next, _ := d["next_step"].(string); !strings.Contains(next, link) {
		t.Errorf("the retry's next_step lacks the link: %q", next)
	}
	if n := hook.notice(t); n["approval_id"] != id {
		t.Errorf("notice: %v", n)
	}
	if len(placed(w)) != 0 {
		t.Fatal("staging raised an order")
	}

	janaApproves(t, c.url, secret, id)
	if led := h.statusLedger("status", id); led["state"] != "raised" {
		t.Errorf("status after approval: %v", led)
	}
	if got := len(placed(w)); got != 1 {
		t.Errorf("StoreLink holds %d orders, want 1", got)
	}
	judge(t, w)
}

// TestApprovalThroughURLElicitationOverHTTP: the same over a stateful HTTP
// session; the completion arrives on the session's stream after the call.
func TestApprovalThroughURLElicitationOverHTTP(t *testing.T) {
	inst := findTSClient(t)
	w, _, env, secret := journeyWorld(t)
	c := startConsoleProc(t, env)
	tokens := filepath.Join(w.Dir, "tokens")
	e2etest.WriteTokenFile(t, tokens, "dairy-agent "+e2etest.TokenDairy+"\n", time.Now())
	p := e2etest.StartHTTP(t, append(env, "MCP_AUTH_TOKENS_FILE="+tokens, "CONSOLE_PUBLIC_URL="+c.url))
	h := launchConsentHost(t, inst, "http url host", map[string]any{"url": p.Base + "/mcp", "token": e2etest.TokenDairy, "generation": "1", "url_elicitation": true})

	r := h.do("confirm", map[string]any{"arguments": e2etest.Order(24, "confirm", true, "idempotency_key", "http-url-elicit-0001"), "answer": map[string]any{"action": "accept"}})
	d := data(t, h.expect("confirm", r, "ok"))
	id, _ := d["approval_id"].(string)
	if len(r.Asked) != 1 || r.Asked[0].Mode != "url" || r.Asked[0].URL != c.url+"/orders/"+id || r.Asked[0].ElicitationID != id {
		t.Fatalf("asked %+v for %v", r.Asked, d)
	}
	janaApproves(t, c.url, secret, id)
	if !h.completed("approved", id) {
		t.Errorf("no notifications/elicitation/complete over HTTP\nserver stderr:\n%s", tail(p.Stderr.String(), 4000))
	}
	if led := h.statusLedger("status", id); led["state"] != "raised" {
		t.Errorf("status after approval: %v", led)
	}
	if got := len(placed(w)); got != 1 {
		t.Errorf("StoreLink holds %d orders, want 1", got)
	}
}
