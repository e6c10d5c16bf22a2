package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi/contract"
)

// TestGenerateAgainstMockConforms: check --generate with writes against
// the strict mock conforms (--max-orders 3 lets every write be sent).
func TestGenerateAgainstMockConforms(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	code, stdout, stderr := cli(t, checkArgs(mock.URL, keyring, "--generate", "--seed", "7",
		"--allow-writes", "--write-store", mockstorelink.StoreSmichov, "--max-orders", "3",
		"--sku", mockstorelink.SKUMinimumOrder, "--max-requests", "400", "--deadline", "25s", "--format", "json")...)
	rep := decodeReport(t, stdout)
	mustConform(t, code, rep, stderr)
	g := rep.Generated
	if g == nil || g.Seed != 7 || g.Sent == 0 || g.Failed != 0 {
		t.Fatalf("generated summary %+v, want seed 7, cases sent, none failing", g)
	}
	if g.NotSent != 0 || g.Held != 0 {
		t.Errorf("%d generated cases not sent, %d held: the bounds are too tight for the CI run", g.NotSent, g.Held)
	}
	if len(rep.OrdersCreated) != 2 {
		t.Errorf("orders left %+v, want the fixed write's and the chain's", rep.OrdersCreated)
	}
	phases := map[string]int{}
	for _, p := range rep.Probes {
		phases[p.Phase]++
	}
	for _, ph := range []string{"data", "auth", "method", "content-type", "chain"} {
		if phases[ph] == 0 {
			t.Errorf("no generated case of phase %s", ph)
		}
	}
	if len(mock.Server.Violations()) != 0 {
		t.Errorf("the mock broke its own contract: %v", mock.Server.Violations())
	}
}

// breakingProxy forwards to the mock but answers 200 where the mock answers
// 400 to a malformed SKU, and counts forwarded requests.
func breakingProxy(t *testing.T, upstream string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	rp.ModifyResponse = func(resp *http.Response) error {
		if resp.StatusCode == http.StatusBadRequest && strings.HasPrefix(resp.Request.URL.Path, "/v1/skus/") {
			resp.StatusCode = http.StatusOK
			body := `{"sku":"8847291","name":"Madeta butter 250g","category":"dairy","supplier_id":"SUP-MADETA","unit":"piece","case_pack":12,"chilled":true}`
			resp.Body = io.NopCloser(strings.NewReader(body))
			resp.ContentLength = int64(len(body))
			resp.Header.Set("Content-Length", strconv.Itoa(len(body)))
		}
		return nil
	}
	var n atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n.Add(1)
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// TestReplayCommand: replay resends exactly the failing cases; no key is
// written.
func TestReplayCommand(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	broken, sent := breakingProxy(t, mock.URL)
	file := filepath.Join(t.TempDir(), "replay.json")
	code, _, stderr := cli(t, checkArgs(broken.URL, keyring, "--generate", "--seed", "11", "--operation", "getSKU", "--replay-out", file)...)
	if code != exitDrift {
		t.Fatalf("check --generate against a broken StoreLink: exit %d\n%s", code, stderr)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for store, key := range mock.Server.DefaultKeyring() {
		if strings.Contains(string(data), key) {
			t.Fatalf("the replay file holds the key of store %s", store)
		}
	}
	var rf contract.ReplayFile
	if err := json.Unmarshal(data, &rf); err != nil || len(rf.Cases) == 0 || rf.Seed != 11 {
		t.Fatalf("replay file: %v, %d cases, seed %d\n%s", err, len(rf.Cases), rf.Seed, data)
	}
	for _, c := range rf.Cases {
		if !slices.Contains(c.Rules, contract.RuleNegativeAccepted) {
			t.Errorf("case %s failed %v, want %s", c.ID, c.Rules, contract.RuleNegativeAccepted)
		}
	}

	before := sent.Load()
	code, stdout, stderr := cli(t, "replay", file, "--keyring-file", keyring, "--format", "json")
	if code != exitDrift || !strings.Contains(stderr, "still fail") {
		t.Fatalf("replay against the same StoreLink: exit %d\n%s", code, stderr)
	}
	if n := sent.Load() - before; n != int64(len(rf.Cases)) {
		t.Errorf("replay sent %d requests for %d cases", n, len(rf.Cases))
	}
	if rep := decodeReport(t, stdout); rep.Summary.Drift != len(rf.Cases) {
		t.Errorf("%d of %d cases still failing, want all", rep.Summary.Drift, len(rf.Cases))
	}

	code, _, stderr = cli(t, "replay", "--base-url", mock.URL, "--keyring-file", keyring, file)
	if code != exitConforms || !strings.Contains(stderr, "pass now") {
		t.Fatalf("replay against the conformant mock: exit %d\n%s", code, stderr)
	}
}

func TestGenerateUsageAndHelp(t *testing.T) {
	t.Parallel()
	good := writeKeyring(t, map[string]string{"47": "k47"})
	dir := t.TempDir()
	notReplay := filepath.Join(dir, "report.json")
	if err := os.WriteFile(notReplay, []byte(`{"format":"something else","cases":[]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	u := "http://127.0.0.1:1"
	for name, tc := range map[string]struct {
		args []string
		want string
	}{
		"seed without generate":       {[]string{"check", "--base-url", u, "--keyring-file", good, "--seed", "1"}, "need --generate"},
		"replay-out without generate": {[]string{"check", "--base-url", u, "--keyring-file", good, "--replay-out", "x.json"}, "need --generate"},
		"bad seed":                    {[]string{"check", "--base-url", u, "--keyring-file", good, "--generate", "--seed", "-1"}, "invalid value"},
		"generate, store not keyed":   {[]string{"check", "--base-url", u, "--keyring-file", good, "--generate", "--store", "55"}, `store "55" has no key`},
		"replay without file":         {[]string{"replay", "--keyring-file", good}, "want exactly one replay file"},
		"replay two files":            {[]string{"replay", "a.json", "b.json", "--keyring-file", good}, "want exactly one replay file"},
		"replay without keyring":      {[]string{"replay", notReplay}, "--keyring-file is required"},
		"replay missing file":         {[]string{"replay", filepath.Join(dir, "none.json"), "--keyring-file", good}, "no such file"},
		"replay not a replay file":    {[]string{"replay", notReplay, "--keyring-file", good}, "want \"storelink-contract-replay/1\""},
		"replay unknown flag":         {[]string{"replay", notReplay, "--keyring-file", good, "--seed", "1"}, "flag provided but not defined"},
	} {
		code, stdout, stderr := cli(t, tc.args...)
		if code != exitUsage || !strings.Contains(stderr, tc.want) || strings.Count(stderr, "\n") != 1 || stdout != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 2, one line with %q", name, code, stdout, stderr, tc.want)
		}
	}
	code, stdout, _ := cli(t, "check", "--help")
	for _, f := range []string{"-generate", "-seed", "-replay-out", "-max-requests", "-deadline", "-rate", "-allow-writes", "-write-store"} {
		if code != 0 || !strings.Contains(stdout, f) {
			t.Errorf("check --help does not list %s", f)
		}
	}
	code, stdout, _ = cli(t, "replay", "--help")
	if code != 0 || !strings.Contains(stdout, "Usage: storelink-contract replay FILE") || !strings.Contains(stdout, "-keyring-file") {
		t.Errorf("replay --help: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = cli(t, "--help")
	if code != 0 || !strings.Contains(stdout, "check --generate") || !strings.Contains(stdout, "storelink-contract replay FILE") {
		t.Errorf("--help does not name generate and replay:\n%s", stdout)
	}
}

func TestDocsListEveryGeneratedRule(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "contract-checker.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range contract.GeneratedRules {
		if !strings.Contains(string(doc), "| `"+r.ID+"` | "+r.Text+" |") {
			t.Errorf("docs/contract-checker.md has no row for rule %s saying %q", r.ID, r.Text)
		}
	}
}

// TestGenerateAgainstLargeWorldConforms: check --generate with writes
// conforms against the large mock.
func TestGenerateAgainstLargeWorldConforms(t *testing.T) {
	t.Parallel()
	mock, err := mockstorelink.Start(mockstorelink.Options{Stores: 180, SKUs: 18000})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { mock.Close() })
	keyring := writeKeyring(t, mock.Server.DefaultKeyring())
	for _, tc := range []struct{ store, sku string }{
		{mockstorelink.StoreIDAt(180), mockstorelink.SKUAt(18000)},
		{mockstorelink.StoreIDAt(7), mockstorelink.SKUButter},
		{mockstorelink.StoreSmichov, mockstorelink.SKUAt(13)},
	} {
		t.Run(tc.store+"/"+tc.sku, func(t *testing.T) {
			code, stdout, stderr := cli(t, "check", "--base-url", mock.URL, "--keyring-file", keyring,
				"--store", tc.store, "--sku", tc.sku, "--rate", "1000/s", "--generate", "--seed", "35",
				"--allow-writes", "--write-store", tc.store, "--max-requests", "400", "--deadline", "25s", "--format", "json")
			rep := decodeReport(t, stdout)
			mustConform(t, code, rep, stderr)
			g := rep.Generated
			if g == nil || g.Sent == 0 || g.Failed != 0 || g.NotSent != 0 {
				t.Fatalf("generated summary %+v, want cases sent, none failing or left out", g)
			}
			t.Logf("%d probes, %d generated cases sent", len(rep.Probes), g.Sent)
			stores := map[string]bool{}
			for _, p := range rep.Probes {
				if strings.Contains(p.Request, "/v1/stores/"+tc.store) {
					stores[tc.store] = true
				}
			}
			if !stores[tc.store] {
				t.Errorf("no probe reached store %s", tc.store)
			}
		})
	}
	if v := mock.Server.Violations(); len(v) != 0 {
		t.Errorf("the mock broke its own contract: %v", v)
	}
	for _, r := range mock.Server.Orders() {
		if r.StoreID == mockstorelink.StoreIDAt(180) {
			return
		}
	}
	t.Error("no order was raised at store 1180")
}
