package console_test

import (
	"html"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/console/consoletest"
)

// A console that cannot send says so on every page, offers no approval,
// and refuses an approval posted anyway.
func TestConsoleWithoutWritesOffersNoApproval(t *testing.T) {
	f := newFixture(t, nil)
	f.b.WritesOff = true
	const banner = "This console cannot send orders: writes are off"
	if a := f.anonymous(t).get("/login"); !strings.Contains(a.body, banner) {
		t.Errorf("the login page does not say the console cannot send:\n%s", a.body)
	}
	br := f.loggedIn(t, alice, secret)
	for _, path := range []string{"/", "/orders/ap-47", "/history", "/audit"} {
		a := br.get(path)
		mustContain(t, a, banner)
		if strings.Contains(a.body, `id="approve"`) || strings.Contains(a.body, "Approve and send") {
			t.Errorf("%s offers an approval although the console cannot send", path)
		}
	}
	order := br.get("/orders/ap-47")
	mustContain(t, order, `id="reject"`, `id="no-approve"`)

	// A forged approve POST: refused, nothing raised, and in the audit trail.
	tok := csrfField.FindStringSubmatch(order.body)[1]
	a := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}})
	if a.status != http.StatusConflict || !strings.Contains(a.body, "Not sent") || !strings.Contains(a.body, "writes are off") {
		t.Errorf("a forged approval: %d\n%s", a.status, a.body)
	}
	if got := f.b.Raised(); len(got) != 0 {
		t.Fatalf("a console without writes raised %v", got)
	}
	if audit := br.get("/audit?day=2026-07-16"); !strings.Contains(audit.body, "WRITES_DISABLED") {
		t.Errorf("the refused approval is not in the audit trail:\n%s", audit.body)
	}
	// With writes on, the same page offers it.
	f.b.WritesOff = false
	if a := br.get("/orders/ap-47"); !strings.Contains(a.body, `id="approve"`) || strings.Contains(a.body, banner) {
		t.Errorf("with writes on the order page offers no approval:\n%s", a.body)
	}
}

// A decided order shows who decided, when and the outcome, not the
// approval's expiry; no page prints a time outside the store's offset.
func TestDecidedOrderShowsTheDecision(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret)
	tok := br.token("/orders/ap-47")
	f.clock.Advance(10 * time.Minute)
	if a := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}}); a.status != http.StatusOK {
		t.Fatalf("approve: %d\n%s", a.status, a.body)
	}
	order := br.get("/orders/ap-47")
	order.body = html.UnescapeString(order.body)
	mustContain(t, order, `id="decision"`, "Approved by alice at 2026-07-16 09:40 +01:00", "order RO-100001")
	for _, stale := range []string{"open until", "min left", `id="duplicate"`, `id="reject"`} {
		if strings.Contains(order.body, stale) {
			t.Errorf("the decided order page still shows %q", stale)
		}
	}
	utc := regexp.MustCompile(`\d\d:\d\d(:\d\d)? ?(\+00:00|Z)\b`)
	for _, path := range []string{"/orders/ap-47", "/history", "/"} {
		if m := utc.FindString(html.UnescapeString(br.get(path).body)); m != "" {
			t.Errorf("%s prints %q, not in the store's time", path, m)
		}
	}
}

// The inbox lists the soonest empty shelf first, whatever the approvals'
// expiry, and says how long the shelf lasts.
func TestInboxSortsByTimeToStockout(t *testing.T) {
	f := newFixture(t, nil)
	later := consoletest.Butter(t0, "ap-later", "102", "Brno Královo Pole")
	later.ProductName = "Later butter"
	later.Stockout.Earliest, later.Stockout.Latest = t0.Add(30*time.Hour), t0.Add(40*time.Hour)
	later.ExpiresAt = t0.Add(time.Hour) // expires first, runs out last
	f.b.Stage(later)
	unknown := consoletest.Butter(t0, "ap-unknown", "102", "Brno Královo Pole")
	unknown.ProductName = "Unknown butter"
	unknown.Stockout.Known = false
	f.b.Stage(unknown)
	body := f.loggedIn(t, alice, secret).get("/").body
	first, second, third := strings.Index(body, "Madeta butter 250g"), strings.Index(body, "Later butter"), strings.Index(body, "Unknown butter")
	if first < 0 || second < first || third < second {
		t.Errorf("inbox order: soonest %d, later %d, unknown %d; want that order", first, second, third)
	}
	for _, want := range []string{"about 1 h 30 min", "about 30 h 00 min", "Shelf empty in"} {
		if !strings.Contains(body, want) {
			t.Errorf("the inbox lacks %q", want)
		}
	}
}
