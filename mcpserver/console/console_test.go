package console_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
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

// t0 is the tests' clock start: a Thursday morning in Prague.
var t0 = time.Date(2026, 7, 16, 8, 30, 0, 0, time.UTC)

const (
	alice  = "alice"
	secret = "correct horse battery staple"
)

type fixture struct {
	srv      *httptest.Server
	b        *consoletest.Backend
	clock    *consoletest.Clock
	sessions *console.Memory
}

// newFixture serves a console over a fake backend holding alice (every
// store), bob (store 102 only) and the butter order ap-47 at store 47.
func newFixture(t *testing.T, opt func(*console.Options)) *fixture {
	t.Helper()
	clock := consoletest.NewClock(t0)
	b := consoletest.New(clock.Now)
	b.AddApprover(alice, secret)
	b.AddApprover("bob", "bobs secret", "102")
	b.Stage(consoletest.Butter(t0, "ap-47", "47", "Praha Smíchov"))
	sessions := console.NewMemory()
	o := console.Options{Sessions: sessions, Now: clock.Now}
	if opt != nil {
		opt(&o)
	}
	h, err := console.New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &fixture{srv: srv, b: b, clock: clock, sessions: sessions}
}

// browser is an HTTP client with a cookie jar that does not follow
// redirects, so tests see each answer.
type browser struct {
	t    *testing.T
	c    *http.Client
	base string
	// header is added to every request.
	header http.Header
}

func (f *fixture) browser(t *testing.T) *browser {
	jar, _ := cookiejar.New(nil)
	return &browser{t: t, base: f.srv.URL, header: http.Header{}, c: &http.Client{
		Jar: jar, Timeout: 10 * time.Second,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}}
}

type answer struct {
	status int
	body   string
	resp   *http.Response
}

func (br *browser) do(method, path string, form url.Values, contentType string) answer {
	br.t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, br.base+path, body)
	if err != nil {
		br.t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", contentType)
	}
	for k, v := range br.header {
		req.Header[k] = v
	}
	resp, err := br.c.Do(req)
	if err != nil {
		br.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return answer{status: resp.StatusCode, body: string(b), resp: resp}
}

func (br *browser) get(path string) answer { return br.do("GET", path, nil, "") }

func (br *browser) post(path string, form url.Values) answer {
	return br.do("POST", path, form, "application/x-www-form-urlencoded")
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// token reads the CSRF token of the form on the page at path.
func (br *browser) token(path string) string {
	br.t.Helper()
	a := br.get(path)
	m := csrfField.FindStringSubmatch(a.body)
	if m == nil {
		br.t.Fatalf("GET %s: no CSRF field in a %d page:\n%s", path, a.status, a.body)
	}
	return m[1]
}

func (br *browser) login(name, pass string) answer {
	br.t.Helper()
	return br.post("/login", url.Values{"csrf": {br.token("/login")}, "name": {name}, "secret": {pass}})
}

// loggedIn returns a browser logged in as name.
func (f *fixture) loggedIn(t *testing.T, name, pass string) *browser {
	t.Helper()
	br := f.browser(t)
	if a := br.login(name, pass); a.status != http.StatusSeeOther || a.resp.Header.Get("Location") != "/" {
		t.Fatalf("login as %s: %d %s\n%s", name, a.status, a.resp.Header.Get("Location"), a.body)
	}
	return br
}

func (f *fixture) anonymous(t *testing.T) *browser { return f.browser(t) }

func mustContain(t *testing.T, a answer, parts ...string) {
	t.Helper()
	for _, p := range parts {
		if !strings.Contains(a.body, p) {
			t.Errorf("page (%d) lacks %q:\n%s", a.status, p, a.body)
		}
	}
}

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
		"1.6 to 2.3 days", "24 units", "12 units per case", "confidence medium", `id="approve"`)

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

// An order left sending by a process that stopped mid-send reads as being
// sent for a while (a send takes one StoreLink round trip), then as
// interrupted, with the runbook's step: find out at StoreLink, record it
// with approvals resolve, do not approve again. It used to say "reload in a
// moment" for ever.
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
