package contract

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/openapi"
)

// localTimes rewrites the fake's store-scoped times to Prague local time
// without offset; strip only drops each time's offset, as the zoo does.
func localTimes(t *testing.T, strip ...bool) func(http.Handler) http.Handler {
	prague, err := time.LoadLocation("Europe/Prague")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	var walk func(v any) any
	walk = func(v any) any {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				x[k] = walk(e)
			}
		case []any:
			for i, e := range x {
				x[i] = walk(e)
			}
		case string:
			if ts, err := time.Parse(time.RFC3339Nano, x); err == nil {
				if len(strip) > 0 && strip[0] {
					return ts.Format("2006-01-02T15:04:05")
				}
				return ts.In(prague).Format("2006-01-02T15:04:05")
			}
		}
		return v
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			body := rec.Body.Bytes()
			if _, scoped := storeScoped(r.URL.Path); scoped && rec.Code < 300 {
				dec := json.NewDecoder(bytes.NewReader(body))
				dec.UseNumber()
				var doc any
				if dec.Decode(&doc) == nil {
					body, _ = json.Marshal(walk(doc))
				}
			}
			for k, v := range rec.Header() {
				w.Header()[k] = v
			}
			w.Header().Del("Content-Length")
			w.WriteHeader(rec.Code)
			_, _ = w.Write(body)
		})
	}
}

// declared is the embedded contract with the declaration suggest writes
// for local times.
func declared(t *testing.T) []byte {
	t.Helper()
	sug, err := Suggest(openapi.YAML, []Cause{{ID: localTimeCause, Kind: FindingLocalTime, Count: 9, Operations: []string{"getInventory", "listPOSTransactions"}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(sug.Proposals) != 1 || len(sug.Notes) != 0 {
		t.Fatalf("suggest: %+v", sug)
	}
	return sug.Patched
}

// Times without an offset are one cause, whatever the fields and probes
// that met them, and no other cause follows from them.
func TestLocalTimesAreOneCause(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t, localTimes(t))
	cfg := config(f, srv.URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	if len(rep.Causes) != 1 {
		t.Fatalf("causes: %+v", rep.Causes)
	}
	c := rep.Causes[0]
	if c.ID != localTimeCause || c.Kind != FindingLocalTime || c.Count < 4 || len(c.Operations) < 3 {
		t.Errorf("the cause: %+v", c)
	}
}

// suggest's patch declares store-local times under info, and nothing
// else; the patched contract parses and the check reads the declaration.
func TestSuggestDeclaresLocalTimes(t *testing.T) {
	t.Parallel()
	patched := declared(t)
	if !bytes.Contains(patched, []byte("\ninfo:\n")) {
		t.Fatal("no info block")
	}
	_, after, _ := bytes.Cut(patched, []byte("\ninfo:\n"))
	lines := strings.SplitN(string(after), "\n", 3)
	if !strings.HasPrefix(strings.TrimSpace(lines[0]), "#") || lines[1] != "  x-korral-timestamps: store-local" {
		t.Errorf("info begins with %q", lines[:2])
	}
	if got := len(bytes.Split(patched, []byte("\n"))) - len(bytes.Split(openapi.YAML, []byte("\n"))); got != 2 {
		t.Errorf("%d lines added; want the comment and the declaration", got)
	}
	doc, err := openapi.Parse(patched)
	if err != nil {
		t.Fatal(err)
	}
	if on, err := storeLocalTimes(doc); !on || err != nil {
		t.Errorf("declaration read as %v, %v", on, err)
	}
	// Applied twice: the second time it is a note, not a second line.
	again, err := Suggest(patched, []Cause{{ID: localTimeCause, Kind: FindingLocalTime}})
	if err != nil || len(again.Proposals) != 0 || len(again.Notes) != 1 {
		t.Errorf("second suggest: %+v, %v", again, err)
	}
	// Our own contract does not declare it.
	if on, err := storeLocalTimes(mustSpec(t).doc); on || err != nil {
		t.Errorf("the embedded contract declares local times: %v, %v", on, err)
	}
	bad, _ := openapi.Parse(bytes.Replace(patched, []byte("timestamps: store-local"), []byte("timestamps: utc"), 1))
	if _, err := newSpec(bad); err == nil || !strings.Contains(err.Error(), "store-local") {
		t.Errorf("another value: %v", err)
	}
}

// With the declaration the check reads times in the store's zone: no
// cause, one store read per store.
func TestDeclaredLocalTimesPass(t *testing.T) {
	t.Parallel()
	exact := func(f *fake, req string) int {
		n := 0
		for _, r := range f.sent() {
			if r == req {
				n++
			}
		}
		return n
	}
	for _, strip := range []bool{false, true} {
		plain := newFake()
		base := config(plain, plain.serve(t).URL)
		base.AllowWrites, base.WriteStore, base.Generate, base.Seed = true, "47", !strip, 3
		if rep := check(t, base); len(rep.Causes) != 0 {
			t.Fatalf("the fake as it is: %+v", rep.Causes)
		}
		f := newFake()
		srv := f.serve(t, localTimes(t, strip))
		cfg := config(f, srv.URL)
		cfg.AllowWrites, cfg.WriteStore = true, "47"
		cfg.Spec = declared(t)
		// The generated cases too (their since is sent as generated, in
		// UTC, so only where the echo keeps the instant).
		cfg.Generate, cfg.Seed = !strip, 3
		rep := check(t, cfg)
		if len(rep.Causes) != 0 {
			t.Fatalf("strip %v: causes: %+v", strip, rep.Causes)
		}
		if got := failing(rep); len(got) != 0 {
			t.Fatalf("strip %v: failing: %v", strip, got)
		}
		if n, n0 := exact(f, "GET /v1/stores/47"), exact(plain, "GET /v1/stores/47"); n != n0+1 {
			t.Errorf("strip %v: %d reads of store 47, %d without local times; want one more, for its zone", strip, n, n0)
		}
	}
}

// Without a zone for the store the times cannot be read and stay
// findings: the check never guesses a zone.
func TestDeclaredLocalTimesWithoutAZone(t *testing.T) {
	t.Parallel()
	f := newFake()
	noZone := rewrite(func(r *http.Request) bool { return r.URL.Path == "/v1/stores/47" }, func(status int, body map[string]any) (int, any) {
		return 500, map[string]any{"error": map[string]any{"code": "internal", "message": "down"}}
	})
	srv := f.serve(t, localTimes(t), noZone)
	cfg := config(f, srv.URL)
	cfg.Spec = declared(t)
	rep := check(t, cfg)
	found := false
	for _, c := range rep.Causes {
		if c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/format") {
			found = true
		}
	}
	if !found {
		t.Errorf("causes without the store's zone: %+v", rep.Causes)
	}
}

// The proxy, with the declaration, reads the local times of a store's
// answers in the zone the traffic's store read named, and passes the
// answers on unchanged; without it, they are local-time findings.
func TestProxyReadsDeclaredLocalTimes(t *testing.T) {
	t.Parallel()
	doc, err := openapi.Parse(declared(t))
	if err != nil {
		t.Fatal(err)
	}
	withDecl, err := newSpec(doc)
	if err != nil {
		t.Fatal(err)
	}
	for _, decl := range []bool{false, true} {
		f := newFake()
		up := f.serve(t, localTimes(t))
		out := &lines{}
		p, err := NewProxy(ProxyConfig{Upstream: up.URL, Findings: out, Now: fixedNow, Timeout: 10 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		if decl {
			p.spec = withDecl
		}
		srv := httptest.NewServer(p)
		drive(t, srv.URL, f.keys["47"])
		proxied := send(t, "GET", srv.URL+"/v1/stores/47/inventory?sku="+fakeSKU, f.keys["47"], nil)
		srv.Close()
		fs := out.findings(t)
		if decl && len(fs) != 0 {
			t.Errorf("declared: findings:\n%s", out)
		}
		if !decl && (len(fs) == 0 || !strings.Contains(out.String(), `"kind":"local-time"`)) {
			t.Errorf("not declared: want local-time findings:\n%s", out)
		}
		direct := send(t, "GET", up.URL+"/v1/stores/47/inventory?sku="+fakeSKU, f.keys["47"], nil)
		if !strings.Contains(string(direct.body), `"counted_at":"2026-11-27T06:30:00"`) || !bytes.Equal(direct.body, proxied.body) {
			t.Errorf("the proxy changed the answer: %s, directly %s", proxied.body, direct.body)
		}
	}
}
