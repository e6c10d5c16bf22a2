package console_test

import (
	"net/http"
	"net/url"
	"testing"
)

// A link to an order (the webhook notice's console_url, the host's URL
// elicitation) opened without a session leads to the log-in and, after
// it, to that order: for any approver in the order's scope. The "next"
// parameter can only ever name an order page.
func TestLoginReturnsToTheLinkedOrder(t *testing.T) {
	f := newFixture(t, nil)
	br := f.anonymous(t)
	a := br.get("/orders/ap-47")
	loc := a.resp.Header.Get("Location")
	if a.status != http.StatusSeeOther || loc != "/login?next=%2Forders%2Fap-47" {
		t.Fatalf("an order page without a session: %d to %q", a.status, loc)
	}
	form := br.get(loc)
	mustContain(t, form, `name="next" value="/orders/ap-47"`)
	m := csrfField.FindStringSubmatch(form.body)
	if m == nil {
		t.Fatalf("no CSRF field:\n%s", form.body)
	}
	a = br.post("/login", url.Values{"csrf": {m[1]}, "name": {alice}, "secret": {secret}, "next": {"/orders/ap-47"}})
	if a.status != http.StatusSeeOther || a.resp.Header.Get("Location") != "/orders/ap-47" {
		t.Fatalf("the log-in from the link went to %d %q, want the order", a.status, a.resp.Header.Get("Location"))
	}
	if a := br.get("/orders/ap-47"); a.status != http.StatusOK {
		t.Fatalf("the order after the log-in: %d", a.status)
	}
	// Logged in already, the log-in form passes straight on to the order.
	if a := br.get("/login?next=%2Forders%2Fap-47"); a.resp.Header.Get("Location") != "/orders/ap-47" {
		t.Errorf("a logged-in /login?next=… went to %q", a.resp.Header.Get("Location"))
	}

	// Anything that is not an order page is dropped: the log-in goes home.
	for _, next := range []string{"https://evil.example/", "//evil.example/orders/x", "/orders/", "/orders/ap-47/approve",
		"/history", "/orders/a\\b", "/orders/ap-47?x=1", "/orders/%2e%2e"} {
		br := f.anonymous(t)
		a := br.post("/login", url.Values{"csrf": {br.token("/login")}, "name": {alice}, "secret": {secret}, "next": {next}})
		if a.resp.Header.Get("Location") != "/" {
			t.Errorf("next=%q: the log-in went to %q, want /", next, a.resp.Header.Get("Location"))
		}
	}
}
