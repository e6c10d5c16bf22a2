package console_test

import (
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/console/consoletest"
)

// t0 is the tests' clock start: a Thursday morning in Prague.
var t0 = time.Date(2026, 7, 16, 8, 30, 0, 0, time.UTC)

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
