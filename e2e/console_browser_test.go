package e2e_test

import (
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/console/consoletest"
)

// The approvals console in a real browser, driven the way a buyer uses it:
// type the name and secret, click Log in, read the inbox, open the order,
// look at the chart, click Approve, read the outcome; reject another order,
// first with a blank reason. The console runs in process over the fake
// backend, on loopback; the journey with the real binary, the real mock
// and the real ledger builds on the same steps.
//
// The browser is Debian's chromium. Without it the test skips, except under
// CI=true, where a missing browser is a failure: CI installs it.
//
// Screenshots of the inbox and the order page go to the test's artefact
// directory: `go test -run TestConsoleInABrowser -artifacts -outputdir DIR ./e2e`
// keeps them (under DIR); docs/images/console-order.png is one of them.
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

	bctx := browser(t, chromium, 1280, 1000)

	dir := t.ArtifactDir()
	shot := func(name string) {
		t.Helper()
		png, err := chromedp.Run(bctx, chromedp.FullScreenshot(100))
		if err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, png, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("screenshot: %s", p)
	}
	text := func(sel string) string {
		t.Helper()
		s, err := chromedp.Run(bctx, chromedp.Text(chromedp.CSS(sel)))
		if err != nil {
			t.Fatalf("read %s: %v", sel, err)
		}
		return s
	}
	do := func(what string, steps ...chromedp.Action[chromedp.Void]) {
		t.Helper()
		if err := chromedp.Do(bctx, steps...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// submit clicks a button that posts a form and waits for the answer.
	submit := func(what, sel string) {
		t.Helper()
		if _, err := chromedp.RunResponse(bctx, chromedp.Click(chromedp.CSS(sel))); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	wantText := func(sel string, parts ...string) {
		t.Helper()
		got := text(sel)
		for _, p := range parts {
			if !strings.Contains(got, p) {
				t.Errorf("%s reads %q, which lacks %q", sel, got, p)
			}
		}
	}

	// A wrong secret first: refused, and the form is there again.
	do("open the console", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("name")))
	do("type a wrong secret",
		chromedp.SendKeys(chromedp.ID("name"), "jana.novakova"),
		chromedp.SendKeys(chromedp.ID("secret"), "butter"))
	submit("log in with a wrong secret", "#login")
	wantText(".flash", "name or secret is wrong")

	do("type the secret",
		chromedp.Clear(chromedp.ID("secret")),
		chromedp.SendKeys(chromedp.ID("secret"), "butter-is-gold-47"))
	submit("log in", "#login")
	do("wait for the inbox", chromedp.WaitVisible(chromedp.ID("inbox")))
	wantText("#inbox", "Madeta butter 250g", "Praha Smíchov", "48 units = 4 cases of 12",
		"Brno Královo Pole", "24 units = 2 cases of 12", "claude-desktop/buyer-agent", "left")
	shot("console-inbox.png")

	// Open the store 47 order: the product, the evidence, the chart.
	submit("open the order", `a[href="/orders/ap-47"]`)
	do("wait for the chart", chromedp.WaitVisible(chromedp.ID("chart")))
	wantText("h1", "Madeta butter 250g")
	wantText("#justification", "Sold in the last 24 h", "23 units", "confidence medium", "1.6 to 2.3 days")
	bars, err := chromedp.Run(bctx, chromedp.Nodes(chromedp.CSSAll("#chart rect.bar")))
	if err != nil {
		t.Fatal(err)
	}
	if len(bars) != 14 {
		t.Errorf("the chart has %d bars, want one per evidence day (14)", len(bars))
	}
	title, err := chromedp.Run(bctx, chromedp.TextContent(chromedp.ID("chart-title")))
	if err != nil || !strings.Contains(title, "Units of Madeta butter 250g sold per day") {
		t.Errorf("chart title %q (%v)", title, err)
	}
	shot("console-order.png")

	submit("approve", "#approve")
	do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	wantText("#outcome", "Order raised: RO-100001")
	if got := b.Raised(); len(got) != 1 {
		t.Fatalf("StoreLink holds %v, want one order", got)
	}

	// A double-click on Approve raises one order: two clicks on the button,
	// the second before the first one's page arrives, as a person makes them.
	do("open the second order", chromedp.Navigate(srv.URL+"/orders/ap-47b"),
		chromedp.WaitVisible(chromedp.ID("approve")), chromedp.ScrollIntoView(chromedp.ID("approve")))
	box, err := chromedp.Run(bctx, chromedp.Dimensions(chromedp.ID("approve")))
	if err != nil {
		t.Fatal(err)
	}
	x, y := (box.Content[0]+box.Content[4])/2, (box.Content[1]+box.Content[5])/2
	// Do, not RunResponse: the second click's submission may abort the
	// first's navigation, and which page the browser keeps is the point.
	if err := chromedp.Do(bctx, chromedp.MouseClickXY(x, y), chromedp.MouseClickXY(x, y, chromedp.ClickCount(2))); err != nil {
		t.Fatalf("double-click approve: %v", err)
	}
	do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	if got := text("#outcome"); !strings.Contains(got, "RO-100002") {
		t.Errorf("after a double-click the page reads %q", got)
	}
	if got := b.Raised(); len(got) != 2 {
		t.Errorf("after a double-click StoreLink holds %v, want two orders in all", got)
	}

	// Reject the Brno order: a blank reason is refused, a real one taken.
	do("back to the inbox", chromedp.Navigate(srv.URL+"/"), chromedp.WaitVisible(chromedp.ID("inbox")))
	submit("open the Brno order", `a[href="/orders/ap-102"]`)
	do("type a blank reason", chromedp.WaitVisible(chromedp.ID("reason")), chromedp.SendKeys(chromedp.ID("reason"), "   "))
	submit("reject without a reason", "#reject")
	wantText("#reject-error", "Write a reason")
	if st := b.Status("ap-102"); st != console.StatusPending {
		t.Errorf("a blank reason changed the order to %s", st)
	}
	// The refused form comes back with an empty box.
	do("type the reason",
		chromedp.SendKeys(chromedp.ID("reason"), "Store 102 sits at the threshold, not above it."))
	submit("reject", "#reject")
	do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	wantText("#outcome", "Rejected", "nothing was sent", "Store 102 sits at the threshold")
	if st := b.Status("ap-102"); st != console.StatusRejected {
		t.Errorf("the Brno order is %s, want rejected", st)
	}
	if got := b.Raised(); len(got) != 2 {
		t.Errorf("rejecting raised an order: %v", got)
	}

	do("open the history", chromedp.Navigate(srv.URL+"/history"), chromedp.WaitVisible(chromedp.ID("history")))
	wantText("#history", "RO-100001", "rejected", "Store 102 sits at the threshold")
}
