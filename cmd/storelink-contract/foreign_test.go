package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/conformance/foreignstorelink"
	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/openapi/contract"
)

// foreignCauses are the causes a check of the foreign double must report,
// one per departure of its package doc (D2, a status used in place of
// another that the contract does not declare for GETs, is two: the
// status the contract lacks, which suggest declares, and the status used
// in place of 400, which it cannot).
var foreignCauses = map[string]string{
	"D1 error body":             "schema:#/components/schemas/Error:",
	"D2 422 undeclared":         "undeclared-status:422",
	"D2 422 for 400":            "status:400->422",
	"D3 on_hand":                "rename:#/components/schemas/Inventory/properties/on_hand_units:/on_hand",
	"D4 supplier id":            "schema:#/components/schemas/SupplierID/pattern:/supplier_id",
	"D4 min_order_qty":          "rename:#/components/schemas/Supplier/properties/minimum_order_units:/min_order_qty",
	"D4 contact_email":          "schema:#/components/schemas/Supplier/additionalProperties:/contact_email",
	"D5 order id":               "schema:#/components/schemas/OrderID/pattern:/order_id",
	"D5 quantity":               "rename:#/components/schemas/Order/properties/quantity_units:/quantity",
	"D5 created_at":             "rename:#/components/schemas/Order/properties/submitted_at:/created_at",
	"D5 expected_delivery":      "rename:#/components/schemas/Order/properties/expected_arrival:/expected_delivery",
	"D5 status vocabulary":      "schema:#/components/schemas/OrderStatus/enum:/status",
	"D6 page larger than limit": "rule:pos.limit",
	"D7 store order":            "rule:stores.order",
	"D7 region":                 "schema:#/components/schemas/StoreSummary/additionalProperties:/stores/*/region",
	"D8 brand":                  "schema:#/components/schemas/SKU/additionalProperties:/brand",
}

// startForeign serves the foreign double on loopback and writes its
// keyring.
func startForeign(t *testing.T) (*foreignstorelink.Server, *httptest.Server, string) {
	t.Helper()
	double := foreignstorelink.New(foreignstorelink.Options{})
	srv := httptest.NewServer(double)
	t.Cleanup(srv.Close)
	return double, srv, writeKeyring(t, foreignstorelink.DefaultKeys)
}

func foreignCheckArgs(url, keyring string, extra ...string) []string {
	return append([]string{"check", "--base-url", url, "--keyring-file", keyring, "--sku", "8847291",
		"--allow-writes", "--write-store", "47", "--rate", "1000/s", "--format", "json"}, extra...)
}

func causeIDs(causes []contract.Cause) []string {
	var ids []string
	for _, c := range causes {
		ids = append(ids, c.ID)
	}
	return ids
}

// TestForeignStoreLinkEveryDepartureOnce: against the foreign double the
// check reaches every operation and reports each departure as one cause,
// with and without generated cases; no key is reported.
func TestForeignStoreLinkEveryDepartureOnce(t *testing.T) {
	t.Parallel()
	for _, extra := range [][]string{nil, {"--generate", "--seed", "5", "--deadline", "30s"}} {
		t.Run(strings.Join(append([]string{"check"}, extra...), " "), func(t *testing.T) {
			t.Parallel()
			double, srv, keyring := startForeign(t)
			code, stdout, stderr := cli(t, foreignCheckArgs(srv.URL, keyring, extra...)...)
			if code != exitDrift {
				t.Fatalf("exit %d, want 1 (drift)\n%s", code, stderr)
			}
			rep := decodeReport(t, stdout)
			for _, c := range rep.Coverage {
				if c.Status != contract.Checked {
					t.Errorf("%s %s: %s", c.Operation, c.Status, c.Why)
				}
			}
			if len(rep.Coverage) != 8 {
				t.Errorf("coverage of %d operations, want 8", len(rep.Coverage))
			}
			ids := causeIDs(rep.Causes)
			for departure, id := range foreignCauses {
				if n := slicesCount(ids, id); n != 1 {
					t.Errorf("%s: cause %s appears %d times, want once", departure, id, n)
				}
			}
			if extra == nil && len(ids) != len(foreignCauses) {
				t.Errorf("%d causes, want %d (one per departure): %v", len(ids), len(foreignCauses), ids)
			}
			for _, c := range rep.Causes {
				if c.Count < 1 || len(c.Operations) == 0 {
					t.Errorf("cause %s: count %d on %v", c.ID, c.Count, c.Operations)
				}
				if c.ID == foreignCauses["D1 error body"] && len(c.Operations) != 8 {
					t.Errorf("the error body is seen on %v, want all 8 operations", c.Operations)
				}
			}
			// The double holds exactly the orders the report shows raised
			// (with --generate also the chain's, and those of write cases
			// it took but should have refused).
			raised := 0
			for _, p := range rep.Probes {
				if p.Got == 201 {
					raised++
				}
			}
			if got := len(double.Orders()); got != raised || raised == 0 || len(rep.OrdersCreated) != raised {
				t.Errorf("the double holds %d orders, the report shows %d raised and names %d", got, raised, len(rep.OrdersCreated))
			}
			for _, o := range rep.OrdersCreated {
				if !strings.HasPrefix(o.OrderID, "rpl_") {
					t.Errorf("an order left is not named by the double's id: %+v", o)
				}
			}
			for _, key := range foreignstorelink.DefaultKeys {
				if strings.Contains(stdout, key) || strings.Contains(stderr, key) {
					t.Fatal("a key reached the report")
				}
			}
			// The table and JUnit lead with the causes.
			_, table, _ := cli(t, append(foreignCheckArgs(srv.URL, keyring, extra...), "--format", "table")...)
			if !strings.HasPrefix(strings.SplitN(table, "\n", 3)[2], "Causes of drift (") {
				t.Errorf("the table does not lead with the causes:\n%s", table[:min(len(table), 400)])
			}
		})
	}
}

func slicesCount(ids []string, id string) int {
	n := 0
	for _, x := range ids {
		if x == id {
			n++
		}
	}
	return n
}

// TestSuggestFromForeignFindings: after suggest's patch only the causes
// left as notes remain; the patch holds no sent value or key.
func TestSuggestFromForeignFindings(t *testing.T) {
	t.Parallel()
	_, srv, keyring := startForeign(t)
	_, report, _ := cli(t, foreignCheckArgs(srv.URL, keyring)...)
	dir := t.TempDir()
	findings := filepath.Join(dir, "findings.json")
	if err := os.WriteFile(findings, []byte(report), 0o600); err != nil {
		t.Fatal(err)
	}
	patched := filepath.Join(dir, "storelink.yaml")
	code, diff, summary := cli(t, "suggest", findings, "--out", patched)
	if code != 0 || !strings.HasPrefix(diff, "--- a/openapi/storelink.yaml\n+++ b/openapi/storelink.yaml\n") {
		t.Fatalf("suggest exit %d\n%s\n%s", code, summary, diff)
	}
	causes, err := contract.ReadCauses(strings.NewReader(report))
	if err != nil {
		t.Fatal(err)
	}
	sug, err := contract.Suggest(openapi.YAML, causes)
	if err != nil {
		t.Fatal(err)
	}
	proposed, noted := map[string]bool{}, map[string]bool{}
	for _, p := range sug.Proposals {
		proposed[p.CauseID] = true
	}
	for _, n := range sug.Notes {
		noted[n.CauseID] = true
	}
	for _, d := range []string{"D3 on_hand", "D4 min_order_qty", "D4 supplier id", "D5 quantity", "D2 422 undeclared", "D8 brand"} {
		if !proposed[foreignCauses[d]] {
			t.Errorf("no change proposed for %s (%s)", d, foreignCauses[d])
		}
	}
	for _, d := range []string{"D5 status vocabulary", "D6 page larger than limit", "D1 error body"} {
		if !noted[foreignCauses[d]] {
			t.Errorf("%s is not left as a note", d)
		}
	}
	if _, err := openapi.Parse(sug.Patched); err != nil {
		t.Fatalf("the patched contract does not load: %v", err)
	}
	// Nothing the double sent as a value: the supplier's minimum, its
	// e-mail, a region, an id.
	for _, value := range []string{"orders@madeta.example", "sup_5a1c9e02", "Jihomoravský", "rpl_"} {
		if strings.Contains(diff, value) {
			t.Errorf("the patch holds a value StoreLink sent: %q", value)
		}
	}
	for _, key := range foreignstorelink.DefaultKeys {
		if strings.Contains(diff, key) || strings.Contains(summary, key) {
			t.Fatal("a key reached the patch")
		}
	}
	// Against the patched copy, every proposed cause is gone; what is
	// left was left as a note.
	code, again, stderr := cli(t, foreignCheckArgs(srv.URL, keyring, "--spec", patched)...)
	if code == 2 {
		t.Fatalf("the check against the patched contract failed: %s", stderr)
	}
	for _, c := range decodeReport(t, again).Causes {
		if proposed[c.ID] {
			t.Errorf("cause %s is still reported after its change was applied", c.ID)
		}
		if !noted[c.ID] {
			t.Errorf("a new cause after the patch: %s %s", c.ID, c.Text)
		}
	}
}

// TestProxyCausesFromForeignTraffic: the same departures seen through the
// proxy group into the same causes as the check's, and suggest reads the
// proxy's findings too.
func TestProxyCausesFromForeignTraffic(t *testing.T) {
	_, srv, _ := startForeign(t)
	out := filepath.Join(t.TempDir(), "findings.jsonl")
	p := startProxyCmd(t, "--upstream", srv.URL, "--findings", out, "--listen", "127.0.0.1:0")
	key := foreignstorelink.DefaultKeys["47"]
	base := "http://" + p.addr
	send := func(method, path, body string) []byte {
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, _ := http.NewRequest(method, base+path, rd)
		req.Header.Set("X-Korral-Store-Key", key)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return b
	}
	send("GET", "/v1/stores", "")
	send("GET", "/v1/stores/47/inventory?sku=8847291", "")
	var sku struct {
		SupplierID string `json:"supplier_id"`
	}
	_ = json.Unmarshal(send("GET", "/v1/skus/8847291", ""), &sku)
	send("GET", "/v1/suppliers/"+url.PathEscape(sku.SupplierID), "")
	since := url.QueryEscape(time.Now().Add(-72 * time.Hour).UTC().Format(time.RFC3339))
	send("GET", "/v1/stores/47/pos?sku=8847291&since="+since+"&limit=1", "")
	send("GET", "/v1/stores/47/pos?sku=8847291&since="+since+"&limit=2", "")
	var o struct {
		OrderID string `json:"order_id"`
	}
	_ = json.Unmarshal(send("POST", "/v1/stores/47/replenishment", `{"sku":"8847291","quantity_units":12,"reason":"proxy test"}`), &o)
	send("GET", "/v1/stores/47/replenishment/"+url.PathEscape(o.OrderID), "")
	send("GET", "/v1/stores/47/replenishment/rpl_0000000000", "")
	if code := p.exit(); code != exitDrift {
		t.Fatalf("exit %d, want 1:\n%s", code, p.stderr)
	}
	data, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	causes, err := contract.ReadCauses(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	ids := causeIDs(causes)
	for _, d := range []string{"D1 error body", "D3 on_hand", "D4 min_order_qty", "D4 supplier id", "D5 quantity",
		"D5 created_at", "D5 order id", "D6 page larger than limit", "D7 store order", "D7 region", "D8 brand"} {
		if slicesCount(ids, foreignCauses[d]) != 1 {
			t.Errorf("%s: cause %s not reported once by the proxy: %v", d, foreignCauses[d], ids)
		}
	}
	// The two POS pages broke pos.limit once each: one cause, counted twice.
	for _, c := range causes {
		if c.ID == foreignCauses["D6 page larger than limit"] && c.Count != 2 {
			t.Errorf("pos.limit counted %d times, want 2", c.Count)
		}
	}
	if !strings.Contains(p.stderr.String(), "causes (") {
		t.Errorf("the summary on stderr does not group by cause:\n%s", p.stderr)
	}
	sug, err := contract.Suggest(openapi.YAML, causes)
	if err != nil || !slices.ContainsFunc(sug.Proposals, func(p contract.Proposal) bool { return p.CauseID == foreignCauses["D4 min_order_qty"] }) {
		t.Errorf("suggest on the proxy's findings proposes no rename of the supplier's minimum (err %v)", err)
	}
	if strings.Contains(string(data), key) || strings.Contains(p.stderr.String(), key) {
		t.Error("a key reached the findings or the log")
	}
}
