package contract

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/storelinkclient/rules"
)

// lines is a findings writer a test reads back.
type lines struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

// findings decodes every finding line written so far.
func (l *lines) findings(t *testing.T) []ProxyFinding {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []ProxyFinding
	sc := bufio.NewScanner(bytes.NewReader(l.buf.Bytes()))
	for sc.Scan() {
		var f ProxyFinding
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			t.Fatalf("a findings line does not parse: %v: %s", err, sc.Text())
		}
		if f.Type == "finding" {
			out = append(out, f)
		}
	}
	return out
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// startProxy serves a proxy to upstream on a loopback port.
func startProxy(t *testing.T, upstream string) (*httptest.Server, *Proxy, *lines) {
	t.Helper()
	out := &lines{}
	p, err := NewProxy(ProxyConfig{Upstream: upstream, Findings: out, Now: fixedNow, Timeout: 10 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(p)
	t.Cleanup(srv.Close)
	return srv, p, out
}

// sent is what came back for one request a test sent.
type sent struct {
	status int
	header http.Header
	body   []byte
}

func send(t *testing.T, method, target, key string, body any) sent {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, target, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("X-Korral-Store-Key", key)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return sent{resp.StatusCode, resp.Header, b}
}

// drive sends store 47's traffic for every operation through base.
func drive(t *testing.T, base, key string) {
	t.Helper()
	since := url.QueryEscape("2026-11-20T00:00:00Z")
	for _, path := range []string{
		"/v1/stores", "/v1/stores/47", "/v1/stores/47/inventory?sku=" + fakeSKU,
		"/v1/skus/" + fakeSKU, "/v1/suppliers/" + fakeSupplier,
	} {
		if r := send(t, "GET", base+path, key, nil); r.status != 200 {
			t.Fatalf("GET %s: %d %s", path, r.status, r.body)
		}
	}
	cursor := ""
	for page := 0; page < 5; page++ {
		target := base + "/v1/stores/47/pos?sku=" + fakeSKU + "&since=" + since + "&limit=10"
		if cursor != "" {
			target += "&cursor=" + url.QueryEscape(cursor)
		}
		r := send(t, "GET", target, key, nil)
		if r.status != 200 {
			t.Fatalf("POS page %d: %d %s", page, r.status, r.body)
		}
		var p struct {
			NextCursor *string `json:"next_cursor"`
		}
		_ = json.Unmarshal(r.body, &p)
		if p.NextCursor == nil {
			break
		}
		cursor = *p.NextCursor
	}
	r := send(t, "POST", base+"/v1/stores/47/replenishment", key,
		map[string]any{"sku": fakeSKU, "quantity_units": 24, "reason": "sold out before close"})
	if r.status != 201 {
		t.Fatalf("raise: %d %s", r.status, r.body)
	}
	var o struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(r.body, &o)
	if r := send(t, "GET", base+"/v1/stores/47/replenishment/"+o.OrderID, key, nil); r.status != 200 {
		t.Fatalf("read back: %d %s", r.status, r.body)
	}
}

// TestProxyPassesConformantTraffic: a conformant StoreLink behind the
// proxy gives no finding, and what comes back is what the upstream said.
func TestProxyPassesConformantTraffic(t *testing.T) {
	t.Parallel()
	f := newFake()
	up := f.serve(t)
	srv, p, out := startProxy(t, up.URL)
	drive(t, srv.URL, f.keys["47"])
	if fs := out.findings(t); len(fs) != 0 {
		t.Fatalf("findings on conformant traffic:\n%s", out)
	}
	// Unchanged both ways: the same request reaches the fake, and the same
	// answer comes back.
	direct := send(t, "GET", up.URL+"/v1/stores/47/pos?sku="+fakeSKU+"&since=2026-11-20T00%3A00%3A00Z&limit=3", f.keys["47"], nil)
	proxied := send(t, "GET", srv.URL+"/v1/stores/47/pos?sku="+fakeSKU+"&since=2026-11-20T00%3A00%3A00Z&limit=3", f.keys["47"], nil)
	if direct.status != proxied.status || !bytes.Equal(direct.body, proxied.body) ||
		direct.header.Get("Content-Type") != proxied.header.Get("Content-Type") {
		t.Errorf("the proxy changed the answer: %d %s vs %d %s", direct.status, direct.body, proxied.status, proxied.body)
	}
	reqs := f.sent()
	if reqs[len(reqs)-1] != reqs[len(reqs)-2] {
		t.Errorf("the proxy changed the request: %q vs %q", reqs[len(reqs)-2], reqs[len(reqs)-1])
	}
	s, err := p.Close()
	if err != nil {
		t.Fatal(err)
	}
	if s.Findings != 0 || s.Requests < 10 || s.Operations[opListPOS].Requests < 3 || s.Operations[opGetOrder].Requests != 1 {
		t.Errorf("summary: %+v", s)
	}
	if !strings.Contains(out.String(), `"type":"summary"`) {
		t.Errorf("no summary line:\n%s", out)
	}
}

// TestProxyCatchesEachRule: each rule a mutating double breaks is a proxy
// finding.
func TestProxyCatchesEachRule(t *testing.T) {
	t.Parallel()
	sp := mustSpec(t)
	for _, ex := range rules.Examples() {
		t.Run(ex.Rule+"/"+ex.Operation, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			up := f.serve(t, mutate(sp, ex, fixedNow()))
			srv, _, out := startProxy(t, up.URL)
			drive(t, srv.URL, f.keys["47"])
			var caught []string
			for _, fd := range out.findings(t) {
				caught = append(caught, fd.Operation+" "+fd.Kind+" "+fd.Rule)
				if fd.Kind == FindingRule && fd.Operation == ex.Operation && fd.Rule == ex.Rule && fd.Field != ex.Field {
					t.Errorf("%s names field %q, want %q", fd.Rule, fd.Field, ex.Field)
				}
			}
			if !slices.Contains(caught, ex.Operation+" "+FindingRule+" "+ex.Rule) {
				t.Fatalf("%s on %s not caught; findings: %v", ex.Rule, ex.Operation, caught)
			}
		})
	}
}

// TestProxyCatchesDrift: each kind of schema drift a StoreLink can send is
// a finding of its kind, and the answer still reaches the caller as sent.
func TestProxyCatchesDrift(t *testing.T) {
	t.Parallel()
	isStore := func(r *http.Request) bool { return r.URL.Path == "/v1/stores/47" }
	cases := []struct {
		name   string
		wrap   func(http.Handler) http.Handler
		key    string // "" sends store 47's key
		want   string // kind
		status int    // what the caller gets
	}{
		{"missing field", rewrite(isStore, func(s int, b map[string]any) (int, any) { delete(b, "timezone"); return s, b }),
			"", FindingSchema, 200},
		{"200 with error", rewrite(isStore, func(int, map[string]any) (int, any) {
			return 200, map[string]any{"error": map[string]any{"code": "internal", "message": "oops"}}
		}), "", FindingErrorIn200, 200},
		{"undeclared status", rewrite(isStore, func(_ int, b map[string]any) (int, any) { return 418, b }),
			"", FindingUndeclaredStatus, 418},
		{"redirect", func(http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				http.Redirect(w, r, "https://elsewhere.invalid/v1/stores/47", http.StatusFound)
			})
		}, "", FindingUndeclaredStatus, 302},
		// A StoreLink that opens a store without a key: the contract says
		// 401, whatever the store.
		{"wrong status", func(next http.Handler) http.Handler {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				r.Header.Set("X-Korral-Store-Key", "slk_47_0123456789abcdef")
				next.ServeHTTP(w, r)
			})
		}, "none", FindingStatus, 200},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			up := f.serve(t, c.wrap)
			srv, p, out := startProxy(t, up.URL)
			key := f.keys["47"]
			if c.key == "none" {
				key = ""
			}
			got := send(t, "GET", srv.URL+"/v1/stores/47", key, nil)
			direct := send(t, "GET", up.URL+"/v1/stores/47", key, nil)
			if got.status != c.status || !bytes.Equal(got.body, direct.body) || got.header.Get("Location") != direct.header.Get("Location") {
				t.Errorf("the caller got %d %s, the upstream said %d %s", got.status, got.body, direct.status, direct.body)
			}
			var kinds []string
			for _, fd := range out.findings(t) {
				kinds = append(kinds, fd.Kind)
				if fd.Operation != opGetStore || fd.Path != "/v1/stores/47" || fd.Method != "GET" {
					t.Errorf("finding names %s %s %s", fd.Operation, fd.Method, fd.Path)
				}
			}
			if !slices.Contains(kinds, c.want) {
				t.Fatalf("no %s finding; got %v:\n%s", c.want, kinds, out)
			}
			if strings.Contains(out.String(), f.keys["47"]) || strings.Contains(out.String(), "oops") {
				t.Errorf("the findings quote a key or the upstream's body:\n%s", out)
			}
			if s, _ := p.Close(); s.Findings == 0 || s.ByKind[c.want] == 0 {
				t.Errorf("summary: %+v", s)
			}
		})
	}
}

// TestProxyJudgesRequests: a request that breaks the contract is a request
// finding, still forwarded; a 2xx answer to it is a wrong status.
func TestProxyJudgesRequests(t *testing.T) {
	t.Parallel()
	f := newFake()
	up := f.serve(t, rewrite(func(r *http.Request) bool { return r.Method == http.MethodPost },
		func(int, map[string]any) (int, any) {
			return 201, map[string]any{"order_id": "RO-47-000900", "store_id": "47", "sku": fakeSKU, "quantity_units": 1,
				"reason": "x", "status": "submitted", "submitted_at": "2026-11-27T14:30:00+01:00", "expected_arrival": "2026-11-29T06:00:00+01:00"}
		}))
	srv, _, out := startProxy(t, up.URL)
	key := f.keys["47"]
	send(t, "GET", srv.URL+"/v1/stores/47/inventory?sku=not-a-sku-secretvalue", key, nil)
	send(t, "POST", srv.URL+"/v1/stores/47/replenishment", key, map[string]any{"sku": fakeSKU, "quantity_units": 0, "reason": "x"})
	send(t, "GET", srv.URL+"/v2/elsewhere", key, nil)
	var got []string
	for _, fd := range out.findings(t) {
		got = append(got, fd.Operation+" "+fd.Kind+" "+fd.Field)
	}
	for _, want := range []string{
		opGetInventory + " " + FindingRequest + " sku",
		opCreateOrder + " " + FindingRequest + " /quantity_units",
		opCreateOrder + " " + FindingStatus + " ",
		" " + FindingRequest + " ",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("no finding %q; got %q", want, got)
		}
	}
	if strings.Contains(out.String(), "secretvalue") || strings.Contains(out.String(), key) {
		t.Errorf("a finding quotes the request:\n%s", out)
	}
	if n := f.count("GET /v1/stores/47/inventory?sku=not-a-sku"); n != 1 {
		t.Errorf("the invalid request reached StoreLink %d times, want 1 (forwarded unchanged)", n)
	}
}

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8089": true, "localhost:0": true, "[::1]:8089": true, "127.0.0.2:1": true,
		":8089": false, "0.0.0.0:8089": false, "10.0.0.5:8089": false, "example.com:80": false, "127.0.0.1": false,
	} {
		if got := IsLoopback(addr); got != want {
			t.Errorf("IsLoopback(%q) = %v, want %v", addr, got, want)
		}
	}
}

// TestProxyKeepsEncodingAndBounds: a gzip answer passes as sent and is
// checked unpacked; a request body over the bound is refused, not sent.
func TestProxyKeepsEncodingAndBounds(t *testing.T) {
	t.Parallel()
	f := newFake()
	up := f.serve(t, func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("Accept-Encoding") != "gzip" {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			var b bytes.Buffer
			zw := gzip.NewWriter(&b)
			_, _ = zw.Write(rec.Body.Bytes())
			_ = zw.Close()
			w.Header().Set("Content-Type", rec.Header().Get("Content-Type"))
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(b.Bytes())
		})
	})
	srv, _, out := startProxy(t, up.URL)
	req, _ := http.NewRequest("GET", srv.URL+"/v1/stores/47", nil)
	req.Header.Set("X-Korral-Store-Key", f.keys["47"])
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.Header.Get("Content-Encoding") != "gzip" || len(raw) < 2 || raw[0] != 0x1f || raw[1] != 0x8b {
		t.Errorf("the gzip answer was not passed as sent: %q %q", resp.Header.Get("Content-Encoding"), raw)
	}
	if fs := out.findings(t); len(fs) != 0 {
		t.Errorf("findings on a gzip answer: %v", fs)
	}

	big := map[string]any{"sku": fakeSKU, "quantity_units": 24, "reason": strings.Repeat("x", maxBody)}
	if r := send(t, "POST", srv.URL+"/v1/stores/47/replenishment", f.keys["47"], big); r.status != http.StatusRequestEntityTooLarge {
		t.Errorf("an oversized body got %d, want 413", r.status)
	}
	if n := f.count("POST"); n != 0 {
		t.Errorf("the oversized body reached StoreLink %d times", n)
	}
	if fs := out.findings(t); len(fs) == 0 || fs[len(fs)-1].Kind != FindingRequest {
		t.Errorf("no request finding for the oversized body: %v", fs)
	}
}
