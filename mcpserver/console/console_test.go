package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/console/consoletest"
)

const (
	alice  = "alice"
	secret = "correct horse battery staple"
)

func TestLoginInboxOrderApprove(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret)

	inbox := br.get("/")
	if inbox.status != http.StatusOK {
		t.Fatalf("inbox: %d", inbox.status)
	}
	mustContain(t, inbox, "Madeta butter 250g", "Praha Smíchov", "48 units = 4 cases of 12",
		"claude-desktop/buyer-agent", "2 h 00 min left", `href="/orders/ap-47"`)

	order := br.get("/orders/ap-47")
	mustContain(t, order, "Madeta butter 250g", `id="chart"`, "Sold in the last 24 h", "23 units",
		"1.0 to 1.3 days", "24 units", "12 units per case", "confidence medium", `id="approve"`,
		"review", "stock lasts only 1.3 days after delivery, less than the 2-day lead time", "about 1 h 30 min")

	tok := csrfField.FindStringSubmatch(order.body)[1]
	out := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}})
	if out.status != http.StatusOK {
		t.Fatalf("approve: %d\n%s", out.status, out.body)
	}
	mustContain(t, out, "Order raised: RO-100001", "submitted")
	if got := f.b.Raised(); len(got) != 1 {
		t.Fatalf("raised %v, want one order", got)
	}
	if again := br.get("/"); !strings.Contains(again.body, "Nothing waits for a decision") {
		t.Errorf("inbox after approving still lists the order:\n%s", again.body)
	}
	hist := br.get("/history")
	mustContain(t, hist, "raised", "RO-100001", alice)
}

func TestScopeErrors(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, "bob", "bobs secret") // store 102 only
	if a := br.get("/"); strings.Contains(a.body, "ap-47") {
		t.Errorf("bob's inbox lists store 47's order:\n%s", a.body)
	}
	a := br.get("/orders/ap-47")
	if a.status != http.StatusForbidden {
		t.Fatalf("order outside scope: %d", a.status)
	}
	mustContain(t, a, "Outside your stores")
	if strings.Contains(a.body, "Madeta") {
		t.Errorf("the out-of-scope page shows the order")
	}
	tok := br.token("/")
	if a := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}}); a.status != http.StatusForbidden {
		t.Errorf("approve outside scope: %d", a.status)
	}
	if a := br.post("/orders/ap-47/reject", url.Values{"csrf": {tok}, "reason": {"no"}}); a.status != http.StatusForbidden {
		t.Errorf("reject outside scope: %d", a.status)
	}
	if len(f.b.Raised()) != 0 || f.b.Status("ap-47") != console.StatusPending {
		t.Errorf("an out-of-scope approver changed the order")
	}
	if a := br.get("/orders/no-such"); a.status != http.StatusNotFound || !strings.Contains(a.body, "No such order") {
		t.Errorf("unknown approval: %d", a.status)
	}
	// A scope narrowed after the login applies at the next click.
	alices := f.loggedIn(t, alice, secret)
	f.b.SetStores(alice, "102")
	if a := alices.get("/orders/ap-47"); a.status != http.StatusForbidden {
		t.Errorf("after narrowing alice's scope: %d", a.status)
	}
}

func TestChartHasOneBarPerEvidenceRow(t *testing.T) {
	bar := regexp.MustCompile(`<rect class="bar[ "]`)
	for _, days := range []int{1, 3, 14, 28} {
		f := newFixture(t, nil)
		d := consoletest.Butter(t0, "ap-x", "47", "Praha Smíchov")
		for len(d.Evidence) < days {
			d.Evidence = append([]console.EvidenceDay{{Date: "2026-06-01", UnitsSold: 9}}, d.Evidence...)
		}
		d.Evidence = d.Evidence[len(d.Evidence)-days:]
		f.b.Stage(d)
		a := f.loggedIn(t, alice, secret).get("/orders/ap-x")
		if got := len(bar.FindAllString(a.body, -1)); got != days {
			t.Errorf("%d evidence rows drew %d bars", days, got)
		}
		svg := a.body[strings.Index(a.body, "<svg"):strings.Index(a.body, "</svg>")]
		for _, part := range []string{`<title id="chart-title">Units of Madeta butter 250g sold per day`, `class="onhand"`,
			`class="window"`, "units sold per day", "store-local day", "on hand 5", `role="img"`} {
			if !strings.Contains(svg, part) {
				t.Errorf("%d days: the chart lacks %q", days, part)
			}
		}
	}
}

func TestDoubleClickedApproveRaisesOneOrder(t *testing.T) {
	t.Run("one after the other, backend not single use", func(t *testing.T) {
		f := newFixture(t, nil)
		f.b.NotSingleUse = true
		br := f.loggedIn(t, alice, secret)
		tok := br.token("/orders/ap-47")
		first := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}})
		second := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}})
		mustContain(t, first, "Order raised: RO-100001")
		mustContain(t, second, "Already approved as RO-100001")
		if got := f.b.Raised(); len(got) != 1 {
			t.Errorf("raised %v, want one order", got)
		}
	})
	t.Run("at the same time, backend not single use", func(t *testing.T) {
		f := newFixture(t, nil)
		f.b.NotSingleUse = true
		br := f.loggedIn(t, alice, secret)
		tok := br.token("/orders/ap-47")
		var wg sync.WaitGroup
		bodies := make([]string, 2)
		for i := range bodies {
			wg.Go(func() { bodies[i] = br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}}).body })
		}
		wg.Wait()
		if got := f.b.Raised(); len(got) != 1 {
			t.Errorf("raised %v, want one order", got)
		}
		if !strings.Contains(strings.Join(bodies, ""), "Already approved as RO-100001") {
			t.Errorf("neither answer says already approved")
		}
	})
	t.Run("second console replica, backend single use", func(t *testing.T) {
		f := newFixture(t, nil)
		h2, _ := console.New(f.b, console.Options{Now: f.clock.Now})
		srv2 := httptest.NewServer(h2)
		defer srv2.Close()
		br := f.loggedIn(t, alice, secret)
		br.post("/orders/ap-47/approve", url.Values{"csrf": {br.token("/orders/ap-47")}})
		other := (&fixture{srv: srv2, b: f.b}).loggedIn(t, alice, secret)
		a := other.post("/orders/ap-47/approve", url.Values{"csrf": {other.token("/")}})
		mustContain(t, a, "Already approved as RO-100001", "by alice")
		if got := f.b.Raised(); len(got) != 1 {
			t.Errorf("raised %v, want one order", got)
		}
	})
}

func TestApprovalLapsedWhileThePageWasOpen(t *testing.T) {
	// The session outlives the approval, as when the page was opened near
	// its expiry and left open.
	f := newFixture(t, func(o *console.Options) { o.IdleTimeout = 4 * time.Hour })
	br := f.loggedIn(t, alice, secret)
	page := br.get("/orders/ap-47")
	mustContain(t, page, `id="approve"`)
	tok := csrfField.FindStringSubmatch(page.body)[1]
	f.clock.Advance(2*time.Hour + time.Second)
	a := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}})
	if a.status != http.StatusConflict {
		t.Fatalf("approve after expiry: %d\n%s", a.status, a.body)
	}
	mustContain(t, a, "Lapsed, nothing was sent")
	if len(f.b.Raised()) != 0 {
		t.Errorf("a lapsed approval raised %v", f.b.Raised())
	}
	again := br.get("/orders/ap-47")
	mustContain(t, again, "lapsed")
	if strings.Contains(again.body, `id="approve"`) {
		t.Errorf("the lapsed order still offers Approve")
	}
	mustContain(t, br.get("/history"), "lapsed", "nobody")
}

func TestRejectNeedsAReason(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret)
	tok := br.token("/orders/ap-47")
	for _, reason := range []string{"", "   \n\t "} {
		a := br.post("/orders/ap-47/reject", url.Values{"csrf": {tok}, "reason": {reason}})
		if a.status != http.StatusBadRequest {
			t.Errorf("reason %q: %d, want 400", reason, a.status)
		}
		mustContain(t, a, "Write a reason", `id="reject-error"`)
	}
	long := strings.Repeat("x", 1001)
	if a := br.post("/orders/ap-47/reject", url.Values{"csrf": {tok}, "reason": {long}}); a.status != http.StatusBadRequest {
		t.Errorf("a 1001-character reason: %d", a.status)
	}
	if n := f.b.Calls("Reject"); n != 0 {
		t.Fatalf("Reject called %d times without a reason", n)
	}
	a := br.post("/orders/ap-47/reject", url.Values{"csrf": {tok}, "reason": {"Delivery already due tomorrow."}})
	if a.status != http.StatusOK {
		t.Fatalf("reject: %d\n%s", a.status, a.body)
	}
	mustContain(t, a, "Rejected", "Delivery already due tomorrow.")
	if st := f.b.Status("ap-47"); st != console.StatusRejected || len(f.b.Raised()) != 0 {
		t.Errorf("after reject: status %s, raised %v", st, f.b.Raised())
	}
	mustContain(t, br.get("/history"), "rejected", "Delivery already due tomorrow.", alice)
	// Approving a rejected order sends nothing.
	mustContain(t, br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}}), "Already rejected", "rejected by alice", "Nothing was sent")
	if len(f.b.Raised()) != 0 {
		t.Errorf("approving a rejected order raised %v", f.b.Raised())
	}
}

func TestRequesterCannotApprove(t *testing.T) {
	f := newFixture(t, nil)
	f.b.AddApprover("claude-desktop/buyer-agent", "s3")
	br := f.loggedIn(t, "claude-desktop/buyer-agent", "s3")
	a := br.post("/orders/ap-47/approve", url.Values{"csrf": {br.token("/")}})
	if a.status != http.StatusConflict {
		t.Fatalf("requester approves: %d", a.status)
	}
	mustContain(t, a, "Not sent", "you requested this order")
	if len(f.b.Raised()) != 0 {
		t.Errorf("raised %v", f.b.Raised())
	}
}

func TestUntrustedTextIsShownAsText(t *testing.T) {
	f := newFixture(t, nil)
	d := consoletest.Butter(t0, "ap-evil", "47", "⟦untrusted:1a2b3c⟧Praha <b>Smíchov</b>⟦/1a2b3c⟧")
	d.ProductName = "⟦untrusted:1a2b3c⟧<script>alert(1)</script> butter⟦/1a2b3c⟧"
	d.Reason = "urgent\u202egnp.exe </td><td>forged"
	d.RequestedBy = `agent" onmouseover="x`
	f.b.Stage(d)
	br := f.loggedIn(t, alice, secret)
	for _, path := range []string{"/", "/orders/ap-evil"} {
		a := br.get(path)
		mustContain(t, a, "&lt;script&gt;alert(1)&lt;/script&gt; butter", "Praha &lt;b&gt;Smíchov&lt;/b&gt;", `urgent\u202egnp.exe &lt;/td&gt;&lt;td&gt;forged`)
		for _, bad := range []string{"⟦", "<script>", "<b>", "\u202e", `onmouseover="x`} {
			if strings.Contains(a.body, bad) {
				t.Errorf("%s contains %q", path, bad)
			}
		}
	}
}

func TestAuditDay(t *testing.T) {
	f := newFixture(t, nil)
	f.b.AddAudit(console.AuditRow{Time: t0.Add(-24 * time.Hour), Tool: "korral_check_stock_risk", StoreID: "47", Outcome: "ok", Summary: "yesterday's call"})
	f.b.AddAudit(console.AuditRow{Time: t0.Add(-time.Hour), Tool: "korral_raise_replenishment_order", StoreID: "47", SKU: "8847291", Outcome: "ok", Summary: "staged 48 units", CallID: "c-1"})
	f.b.AddAudit(console.AuditRow{Time: t0.Add(-time.Hour), Tool: "korral_check_stock_risk", StoreID: "102", Outcome: "error", ErrorCode: "UPSTREAM_TIMEOUT", Summary: "store 102 call"})
	alices := f.loggedIn(t, alice, secret)
	a := alices.get("/audit")
	mustContain(t, a, "2026-07-16", "staged 48 units", "store 102 call", "UPSTREAM_TIMEOUT", `type="date"`)
	if strings.Contains(a.body, "yesterday's call") {
		t.Errorf("today's audit shows yesterday's call")
	}
	mustContain(t, alices.get("/audit?day=2026-07-15"), "yesterday&#39;s call")
	if a := alices.get("/audit?day=15.7.2026"); a.status != http.StatusBadRequest || !strings.Contains(a.body, "YYYY-MM-DD") {
		t.Errorf("bad day: %d", a.status)
	}
	bobs := f.loggedIn(t, "bob", "bobs secret")
	b := bobs.get("/audit")
	mustContain(t, b, "store 102 call")
	if strings.Contains(b.body, "staged 48 units") {
		t.Errorf("bob's audit shows store 47")
	}
}

// errorBackend reports Approve's lapsed and already-decided verdicts as
// errors, the way an adapter passing the workflow's errors through would.
type errorBackend struct{ *consoletest.Backend }

func (b errorBackend) Approve(ctx context.Context, a console.Approver, id string) (console.Outcome, error) {
	o, err := b.Backend.Approve(ctx, a, id)
	switch o.Kind {
	case console.OutcomeLapsed:
		return console.Outcome{}, fmt.Errorf("workflow: %w", console.ErrLapsed)
	case console.OutcomeAlreadyDecided:
		return console.Outcome{}, &console.DecidedError{Status: o.Prior, OrderID: o.OrderID, DecidedBy: o.DecidedBy}
	}
	return o, err
}

func TestApproveVerdictsAsErrors(t *testing.T) {
	f := newFixture(t, nil)
	h, err := console.New(errorBackend{f.b}, console.Options{Now: f.clock.Now, IdleTimeout: 4 * time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	f.b.Stage(consoletest.Butter(t0, "ap-late", "47", "Praha Smíchov"))
	f.b.Stage(func() console.OrderDetail {
		d := consoletest.Butter(t0, "ap-later", "47", "Praha Smíchov")
		d.ExpiresAt = t0.Add(5 * time.Hour)
		return d
	}())
	br := (&fixture{srv: srv, b: f.b}).loggedIn(t, alice, secret)
	tok := br.token("/")

	mustContain(t, br.post("/orders/ap-later/approve", url.Values{"csrf": {tok}}), "Order raised: RO-100001")
	// Another replica's approve reaches the backend, which answers with a
	// *DecidedError.
	h2, _ := console.New(errorBackend{f.b}, console.Options{Now: f.clock.Now})
	srv2 := httptest.NewServer(h2)
	defer srv2.Close()
	br2 := (&fixture{srv: srv2, b: f.b}).loggedIn(t, alice, secret)
	mustContain(t, br2.post("/orders/ap-later/approve", url.Values{"csrf": {br2.token("/")}}), "Already approved as RO-100001")

	f.clock.Advance(3 * time.Hour)
	a := br.post("/orders/ap-late/approve", url.Values{"csrf": {tok}})
	if a.status != http.StatusConflict {
		t.Fatalf("lapsed as an error: %d\n%s", a.status, a.body)
	}
	mustContain(t, a, "Lapsed, nothing was sent")
	if got := f.b.Raised(); len(got) != 1 {
		t.Errorf("raised %v, want one order", got)
	}
}

// An order left sending by a stopped process reads as being sent for a
// while, then as interrupted, with the runbook's step.
func TestInterruptedSendShowsTheRunbookStep(t *testing.T) {
	f := newFixture(t, nil)
	f.b.Claim("ap-47", "bob", t0)
	br := f.loggedIn(t, alice, secret)

	f.clock.Advance(90 * time.Second)
	a := br.get("/orders/ap-47")
	if strings.Contains(a.body, `id="stuck"`) {
		t.Errorf("90 s after the claim the order page already says the send stopped:\n%s", a.body)
	}
	mustContain(t, br.post("/orders/ap-47/approve", url.Values{"csrf": {br.token("/orders/ap-47")}}), "reload its page in a moment")

	f.clock.Advance(time.Minute)
	mustContain(t, br.get("/orders/ap-47"), `id="stuck"`, "storelink-mcp approvals resolve ap-47 --raised ORDER_ID", "--not-raised", "Do not approve it again")
	a = br.post("/orders/ap-47/approve", url.Values{"csrf": {br.token("/orders/ap-47")}})
	mustContain(t, a, "Approved, send interrupted", "approvals resolve")
	if strings.Contains(a.body, "reload its page in a moment") {
		t.Errorf("an interrupted send still says reload:\n%s", a.body)
	}
	if got := f.b.Raised(); len(got) != 0 {
		t.Errorf("raised %v", got)
	}
}
