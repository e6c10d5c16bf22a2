package main

import (
	"bytes"
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
	"testing"
	"time"

	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi/contract"
	"github.com/korral/storelink/storelinkclient/rules"
)

// route names the operation of a request to StoreLink and its path ids.
func route(method, path string) (op string, q rules.Query) {
	p := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(p) == 2 && p[1] == "stores":
		return rules.OpListStores, q
	case len(p) == 3 && p[1] == "skus":
		q.SKU = p[2]
		return rules.OpGetSKU, q
	case len(p) == 3 && p[1] == "suppliers":
		q.SupplierID = p[2]
		return rules.OpGetSupplier, q
	case len(p) < 3 || p[1] != "stores":
		return "", q
	}
	q.StoreID = p[2]
	switch {
	case len(p) == 3:
		return rules.OpGetStore, q
	case len(p) == 4 && p[3] == "inventory":
		return rules.OpGetInventory, q
	case len(p) == 4 && p[3] == "pos":
		return rules.OpListPOS, q
	case len(p) == 4 && p[3] == "replenishment" && method == http.MethodPost:
		return rules.OpCreateOrder, q
	case len(p) == 5 && p[3] == "replenishment":
		q.OrderID = p[4]
		return rules.OpGetOrder, q
	}
	return "", q
}

// mutatingProxy forwards to the StoreLink at upstream and breaks one rule
// in every successful answer of the example's operation: a StoreLink that
// drifts in meaning while its answers keep their shape.
func mutatingProxy(t *testing.T, upstream string, ex rules.Example) *httptest.Server {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		op, q := route(resp.Request.Method, resp.Request.URL.Path)
		if op != ex.Operation || resp.StatusCode >= 300 {
			return nil
		}
		raw, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			return err
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.UseNumber()
		var body map[string]any
		if dec.Decode(&body) == nil {
			qs := resp.Request.URL.Query()
			q.SKU = cmpOr(q.SKU, qs.Get("sku"))
			q.Cursor, q.Now = qs.Get("cursor"), time.Now()
			q.Since, _ = time.Parse(time.RFC3339, qs.Get("since"))
			ex.Mutate(body, q)
			if raw, err = json.Marshal(body); err != nil {
				return err
			}
		}
		resp.Body = io.NopCloser(bytes.NewReader(raw))
		resp.ContentLength = int64(len(raw))
		resp.Header.Set("Content-Length", strconv.Itoa(len(raw)))
		return nil
	}
	srv := httptest.NewServer(proxy)
	t.Cleanup(srv.Close)
	return srv
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestMutatingStoreLinkIsCaughtRuleByRule: each rule broken by a proxy in
// front of the mock is reported as drift with that rule.
func TestMutatingStoreLinkIsCaughtRuleByRule(t *testing.T) {
	t.Parallel()
	for _, ex := range rules.Examples() {
		t.Run(ex.Rule+"/"+ex.Operation, func(t *testing.T) {
			t.Parallel()
			mock, keyring := startMock(t)
			proxy := mutatingProxy(t, mock.URL, ex)
			code, stdout, stderr := cli(t, checkArgs(proxy.URL, keyring,
				"--allow-writes", "--write-store", mockstorelink.StoreSmichov, "--format", "json")...)
			if code != exitDrift {
				t.Fatalf("exit %d, want %d\nstderr: %s", code, exitDrift, stderr)
			}
			var caught []string
			for _, p := range decodeReport(t, stdout).Probes {
				for _, f := range p.Findings {
					if f.Kind != contract.FindingRule {
						continue
					}
					caught = append(caught, p.Operation+" "+f.Rule)
					if p.Operation == ex.Operation && f.Rule == ex.Rule && (f.Assumption || f.Path == "") {
						t.Errorf("%s on %q: %+v; want a finding of the contract naming the field", f.Rule, p.Probe, f)
					}
				}
			}
			if !slices.Contains(caught, ex.Operation+" "+ex.Rule) {
				t.Errorf("%s on %s not caught; rule findings: %v", ex.Rule, ex.Operation, caught)
			}
		})
	}
}

// TestNoAssumptionsFlag: the flag leaves out the probes that stand on the
// check's own assumptions, and says so in the table.
func TestNoAssumptionsFlag(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	code, stdout, stderr := cli(t, checkArgs(mock.URL, keyring, "--no-assumptions")...)
	if code != exitConforms {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	for _, probe := range []string{"unknown key", "unknown SKU 99999999999999", "unknown supplier", "unknown order"} {
		found := false
		for _, line := range strings.Split(stdout, "\n") {
			if strings.Contains(line, probe) {
				found = true
				if !strings.Contains(line, "SKIPPED") || !strings.Contains(line, "--no-assumptions") {
					t.Errorf("line %q: want skipped by --no-assumptions", line)
				}
			}
		}
		if !found {
			t.Errorf("no probe %q in the table", probe)
		}
	}
	_, help, _ := cli(t, "check", "--help")
	if !strings.Contains(help, "-no-assumptions") {
		t.Errorf("check --help does not list --no-assumptions:\n%s", help)
	}
}

// TestDocsListEveryRule: the checker's guide names every semantic rule by
// its id, as reports and logs do.
func TestDocsListEveryRule(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join("..", "..", "docs", "contract-checker.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rules.Rules() {
		if !strings.Contains(string(doc), "| `"+r.ID+"` |") {
			t.Errorf("docs/contract-checker.md has no row for rule %s", r.ID)
		}
	}
}
