package console_test

import (
	"encoding/base64"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/console/consoletest"
)

func TestCSRFTokenRequiredOnEveryPost(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret)
	br.get("/orders/ap-47") // the page is open; its token is not sent below
	before := f.b.TotalCalls()
	for name, form := range map[string]url.Values{
		"missing": {},
		"wrong":   {"csrf": {"AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"}},
		"empty":   {"csrf": {""}},
	} {
		if form == nil {
			form = url.Values{}
		}
		form.Set("reason", "a reason, so only the token is missing")
		for _, path := range []string{"/orders/ap-47/approve", "/orders/ap-47/reject", "/logout"} {
			a := br.post(path, form)
			if a.status != http.StatusForbidden {
				t.Errorf("%s token, POST %s: %d, want 403", name, path, a.status)
			}
		}
	}
	if got := f.b.TotalCalls(); got != before {
		t.Errorf("the backend got %d calls from refused POSTs", got-before)
	}
	if len(f.b.Raised()) != 0 || f.b.Status("ap-47") != console.StatusPending {
		t.Errorf("a refused POST changed the order: raised %v, status %s", f.b.Raised(), f.b.Status("ap-47"))
	}
	// The session survived: its own token still works.
	if a := br.post("/logout", url.Values{"csrf": {br.token("/")}}); a.status != http.StatusSeeOther {
		t.Errorf("logout with the right token: %d", a.status)
	}
}

func TestLoginFormNeedsItsToken(t *testing.T) {
	f := newFixture(t, nil)
	br := f.anonymous(t)
	br.get("/login") // sets the pre-session cookie
	for name, tok := range map[string]string{"missing": "", "wrong": strings.Repeat("0", 64)} {
		a := br.post("/login", url.Values{"csrf": {tok}, "name": {alice}, "secret": {secret}})
		if a.status != http.StatusForbidden {
			t.Errorf("%s login token: %d, want 403", name, a.status)
		}
	}
	// A site that plants its own pre-session cookie and posts the same value
	// (a double-submit forgery) gets nowhere: the token is keyed.
	forged := f.anonymous(t)
	u, _ := url.Parse(f.srv.URL)
	forged.c.Jar.SetCookies(u, []*http.Cookie{{Name: "korral_console_login", Value: "planted", Path: "/"}})
	if a := forged.post("/login", url.Values{"csrf": {"planted"}, "name": {alice}, "secret": {secret}}); a.status != http.StatusForbidden {
		t.Errorf("planted login cookie: %d, want 403", a.status)
	}
	if n := f.b.Calls("Login"); n != 0 {
		t.Errorf("Login called %d times for refused forms", n)
	}
}

func TestWrongSecretIsRefusedAndLimited(t *testing.T) {
	f := newFixture(t, nil)
	br := f.anonymous(t)
	for i := range console.DefaultLoginFailures {
		a := br.login(alice, "guess")
		if a.status != http.StatusUnauthorized || !strings.Contains(a.body, "name or secret is wrong") {
			t.Fatalf("wrong secret #%d: %d\n%s", i+1, a.status, a.body)
		}
		if c := a.resp.Header.Get("Set-Cookie"); strings.Contains(c, "korral_console=") && !strings.Contains(c, "korral_console=;") {
			t.Fatalf("a failed login set a session cookie: %s", c)
		}
	}
	// Now even the right secret is refused, without asking the backend.
	a := br.login(alice, secret)
	if a.status != http.StatusTooManyRequests {
		t.Fatalf("after %d failures: %d, want 429", console.DefaultLoginFailures, a.status)
	}
	mustContain(t, a, "Too many failed log-ins", "Try again after 08:45 UTC", "in 15 minutes")
	if ra := a.resp.Header.Get("Retry-After"); ra != "900" {
		t.Errorf("Retry-After %q, want 900", ra)
	}
	if n := f.b.Calls("Login"); n != console.DefaultLoginFailures {
		t.Errorf("Login called %d times, want %d", n, console.DefaultLoginFailures)
	}
	f.clock.Advance(14 * time.Minute)
	if a := br.login(alice, secret); a.status != http.StatusTooManyRequests {
		t.Errorf("a minute before the window ends: %d, want 429", a.status)
	}
	f.clock.Advance(time.Minute)
	if a := br.login(alice, secret); a.status != http.StatusSeeOther {
		t.Errorf("once the window moved on: %d, want 303\n%s", a.status, a.body)
	}
}

func TestLoginLimitPerNameAndPerAddress(t *testing.T) {
	f := newFixture(t, func(o *console.Options) {
		o.ClientAddr = func(r *http.Request) string { return r.Header.Get("X-Test-Client") }
	})
	br := f.anonymous(t)
	from := func(addr string) { br.header.Set("X-Test-Client", addr) }

	// One name from many addresses.
	for i := range console.DefaultLoginFailures {
		from("10.0.0." + string(rune('1'+i)))
		br.login(alice, "guess")
	}
	from("10.9.9.9")
	if a := br.login(alice, secret); a.status != http.StatusTooManyRequests {
		t.Errorf("name limit: %d, want 429", a.status)
	}
	if a := br.login("bob", "bobs secret"); a.status != http.StatusSeeOther {
		t.Errorf("another name from a fresh address is not limited: %d", a.status)
	}

	// Many names from one address.
	br = f.anonymous(t)
	from = func(addr string) { br.header.Set("X-Test-Client", addr) }
	from("192.0.2.7")
	for _, n := range []string{"n1", "n2", "n3", "n4", "n5"} {
		br.login(n, "guess")
	}
	if a := br.login("bob", "bobs secret"); a.status != http.StatusTooManyRequests {
		t.Errorf("address limit: %d, want 429", a.status)
	}
}

func TestBearerTokenOpensNothing(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret) // even with a valid session cookie
	br.header.Set("Authorization", "Bearer mcp-agent-token")
	before := f.b.TotalCalls()
	for _, req := range []struct{ method, path string }{
		{"GET", "/"}, {"GET", "/login"}, {"GET", "/orders/ap-47"}, {"GET", "/history"},
		{"GET", "/audit"}, {"GET", "/static/console.css"}, {"POST", "/login"}, {"POST", "/orders/ap-47/approve"},
	} {
		var form url.Values
		if req.method == "POST" {
			form = url.Values{"csrf": {"x"}}
		}
		a := br.do(req.method, req.path, form, "application/x-www-form-urlencoded")
		if a.status != http.StatusUnauthorized {
			t.Errorf("%s %s with a bearer token: %d, want 401", req.method, req.path, a.status)
		}
		if strings.Contains(a.body, "<") || a.resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("%s %s with a bearer token answered a page or a cookie: %q", req.method, req.path, a.body)
		}
	}
	br.header.Set("Authorization", "bearer lower-case-too")
	if a := br.get("/"); a.status != http.StatusUnauthorized {
		t.Errorf("lower-case scheme: %d", a.status)
	}
	if got := f.b.TotalCalls(); got != before {
		t.Errorf("bearer requests reached the backend %d times", got-before)
	}
}

func TestRevokedApproverSessionEnds(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret)
	tok := br.token("/orders/ap-47")
	f.b.Revoke(alice)

	a := br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}})
	if a.status != http.StatusSeeOther || a.resp.Header.Get("Location") != "/login?ended=revoked" {
		t.Fatalf("approve after revocation: %d %s", a.status, a.resp.Header.Get("Location"))
	}
	if n := f.b.Calls("Approve"); n != 0 {
		t.Errorf("Approve called %d times for a revoked approver", n)
	}
	if f.sessions.Len() != 0 {
		t.Errorf("%d sessions left after revocation", f.sessions.Len())
	}
	if a := br.get("/"); a.status != http.StatusSeeOther || !strings.HasPrefix(a.resp.Header.Get("Location"), "/login") {
		t.Errorf("inbox after revocation: %d %s", a.status, a.resp.Header.Get("Location"))
	}
	mustContain(t, br.get("/login?ended=revoked"), "access was revoked")
	if a := br.login(alice, secret); a.status != http.StatusUnauthorized {
		t.Errorf("a revoked approver logs in: %d", a.status)
	}
}

func TestSecurityHeadersOnEveryResponse(t *testing.T) {
	f := newFixture(t, nil)
	anon := f.anonymous(t)
	br := f.loggedIn(t, alice, secret)
	tok := br.token("/")
	answers := map[string]answer{
		"login page":    anon.get("/login"),
		"redirect":      anon.get("/"),
		"inbox":         br.get("/"),
		"order":         br.get("/orders/ap-47"),
		"history":       br.get("/history"),
		"audit":         br.get("/audit"),
		"stylesheet":    br.get("/static/console.css"),
		"not found":     br.get("/nope"),
		"no order":      br.get("/orders/none"),
		"method":        br.do("PUT", "/", url.Values{}, "application/x-www-form-urlencoded"),
		"media type":    br.do("POST", "/orders/ap-47/approve", url.Values{"csrf": {tok}}, "application/json"),
		"csrf refused":  br.post("/orders/ap-47/approve", url.Values{}),
		"empty reason":  br.post("/orders/ap-47/reject", url.Values{"csrf": {tok}, "reason": {" "}}),
		"approve":       br.post("/orders/ap-47/approve", url.Values{"csrf": {tok}}),
		"bad login":     anon.login(alice, "wrong"),
		"bearer":        func() answer { b := f.anonymous(t); b.header.Set("Authorization", "Bearer x"); return b.get("/") }(),
		"head of inbox": br.do("HEAD", "/", nil, ""),
	}
	want := map[string]string{
		"Content-Security-Policy": "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
		"X-Content-Type-Options":  "nosniff",
		"Referrer-Policy":         "no-referrer",
		"Cache-Control":           "no-store",
	}
	for name, a := range answers {
		for h, v := range want {
			if got := a.resp.Header.Get(h); got != v {
				t.Errorf("%s (%d): %s = %q, want %q", name, a.status, h, got, v)
			}
		}
	}
	if a := answers["method"]; a.status != http.StatusMethodNotAllowed || a.resp.Header.Get("Allow") != "GET, HEAD, POST" {
		t.Errorf("PUT: %d, Allow %q", a.status, a.resp.Header.Get("Allow"))
	}
	if a := answers["media type"]; a.status != http.StatusUnsupportedMediaType {
		t.Errorf("JSON POST: %d, want 415", a.status)
	}
	// Only the form-encoded approve reached the backend.
	if n := f.b.Calls("Approve"); n != 1 {
		t.Errorf("Approve called %d times, want 1 (only the form POST)", n)
	}
	// No page carries inline script or inline style, which the policy would
	// block anyway.
	for name, a := range answers {
		if strings.Contains(a.body, "<script") || strings.Contains(a.body, " style=") || strings.Contains(a.body, "<style") {
			t.Errorf("%s has inline script or style", name)
		}
	}
}

func TestSessionCookie(t *testing.T) {
	for _, tc := range []struct {
		name     string
		tls      bool
		cookie   string
		wantFlag bool
	}{
		{"plain HTTP", false, "korral_console", false},
		{"behind a TLS proxy", true, "__Host-korral_console", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t, func(o *console.Options) { o.BehindTLSProxy = tc.tls })
			br := f.anonymous(t)
			// The jar will not send Secure cookies over plain HTTP, so read
			// the login answer's header itself.
			a := br.login(alice, secret)
			var c *http.Cookie
			for _, k := range a.resp.Cookies() {
				if k.Name == tc.cookie {
					c = k
				}
			}
			if c == nil {
				t.Fatalf("no %s cookie in %v", tc.cookie, a.resp.Header["Set-Cookie"])
			}
			if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != "/" || c.Secure != tc.wantFlag {
				t.Errorf("cookie %+v: want HttpOnly, SameSite=Strict, Path=/, Secure=%v", c, tc.wantFlag)
			}
			id, err := base64.RawURLEncoding.DecodeString(c.Value)
			if err != nil || len(id) != 32 {
				t.Errorf("session id %q is not 32 random bytes", c.Value)
			}
			if f.sessions.Len() != 1 {
				t.Fatalf("%d sessions", f.sessions.Len())
			}
			if _, err := f.sessions.Get(t.Context(), c.Value); err == nil {
				t.Errorf("the store holds the session under its raw id")
			}
		})
	}
}

func TestSessionExpiry(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret)
	f.clock.Advance(console.DefaultIdleTimeout - time.Minute)
	if a := br.get("/"); a.status != http.StatusOK {
		t.Fatalf("before the idle timeout: %d", a.status)
	}
	f.clock.Advance(console.DefaultIdleTimeout)
	if a := br.get("/"); a.resp.Header.Get("Location") != "/login?ended=expired" {
		t.Fatalf("after the idle timeout: %d %s", a.status, a.resp.Header.Get("Location"))
	}

	// Active all day long, the session still ends after its absolute TTL.
	br = f.loggedIn(t, alice, secret)
	for elapsed := time.Duration(0); elapsed < console.DefaultSessionTTL-10*time.Minute; elapsed += 10 * time.Minute {
		f.clock.Advance(10 * time.Minute)
		if a := br.get("/history"); a.status != http.StatusOK {
			t.Fatalf("after %v of activity: %d", elapsed, a.status)
		}
	}
	f.clock.Advance(10 * time.Minute)
	if a := br.get("/"); a.resp.Header.Get("Location") != "/login?ended=expired" {
		t.Fatalf("after the absolute TTL: %d %s", a.status, a.resp.Header.Get("Location"))
	}
}

func TestLogoutEndsTheSession(t *testing.T) {
	f := newFixture(t, nil)
	br := f.loggedIn(t, alice, secret)
	a := br.post("/logout", url.Values{"csrf": {br.token("/")}})
	if a.status != http.StatusSeeOther || a.resp.Header.Get("Location") != "/login?ended=logout" {
		t.Fatalf("logout: %d %s", a.status, a.resp.Header.Get("Location"))
	}
	if f.sessions.Len() != 0 {
		t.Errorf("session kept after logout")
	}
	if a := br.get("/"); a.status != http.StatusSeeOther {
		t.Errorf("inbox after logout: %d", a.status)
	}
}

func TestSecureCookieOverTLS(t *testing.T) {
	clock := consoletest.NewClock(t0)
	b := consoletest.New(clock.Now)
	b.AddApprover(alice, secret)
	h, err := console.New(b, console.Options{Now: clock.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	jar, _ := cookiejar.New(nil)
	c := srv.Client()
	c.Jar = jar
	c.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	br := &browser{t: t, c: c, base: srv.URL, header: http.Header{}}
	a := br.login(alice, secret)
	if a.status != http.StatusSeeOther {
		t.Fatalf("login over TLS: %d\n%s", a.status, a.body)
	}
	var found bool
	for _, k := range a.resp.Cookies() {
		if k.Name == "__Host-korral_console" {
			found = true
			if !k.Secure || !k.HttpOnly || k.SameSite != http.SameSiteStrictMode || k.Path != "/" {
				t.Errorf("session cookie over TLS: %+v", k)
			}
		}
	}
	if !found {
		t.Fatalf("no __Host- session cookie over TLS: %v", a.resp.Header["Set-Cookie"])
	}
	if hsts := a.resp.Header.Get("Strict-Transport-Security"); hsts == "" {
		t.Errorf("no Strict-Transport-Security over TLS")
	}
	if a := br.get("/"); a.status != http.StatusOK {
		t.Errorf("inbox over TLS: %d", a.status)
	}
}
