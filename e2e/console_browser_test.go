package e2e_test

import (
	"fmt"
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
// open an order, approve, reject another; at a desktop's 1280 px and a chat
// column's 400 px, every page readable. It runs in process over the fake
// backend. Screenshots go to the artefact directory (-artifacts -outputdir
// DIR); docs/images/console-{inbox,order}-{400,1280}.png are those.
func TestConsoleInABrowser(t *testing.T) {
	chromium := e2etest.NeedTool(t, "chromium", "chromium")
	for _, width := range []int{1280, 400} {
		t.Run(fmt.Sprint(width), func(t *testing.T) {
			b, url := consoleWorld(t, false)
			pg := consolePage(t, chromium, width)
			consoleLogIn(pg, url, width)
			consoleApproveWithChart(pg, b, width)
			for _, path := range []string{"/history", "/audit?day=2026-07-16"} {
				pg.do("open "+path, chromedp.Navigate(url+path), chromedp.WaitVisible(chromedp.CSS("main h1")))
				assertConsoleReadable(pg, fmt.Sprintf("%s at %d px", path, width))
			}
			if width == 1280 {
				consoleDoubleClickApprove(pg, b, url)
				consoleRejectWithReason(pg, b, url)
			}
		})
	}
	t.Run("writes off", func(t *testing.T) {
		_, url := consoleWorld(t, true)
		consoleWithoutWrites(consolePage(t, chromium, 400), url)
	})
}

// consolePage is a browser tab whose viewport is width px wide (a window
// alone has a minimum width above a chat column's).
func consolePage(t *testing.T, chromium string, width int) page {
	pg := page{t: t, ctx: browser(t, chromium, width, 1000)}
	pg.do("set the viewport", chromedp.EmulateViewport(int64(width), 1000))
	if w, err := chromedp.Run(pg.ctx, chromedp.Evaluate[int]("innerWidth")); err != nil || w != width {
		t.Fatalf("the page is %d px wide (%v), want %d", w, err, width)
	}
	return pg
}

// consoleWorld serves the console over a fake backend with three staged
// orders, on a fixed clock so the screenshots are the same from run to run.
func consoleWorld(t *testing.T, writesOff bool) (*consoletest.Backend, string) {
	now := time.Date(2026, 7, 16, 8, 30, 0, 0, time.UTC)
	clock := consoletest.NewClock(now)
	b := consoletest.New(clock.Now)
	b.WritesOff = writesOff
	b.AddApprover("jana.novakova", "butter-is-gold-47")
	b.Stage(consoletest.Butter(now, "ap-47", "47", "Praha Smíchov"))
	brno := consoletest.Butter(now, "ap-102", "102", "Brno Královo Pole")
	brno.QuantityUnits = 24
	brno.Reason = "Top up before the weekend: the shelf is rounded down to whole cases every Friday."
	brno.ExpiresAt = brno.ExpiresAt.Add(time.Hour)
	local := brno.RequestedAt.Location()
	brno.Stockout.Earliest, brno.Stockout.Latest = now.Add(26*time.Hour).In(local), now.Add(31*time.Hour).In(local)
	b.Stage(brno)
	dbl := consoletest.Butter(now, "ap-47b", "47", "Praha Smíchov")
	dbl.ProductName = "Madeta butter 250g, second order"
	dbl.ExpiresAt = dbl.ExpiresAt.Add(2 * time.Hour)
	dbl.Stockout.Known = false
	b.Stage(dbl)
	h, err := console.New(b, console.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h) // 127.0.0.1
	t.Cleanup(srv.Close)
	return b, srv.URL
}

// splitWordsJS lists words of up to 20 characters that the page breaks
// across lines ("rounde d"): a word the browser had to split because its
// box is too narrow. Longer runs (ids, untrusted names) may break.
const splitWordsJS = `(() => {
  const out = [];
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!el || el.closest("svg, title, script, style") || !el.getClientRects().length) continue;
    for (const m of n.textContent.matchAll(/[\p{L}\p{N}]{2,20}/gu)) {
      const r = document.createRange();
      r.setStart(n, m.index);
      r.setEnd(n, m.index + m[0].length);
      const tops = new Set([...r.getClientRects()].filter((q) => q.width > 0).map((q) => Math.round(q.top)));
      if (tops.size > 1) out.push(m[0]);
    }
  }
  return out.slice(0, 20);
})()`

// assertConsoleReadable is assertReadable plus no word split mid-word.
func assertConsoleReadable(pg page, what string) {
	pg.t.Helper()
	assertReadable(pg.t, pg.ctx, what)
	split, err := chromedp.Run(pg.ctx, chromedp.Evaluate[[]string](splitWordsJS))
	if err != nil {
		pg.t.Fatalf("%s: word check: %v", what, err)
	}
	for _, w := range split {
		pg.t.Errorf("%s: the word %q is split across lines", what, w)
	}
}

// consoleLogIn: a wrong secret is refused; the right one shows both stores'
// orders, the soonest empty shelf first.
func consoleLogIn(pg page, url string, width int) {
	pg.do("open the console", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("name")))
	assertConsoleReadable(pg, fmt.Sprintf("login at %d px", width))
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
		"Brno Královo Pole", "24 units = 2 cases of 12", "claude-desktop/buyer-agent", "about 1 h 30 min", "about 26 h 00 min")
	if rows := pg.text("#inbox tbody"); strings.Index(rows, "Praha") > strings.Index(rows, "Brno") {
		pg.t.Errorf("the inbox does not list the soonest empty shelf first:\n%s", rows)
	}
	assertConsoleReadable(pg, fmt.Sprintf("inbox at %d px", width))
	pg.shot(fmt.Sprintf("console-inbox-%d.png", width))
}

// consoleApproveWithChart opens and approves the store 47 order: StoreLink
// holds one order, and the order's page then shows the decision.
func consoleApproveWithChart(pg page, b *consoletest.Backend, width int) {
	t := pg.t
	pg.submit("open the order", `a[href="/orders/ap-47"]`)
	pg.do("wait for the chart", chromedp.WaitVisible(chromedp.ID("chart")))
	pg.wantText("h1", "Madeta butter 250g")
	pg.wantText("#justification", "Sold in the last 24 h", "23 units", "confidence medium", "1.0 to 1.3 days")
	pg.wantText("#check", "review", "stock lasts only 1.3 days after delivery, less than the 2-day lead time")
	pg.wantText("#shelf", "about 1 h 30 min")
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
	assertConsoleReadable(pg, fmt.Sprintf("order page at %d px", width))
	pg.shot(fmt.Sprintf("console-order-%d.png", width))

	pg.submit("approve", "#approve")
	pg.do("wait for the outcome", chromedp.WaitVisible(chromedp.ID("outcome")))
	pg.wantText("#outcome", "Order raised: RO-100001")
	if got := b.Raised(); len(got) != 1 {
		t.Fatalf("StoreLink holds %v, want one order", got)
	}
	pg.submit("back to the order", `a[href="/orders/ap-47"]`)
	pg.do("wait for the decision", chromedp.WaitVisible(chromedp.ID("decision")))
	pg.wantText("#decision", "Approved by jana.novakova at 2026-07-16 09:30 +01:00", "RO-100001")
	if got := pg.text("main"); strings.Contains(got, "open until") || strings.Contains(got, "min left") {
		t.Errorf("the decided order still shows the approval's expiry:\n%s", got)
	}
	assertConsoleReadable(pg, fmt.Sprintf("decided order page at %d px", width))
}

// consoleWithoutWrites: every page says the console cannot send, and no
// page offers the approval.
func consoleWithoutWrites(pg page, url string) {
	t := pg.t
	pg.do("open the console", chromedp.Navigate(url+"/"), chromedp.WaitVisible(chromedp.ID("name")))
	pg.wantText("#not-sending", "cannot send orders")
	pg.do("log in", chromedp.SendKeys(chromedp.ID("name"), "jana.novakova"), chromedp.SendKeys(chromedp.ID("secret"), "butter-is-gold-47"))
	pg.submit("log in", "#login")
	pg.do("wait for the inbox", chromedp.WaitVisible(chromedp.ID("inbox")))
	pg.wantText("#not-sending", "cannot send orders")
	pg.submit("open the order", `a[href="/orders/ap-47"]`)
	pg.do("wait for the order", chromedp.WaitVisible(chromedp.ID("reject")))
	pg.wantText("#not-sending", "cannot send orders")
	n, err := chromedp.Run(pg.ctx, chromedp.Evaluate[int](`document.querySelectorAll("#approve, form.approve").length`))
	if err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Errorf("a console without writes offers %d approve buttons", n)
	}
	assertConsoleReadable(pg, "order page without writes at 400 px")
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
