package e2e_test

import (
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// The approvals console on two replicas sharing PostgreSQL: one login limit,
// one name however spelt, sessions valid at either replica and across
// restarts, forms posted across replicas, and no answer to a foreign host name.

// logCount counts the JSON log lines of c whose msg is one of msgs.
func (c *consoleProc) logCount(msgs ...string) int {
	n := 0
	for _, l := range strings.Split(c.stderr.String(), "\n") {
		var line map[string]any
		if json.Unmarshal([]byte(l), &line) != nil {
			continue
		}
		for _, m := range msgs {
			if line["msg"] == m {
				n++
			}
		}
	}
	return n
}

// secretChecks counts secret checks: each ends in console.login_failed or console.login.
func secretChecks(cs ...*consoleProc) int {
	n := 0
	for _, c := range cs {
		n += c.logCount("console.login_failed", "console.login")
	}
	return n
}

// clientFrom is a console client whose connections leave from loopback address ip.
func clientFrom(t *testing.T, base, ip string) *consoleClient {
	jar, _ := cookiejar.New(nil)
	tr := &http.Transport{DialContext: (&net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}}).DialContext}
	t.Cleanup(tr.CloseIdleConnections)
	return &consoleClient{t: t, base: base, c: &http.Client{Jar: jar, Transport: tr, Timeout: 2 * time.Minute}}
}

// postLogin posts the login form from a goroutine: no t.Fatal.
func (c *consoleClient) postLogin(name, secret string) (int, http.Header, error) {
	form := url.Values{"name": {name}, "secret": {secret}, "csrf": {c.csrf}}
	req, _ := http.NewRequest(http.MethodPost, c.base+"/login", strings.NewReader(form.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := c.c.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header, nil
}

// loggedIn reports whether a page is one of name's session.
func loggedIn(body, name string) bool {
	return strings.Contains(body, `<span class="who">`+name+`</span>`)
}

// loginRefused wants 429 with a Retry-After near the 15-minute window's end.
func loginRefused(t *testing.T, c *consoleClient, name, secret, why string) {
	t.Helper()
	c.get("/login")
	code, hd, err := c.postLogin(name, secret)
	if err != nil {
		t.Fatal(err)
	}
	ra, _ := strconv.Atoi(hd.Get("Retry-After"))
	if code != http.StatusTooManyRequests || ra < 14*60 || ra > 15*60 {
		t.Errorf("%s: %d, Retry-After %q; want 429 until the 15-minute window ends", why, code, hd.Get("Retry-After"))
	}
}

func TestConsoleReplicasShareLimitAndSessions(t *testing.T) {
	dsn := pgDatabase(t)
	w := e2etest.NewWorld(t)
	envA, _ := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	envB, _ := replicaEnv(t, w, dsn, "ALLOW_WRITES=true", "WRITE_APPROVAL=required")
	jana := addApprover(t, envA, "jana", "--stores", "47")
	zoe := addApprover(t, envB, "Zoë", "--stores", "47")
	petr := addApprover(t, envA, "petr", "--stores", "47")
	a, b := startConsoleProc(t, envA), startConsoleProc(t, envB)

	// 1. A session made at replica A is accepted at replica B.
	ja := clientFrom(t, a.url, "127.0.0.1")
	if code, body := ja.login("jana", jana); code != http.StatusOK || !loggedIn(body, "jana") {
		t.Fatalf("jana's login at A: %d\n%s", code, body)
	}
	jb := &consoleClient{t: t, base: b.url, c: ja.c} // the same browser (cookies are per host, not port)
	if code, body, u := jb.get("/"); code != http.StatusOK || u.Path != "/" || !loggedIn(body, "jana") {
		t.Errorf("jana's session at B: %d at %s", code, u)
	}

	// 1b. A form from replica A posted to replica B logs in: the form's key
	// is the database's.
	pa := clientFrom(t, a.url, "127.0.0.6")
	if code, body, _ := pa.get("/login"); code != http.StatusOK || pa.csrf == "" {
		t.Fatalf("the login form at A: %d\n%s", code, body)
	}
	pb := &consoleClient{t: t, base: b.url, c: pa.c, csrf: pa.csrf}
	if code, body := pb.post("/login", url.Values{"name": {"petr"}, "secret": {petr}}, false); code != http.StatusOK || !loggedIn(body, "petr") {
		t.Errorf("petr's login form from A posted to B: %d\n%s", code, body)
	}

	// 2. ... and at both after a restart of both.
	a.stop()
	b.stop()
	a, b = startConsoleProc(t, envA), startConsoleProc(t, envB)
	for _, base := range []string{a.url, b.url} {
		c := &consoleClient{t: t, base: base, c: ja.c}
		if code, body, u := c.get("/"); code != http.StatusOK || u.Path != "/" || !loggedIn(body, "jana") {
			t.Errorf("jana's session at %s after the restart: %d at %s", base, code, u)
		}
	}

	// 3. Fifty concurrent wrong logins over both replicas: at most five
	// secret checks, then even the right secret is locked out.
	wrongLoginBurst(t, a, b)
	loginRefused(t, clientFrom(t, b.url, "127.0.0.3"), "jana", jana, "jana's right secret after the burst")
	loginRefused(t, clientFrom(t, a.url, "127.0.0.3"), "JANA", jana, "jana's right secret, in capitals, at the other replica")

	// 4. The NFD spelling of Zoë shares the NFC spelling's attempts.
	for i := range 5 {
		c := clientFrom(t, []string{a.url, b.url}[i%2], "127.0.0.4")
		if code, _ := c.login("Zoë", "not-zoes-secret-at-all"); code != http.StatusUnauthorized {
			t.Fatalf("Zoë's wrong secret #%d: %d, want 401", i+1, code)
		}
	}
	loginRefused(t, clientFrom(t, b.url, "127.0.0.5"), "Zoe\u0308", zoe, "Zoë's right secret in NFD after five NFC failures")
	// The limit is the name's: another approver from that address logs in.
	if code, body := clientFrom(t, b.url, "127.0.0.5").login("petr", petr); code != http.StatusOK || !loggedIn(body, "petr") {
		t.Errorf("petr from the same address: %d", code)
	}

	// 5. A Host that is not the console's is refused (DNS rebinding).
	refuseForeignHost(t, a, b)
}

// wrongLoginBurst sends fifty concurrent wrong logins for jana over a and b:
// at most five secret checks, every other answer 429 with Retry-After.
func wrongLoginBurst(t *testing.T, a, b *consoleProc) {
	t.Helper()
	before := secretChecks(a, b)
	const burst = 50
	clients := make([]*consoleClient, burst)
	for i := range clients {
		clients[i] = clientFrom(t, []string{a.url, b.url}[i%2], "127.0.0.2")
		clients[i].get("/login")
	}
	codes := make(chan int, burst)
	var wg sync.WaitGroup
	start := make(chan struct{})
	for _, c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			code, hd, err := c.postLogin("jana", "not-janas-secret-at-all")
			if err != nil {
				t.Errorf("burst login: %v", err)
				return
			}
			if code == http.StatusTooManyRequests && hd.Get("Retry-After") == "" {
				t.Error("a 429 without Retry-After")
			}
			codes <- code
		}()
	}
	close(start)
	wg.Wait()
	close(codes)
	byCode := map[int]int{}
	for c := range codes {
		byCode[c]++
	}
	checks := secretChecks(a, b) - before
	t.Logf("burst of %d: %d secret checks; answers %v", burst, checks, byCode)
	if checks > 5 || byCode[http.StatusUnauthorized] > 5 || byCode[http.StatusUnauthorized]+byCode[http.StatusTooManyRequests] != burst {
		t.Errorf("a burst of %d wrong logins over two replicas: %d secret checks, answers %v; want at most 5 checks, the rest 429", burst, checks, byCode)
	}
}

// refuseForeignHost: each replica refuses a foreign Host without a cookie.
func refuseForeignHost(t *testing.T, replicas ...*consoleProc) {
	t.Helper()
	for _, c := range replicas {
		req, _ := http.NewRequest(http.MethodGet, c.url+"/login", nil)
		req.Host = "evil.example"
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusMisdirectedRequest && resp.StatusCode != http.StatusBadRequest {
			t.Errorf("Host: evil.example at %s: %d, want 421", c.url, resp.StatusCode)
		}
		if resp.Header.Get("Set-Cookie") != "" {
			t.Errorf("Host: evil.example at %s got a cookie", c.url)
		}
	}
}
