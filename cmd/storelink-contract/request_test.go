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
	"strings"
	"sync/atomic"
	"testing"

	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/openapi/contract"
)

// quantityStoreLink fronts the mock, wanting "quantity" instead of
// "quantity_units" in order requests, and counts the orders raised.
func quantityStoreLink(t *testing.T, upstream string) (*httptest.Server, *atomic.Int64) {
	t.Helper()
	target, err := url.Parse(upstream)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	var passed atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodPost && strings.HasSuffix(r.URL.Path, "/replenishment") {
			var body map[string]any
			raw, _ := io.ReadAll(r.Body)
			if json.Unmarshal(raw, &body) == nil {
				q, ok := body["quantity"]
				if !ok {
					w.Header().Set("Content-Type", "application/json")
					w.WriteHeader(http.StatusUnprocessableEntity)
					_, _ = io.WriteString(w, `{"detail":[{"loc":["body","quantity"],"msg":"Field required","type":"missing"}]}`)
					return
				}
				delete(body, "quantity")
				body["quantity_units"] = q
				raw, _ = json.Marshal(body)
			}
			r.Body = io.NopCloser(bytes.NewReader(raw))
			r.ContentLength = int64(len(raw))
			rec := &statusWriter{ResponseWriter: w}
			rp.ServeHTTP(rec, r)
			if rec.status == http.StatusCreated {
				passed.Add(1)
			}
			return
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(srv.Close)
	return srv, &passed
}

// TestRequestRenameIsOneCause: against quantityStoreLink the check reports
// one rename cause, resends the write and raises one order; the suggested
// patch makes the next check send "quantity".
func TestRequestRenameIsOneCause(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	front, passed := quantityStoreLink(t, mock.URL)
	code, stdout, stderr := cli(t, checkArgs(front.URL, keyring, "--allow-writes", "--write-store", "47", "--format", "json")...)
	if code != 1 {
		t.Fatalf("exit %d, want drift: %s", code, stderr)
	}
	rep := decodeReport(t, stdout)
	const want = "rename:#/components/schemas/OrderRequest/properties/quantity_units:/quantity"
	var ids []string
	for _, c := range rep.Causes {
		ids = append(ids, c.ID)
		if c.Kind == contract.FindingStatus || c.Kind == contract.FindingUndeclaredStatus {
			t.Errorf("a status cause: %s %s", c.ID, c.Text)
		}
	}
	if len(rep.Causes) == 0 || rep.Causes[0].ID != want {
		t.Fatalf("causes %q, want %s first", ids, want)
	}
	// The other cause is the validation body's shape (not the contract's
	// envelope), shared by every refusal.
	if len(rep.Causes) != 2 || rep.Causes[1].ID != "schema:#/components/schemas/Error:" {
		t.Errorf("causes %q", ids)
	}
	for _, p := range rep.Probes {
		if strings.Contains(p.Detail, "minimum order could not be read") {
			t.Errorf("%s %s blames the supplier's minimum: %s", p.Operation, p.Probe, p.Detail)
		}
	}
	// The write is sent once more with StoreLink's name: it raises
	// exactly one order, which conforms and is read back.
	verdicts := map[string]contract.Verdict{}
	for _, p := range rep.Probes {
		verdicts[p.Operation+" / "+p.Probe] = p.Verdict
	}
	for _, probe := range []string{"createReplenishmentOrder / raise one order, again with StoreLink's request names", "getReplenishmentOrder / read back the raised order"} {
		if verdicts[probe] != contract.Pass {
			t.Errorf("%s: %q, want PASS; probes %v", probe, verdicts[probe], verdicts)
		}
	}
	if n := passed.Load(); n != 1 {
		t.Errorf("%d orders reached StoreLink, want 1", n)
	}
	dir := t.TempDir()
	findings := filepath.Join(dir, "findings.json")
	if err := os.WriteFile(findings, []byte(stdout), 0o600); err != nil {
		t.Fatal(err)
	}
	patched := filepath.Join(dir, "storelink.yaml")
	code, diff, summary := cli(t, "suggest", findings, "--out", patched)
	if code != 0 || !strings.Contains(summary, "change "+want+": rename OrderRequest.quantity_units to quantity (Go field QuantityUnits)") {
		t.Fatalf("suggest exit %d:\n%s", code, summary)
	}
	if !strings.Contains(diff, "+        quantity:\n+          x-go-name: QuantityUnits\n") {
		t.Errorf("the patch:\n%s", diff)
	}
	b, err := os.ReadFile(patched)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := openapi.Parse(b); err != nil {
		t.Fatal(err)
	}
	// Checked again against the patched contract, the check sends
	// StoreLink's name: the request rename is gone, no cause is new, and
	// the one write raises one order at once.
	code, again, stderr := cli(t, checkArgs(front.URL, keyring, "--allow-writes", "--write-store", "47", "--format", "json", "--spec", patched)...)
	if code == 2 {
		t.Fatalf("the re-check failed: %s", stderr)
	}
	for _, c := range decodeReport(t, again).Causes {
		if c.ID == want || !slices.Contains(ids, c.ID) {
			t.Errorf("after the patch: %s %s", c.ID, c.Text)
		}
	}
	if n := passed.Load(); n != 2 {
		t.Errorf("%d orders reached StoreLink over both checks, want 2", n)
	}
}

// statusWriter records the status an answer is written with.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(status int) {
	w.status = status
	w.ResponseWriter.WriteHeader(status)
}
