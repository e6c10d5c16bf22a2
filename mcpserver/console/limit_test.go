package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sync"
	"testing"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/console/consoletest"
)

// byHeader takes the client's address from X-Test-Client, so one test
// speaks from many addresses.
func byHeader(o *console.Options) {
	o.ClientAddr = func(r *http.Request) string { return r.Header.Get("X-Test-Client") }
}

// loginFrom logs in from addr with a browser of its own.
func (f *fixture) loginFrom(t *testing.T, addr, name, pass string) answer {
	br := f.anonymous(t)
	br.header.Set("X-Test-Client", addr)
	return br.login(name, pass)
}

// A burst of concurrent wrong logins for one name is admitted only up to
// the limit: the slow check runs five times, not fifty, and even the right
// secret is locked out afterwards. (The first version checked the limit,
// ran the check, and counted the failure only after it: every request of a
// burst was checked.) The backend holds every check until each request of
// the burst has either reached it or been refused, so the burst is truly
// concurrent however fast the machine.
func TestConcurrentWrongLoginsCheckedUpToTheLimit(t *testing.T) {
	f, b := newSlowFixture(t)
	const burst = 50
	var wg sync.WaitGroup
	refused := make(chan answer, burst)
	for i := range burst {
		br := f.anonymous(t)
		br.header.Set("X-Test-Client", fmt.Sprintf("10.0.%d.%d", i/100, i%100))
		tok := br.token("/login")
		wg.Add(1)
		go func() {
			defer wg.Done()
			a := br.post("/login", url.Values{"csrf": {tok}, "name": {alice}, "secret": {"guess"}})
			if a.status != http.StatusUnauthorized {
				refused <- a
			}
		}()
	}
	checked, limited := 0, 0
	for checked+limited < burst {
		select {
		case <-b.entered:
			checked++
		case a := <-refused:
			limited++
			if a.status != http.StatusTooManyRequests || a.resp.Header.Get("Retry-After") == "" {
				t.Errorf("a refused login: %d, Retry-After %q; want 429 with Retry-After", a.status, a.resp.Header.Get("Retry-After"))
			}
		}
	}
	b.open()
	wg.Wait()
	if checked != console.DefaultLoginFailures || f.b.Calls("Login") != checked {
		t.Errorf("%d concurrent wrong logins: the secret was checked %d times (%d calls), want %d", burst, checked, f.b.Calls("Login"), console.DefaultLoginFailures)
	}
	if a := f.loginFrom(t, "10.9.9.9", alice, secret); a.status != http.StatusTooManyRequests {
		t.Errorf("the right secret after the burst: %d, want 429", a.status)
	}
}

// The name key is the approver register's: every spelling the register
// takes for one name (NFC, NFD, another case) shares one set of attempts.
func TestNameSpellingsShareAttempts(t *testing.T) {
	f := newFixture(t, byHeader)
	f.b.AddApprover("Zoë", "zoes own secret")
	for i := range console.DefaultLoginFailures {
		if a := f.loginFrom(t, fmt.Sprint("10.0.0.", i), "Zoë", "guess"); a.status != http.StatusUnauthorized {
			t.Fatalf("wrong secret #%d: %d", i+1, a.status)
		}
	}
	for _, spelling := range []string{"Zoe\u0308", "ZOE\u0308", "zoë"} {
		if a := f.loginFrom(t, "10.9.9.9", spelling, "zoes own secret"); a.status != http.StatusTooManyRequests {
			t.Errorf("%q after five failures of the NFC spelling: %d, want 429", spelling, a.status)
		}
	}
	if n := f.b.Calls("Login"); n != console.DefaultLoginFailures {
		t.Errorf("Login called %d times, want %d", n, console.DefaultLoginFailures)
	}
}

// slowBackend holds every Login until open is called.
type slowBackend struct {
	*consoletest.Backend
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (b *slowBackend) Login(ctx context.Context, name, secret, addr string) (console.Approver, error) {
	b.entered <- struct{}{}
	<-b.release
	return b.Backend.Login(ctx, name, secret, addr)
}

func (b *slowBackend) open() { b.once.Do(func() { close(b.release) }) }

// newSlowFixture is newFixture over a slowBackend, with the client's
// address from X-Test-Client.
func newSlowFixture(t *testing.T) (*fixture, *slowBackend) {
	clock := consoletest.NewClock(t0)
	inner := consoletest.New(clock.Now)
	inner.AddApprover(alice, secret)
	inner.AddApprover("bob", "bobs secret")
	b := &slowBackend{Backend: inner, entered: make(chan struct{}, 256), release: make(chan struct{})}
	o := console.Options{Now: clock.Now}
	byHeader(&o)
	h, err := console.New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	f := &fixture{b: inner, clock: clock, srv: newServer(t, h)}
	t.Cleanup(b.open) // before the server closes
	return f, b
}

// One address cannot queue more than a few checks: beyond them it is told
// 429 with Retry-After at once, the backend never asked; another address
// is checked meanwhile.
func TestOneAddressQueuesAFewChecksOnly(t *testing.T) {
	f, b := newSlowFixture(t)
	var wg sync.WaitGroup
	for i := range 3 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			f.loginFrom(t, "203.0.113.9", fmt.Sprint("n", i), "guess")
		}()
		<-b.entered
	}
	fourth := make(chan answer, 1)
	go func() { fourth <- f.loginFrom(t, "203.0.113.9", "bob", "bobs secret") }()
	select {
	case a := <-fourth:
		if a.status != http.StatusTooManyRequests || a.resp.Header.Get("Retry-After") != "1" {
			t.Errorf("a fourth check from one address: %d, Retry-After %q; want 429 and 1", a.status, a.resp.Header.Get("Retry-After"))
		}
	case <-b.entered:
		t.Error("a fourth check from one address reached the verifier while three waited")
	}
	other := make(chan answer, 1)
	go func() { other <- f.loginFrom(t, "198.51.100.1", "bob", "bobs secret") }()
	<-b.entered // another address reaches the check while the first waits
	b.open()
	if a := <-other; a.status != http.StatusSeeOther {
		t.Errorf("bob from another address: %d, want 303", a.status)
	}
	wg.Wait()
}

// A Host header naming another site (DNS rebinding) is refused before
// anything else, even before the bearer check; the configured names pass.
func TestForeignHostRefused(t *testing.T) {
	f := newFixture(t, func(o *console.Options) { o.Hosts = []string{"approvals.korral.example", "127.0.0.1:8090"} })
	for host, want := range map[string]int{
		"evil.example": http.StatusMisdirectedRequest, "evil.example:8090": http.StatusMisdirectedRequest,
		"localhost": http.StatusMisdirectedRequest, "approvals.korral.example.evil.example": http.StatusMisdirectedRequest,
		"approvals.korral.example": http.StatusOK, "APPROVALS.korral.example.:443": http.StatusOK, "127.0.0.1:8090": http.StatusOK,
	} {
		req, _ := http.NewRequest(http.MethodGet, f.srv.URL+"/login", nil)
		req.Host = host
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Host %q: %d, want %d", host, resp.StatusCode, want)
		}
		if want != http.StatusOK && resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("Host %q: a refused request set a cookie", host)
		}
	}
	// Without configured hosts, only the loopback names are answered.
	d := newFixture(t, nil)
	for host, want := range map[string]int{"evil.example": http.StatusMisdirectedRequest, "localhost:1": http.StatusOK, "[::1]:8090": http.StatusOK} {
		req, _ := http.NewRequest(http.MethodGet, d.srv.URL+"/login", nil)
		req.Host = host
		req.Header.Set("Authorization", "Bearer x")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if want == http.StatusOK {
			want = http.StatusUnauthorized // the bearer check comes next
		}
		if resp.StatusCode != want {
			t.Errorf("default hosts, Host %q: %d, want %d", host, resp.StatusCode, want)
		}
	}
}

func newServer(t *testing.T, h http.Handler) *httptest.Server {
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}
