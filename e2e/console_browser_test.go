package e2e_test

import (
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/console/consoletest"
)

// The approvals console in a real browser, used as a buyer does: log in,
// open an order, approve, reject another. It runs in process over the fake
// backend. Screenshots go to the artefact directory (-artifacts -outputdir
// DIR); docs/images/console-order.png is one of them.
func TestConsoleInABrowser(t *testing.T) {
	chromium := e2etest.NeedTool(t, "chromium", "chromium")
	// A fixed clock keeps the screenshots the same from run to run.
	now := time.Date(2026, 7, 16, 8, 30, 0, 0, time.UTC)
	clock := consoletest.NewClock(now)
	b := consoletest.New(clock.Now)
	b.AddApprover("jana.novakova", "butter-is-gold-47")
	b.Stage(consoletest.Butter(now, "ap-47", "47", "Praha Smíchov"))
	brno := consoletest.Butter(now, "ap-102", "102", "Brno Královo Pole")
	brno.QuantityUnits = 24
	brno.Reason = "Top up before the weekend."
	brno.ExpiresAt = brno.ExpiresAt.Add(time.Hour)
	b.Stage(brno)
	dbl := consoletest.Butter(now, "ap-47b", "47", "Praha Smíchov")
	dbl.ProductName = "Madeta butter 250g, second order"
	dbl.ExpiresAt = dbl.ExpiresAt.Add(2 * time.Hour)
	b.Stage(dbl)
	h, err := console.New(b, console.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h) // 127.0.0.1
	defer srv.Close()

	pg := page{t: t, ctx: browser(t, chromium, 1280, 1000)}
	consoleLogIn(pg, srv.URL)
	consoleApproveWithChart(pg, b)
	consoleDoubleClickApprove(pg, b, srv.URL)
	consoleRejectWithReason(pg, b, srv.URL)
}

// consoleLogIn: a wrong secret is refused; the right one shows both stores' orders.
func consoleLogIn(pg page, url string) {
	pg.do("open the console", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("name")))
	pg.do("type a wrong secret",
		chromedp.SendKeys(chromedp.ID("name"), "jana.novakova"),
		chromedp.SendKeys(chromedp.ID("secret"), "butter"))
	pg.submit("log in with a wrong secret", "#login")
	pg.wantText(".flash", "name or secret is wrong")

	pg.do("type the secret",
		chromedp.Clear(chromedp.ID("secret")),
		chromedp.SendKeys(chromedp.ID("secret"), "butter-is-gold-47"))
	pg.submit("log in", "#login")
	pg.do("wait for the inbox", chromedp.WaitVisible(chromedp.ID("inbox")))
	pg.wantText("#inbox", "Madeta butter 250g", "Praha Smíchov", "48 units = 4 cases of 12",
		"Brno Královo Pole", "24 units = 2 cases of 12", "claude-desktop/buyer-agent", "left")
	pg.shot("console-inbox.png")
}

// consoleApproveWithChart opens and approves the store 47 order: StoreLink holds one order.
func consoleApproveWithChart(pg page, b *consoletest.Backend) {
	t := pg.t
	pg.submit("open the order", `a[href="/orders/ap-47"]`)
	pg.do("wait for the chart", chromedp.WaitVisible(chromedp.ID("chart")))
	pg.wantText("h1", "Madeta butter 250g")
	pg.wantText("#justification", "Sold in the last 24 h", "23 units", "confidence medium", "1.0 to 1.3 days")
	bars, err := chromedp.Run(pg.ctx, chromedp.Nodes(chromedp.CSSAll("#chart rect.bar")))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 14 {
		t.Errorf("the chart has %d bars, want one per evidence day (14)", len(bars))
	}
	title, err := chromedp.Run(pg.ctx, chromedp.TextContent(chromedp.ID("chart-title")))
	if err != nil || !strings.Contains(title, "Units of Madeta butter 250g sold per day") {
		t.Errorf("chart title %q (%v)", title, err)
	}
	pg.shot("console-order.png")

	pg.submit("approve", "#approve")
	pg.do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	pg.wantText("#outcome", "Order raised: RO-100001")
	if got := b.Raised(); len(got) != 1 {
		t.Fatalf("StoreLink holds %v, want one order", got)
	}
}

// consoleDoubleClickApprove: a double-click on Approve raises one order.
func consoleDoubleClickApprove(pg page, b *consoletest.Backend, url string) {
	t := pg.t
	pg.do("open the second order", chromedp.Navigate(url+"/orders/ap-47b"),
		chromedp.WaitVisible(chromedp.ID("approve")), chromedp.ScrollIntoView(chromedp.ID("approve")))
	box, err := chromedp.Run(pg.ctx, chromedp.Dimensions(chromedp.ID("approve")))
	if err != nil {
		t.Fatal(err)
	}
	x, y := (box.Content[0]+box.Content[4])/2, (box.Content[1]+box.Content[5])/2
	// Do, not RunResponse: the second click may abort the first's navigation.
	if err := chromedp.Do(pg.ctx, chromedp.MouseClickXY(x, y), chromedp.MouseClickXY(x, y, chromedp.ClickCount(2))); err != nil {
		t.Fatalf("double-click approve: %v", err)
	}
	pg.do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	if got := pg.text("#outcome"); !strings.Contains(got, "RO-100002") {
		t.Errorf("after a double-click the page reads %q", got)
	}
	if got := b.Raised(); len(got) != 2 {
		t.Errorf("after a double-click StoreLink holds %v, want two orders in all", got)
	}
}

// consoleRejectWithReason: a blank reason is refused, a real one taken, and both show in the history.
func consoleRejectWithReason(pg page, b *consoletest.Backend, url string) {
	t := pg.t
	pg.do("back to the inbox", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("inbox")))
	pg.submit("open the Brno order", `a[href="/orders/ap-102"]`)
	pg.do("type a blank reason", chromedp.WaitVisible(chromedp.ID("reason")), chromedp.SendKeys(chromedp.ID("reason"), "   "))
	pg.submit("reject without a reason", "#reject")
	pg.wantText("#reject-error", "Write a reason")
	if st := b.Status("ap-102"); st != console.StatusPending {
		t.Errorf("a blank reason changed the order to %s", st)
	}
	// The refused form comes back with an empty box.
	pg.do("type the reason",
		chromedp.SendKeys(chromedp.ID("reason"), "Store 102 sits at the threshold, not above it."))
	pg.submit("reject", "#reject")
	pg.do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	pg.wantText("#outcome", "Rejected", "nothing was sent", "Store 102 sits at the threshold")
	if st := b.Status("ap-102"); st != console.StatusRejected {
		t.Errorf("the Brno order is %s, want rejected", st)
	}
	if got := b.Raised(); len(got) != 2 {
		t.Errorf("rejecting raised an order: %v", got)
	}

	pg.do("open the history", chromedp.Navigate(url+"/history"), chromedp.WaitVisible(chromedp.ID("history")))
	pg.wantText("#history", "RO-100001", "rejected", "Store 102 sits at the threshold")
}
