package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
	"github.com/korral/storelink/mockstorelink"
)

// redirector answers at UPSTREAM_BASE_URL with a redirect to a counting
// loopback server. With orders set, only POSTs are redirected.
type redirector struct {
	URL        string
	secondHost string
	reached    atomic.Int32
}

func newRedirector(t *testing.T, mock *mockstorelink.Running, status int, orders bool) *redirector {
	t.Helper()
	r := &redirector{}
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.reached.Add(1)
		http.Error(w, "the second host was reached", http.StatusTeapot)
	}))
	t.Cleanup(second.Close)
	r.secondHost = strings.TrimPrefix(second.URL, "http://")
	target, err := url.Parse(mock.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		if orders && req.Method != http.MethodPost {
			proxy.ServeHTTP(w, req)
			return
		}
		http.Redirect(w, req, second.URL+req.URL.RequestURI(), status)
	}))
	t.Cleanup(first.Close)
	r.URL = first.URL
	return r
}

// at is the world's environment with UPSTREAM_BASE_URL at the redirector.
func (r *redirector) at(env []string) []string {
	return append(without(env, "UPSTREAM_BASE_URL"), "UPSTREAM_BASE_URL="+r.URL)
}

var redirectStatuses = []int{http.StatusFound, http.StatusTemporaryRedirect}

// TestRedirectedReadsSendNothingAway: the tool and doctor answer
// UPSTREAM_CONTRACT_ERROR naming the status and host, and no request reaches
// the other host.
func TestRedirectedReadsSendNothingAway(t *testing.T) {
	for _, status := range redirectStatuses {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			w := e2etest.NewWorld(t)
			r := newRedirector(t, w.Mock, status, false)
			env := r.at(w.Env())
			p := e2etest.StartServer(t, env)
			answer := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
			msg := errMessage(answer)
			redirect := strconv.Itoa(status) + " redirect to " + r.secondHost
			if e2etest.Code(answer) != "UPSTREAM_CONTRACT_ERROR" || !strings.Contains(msg, redirect) || !strings.Contains(msg, "UPSTREAM_BASE_URL") {
				t.Errorf("answer %v; want UPSTREAM_CONTRACT_ERROR naming %q", answer, redirect)
			}
			// Ending the process lets its stderr drain completely.
			p.Stop()
			if lines := p.LinesWhere("upstream.contract_error", "field", "status", "level", "WARN"); len(lines) == 0 || lines[0]["call_id"] == "" {
				t.Errorf("no warn line with a call id names the redirect:\n%s", p.Stderr.String())
			}

			out, _, exit := e2etest.RunCLI(t, env, "doctor")
			want := "FAIL  upstream: UPSTREAM_BASE_URL=" + r.URL + " answered GET /v1/stores with a " + redirect
			if exit == 0 || !strings.Contains(out, want) {
				t.Errorf("doctor: exit %d, output lacks %q:\n%s", exit, want, out)
			}
			for _, k := range w.Mock.Server.DefaultKeyring() {
				if strings.Contains(msg+out+p.Stderr.String(), k) {
					t.Fatal("a store key appears in the answer, doctor's output or the log")
				}
			}
			if n := r.reached.Load(); n != 0 {
				t.Fatalf("%d request(s) followed the redirect to the other host", n)
			}
		})
	}
}

// TestRedirectedOrderIsNotSentAnywhere: a redirected order reaches no one and
// is recorded as not sent, so it can be confirmed again; an approval through
// the same address is not consumed.
func TestRedirectedOrderIsNotSentAnywhere(t *testing.T) {
	for _, status := range redirectStatuses {
		t.Run(strconv.Itoa(status), func(t *testing.T) {
			w := e2etest.NewWorld(t)
			r := newRedirector(t, w.Mock, status, true)
			p := e2etest.StartServer(t, r.at(w.Env("ALLOW_WRITES=true")))
			answer := p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true))
			msg := errMessage(answer)
			if e2etest.Code(answer) != "UPSTREAM_CONTRACT_ERROR" || !strings.Contains(msg, strconv.Itoa(status)+" redirect to "+r.secondHost) ||
				!strings.Contains(msg, "the order was not raised") || !strings.Contains(msg, "may be confirmed again") {
				t.Errorf("confirm through a redirect: %v", answer)
			}
			for _, e := range ledgerEntries(t, w.StatePath) {
				if e.State != "retryable" || e.OrderID != "" {
					t.Errorf("ledger entry %+v; want retryable without an order", e)
				}
			}
			if n := r.reached.Load(); n != 0 {
				t.Fatalf("%d request(s) followed the redirect to the other host", n)
			}
			if n := w.Requests(isCreate); n != 0 {
				t.Fatalf("StoreLink received %d order(s)", n)
			}
			judge(t, w)
		})
	}
	t.Run("approval", func(t *testing.T) {
		w, env, cred := approvalWorld(t)
		r := newRedirector(t, w.Mock, http.StatusTemporaryRedirect, true)
		env = r.at(env)
		p := e2etest.StartServer(t, env)
		staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
		id, _ := staged["approval_id"].(string)
		_, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", id, "--approver", "Jana Nováková")
		if exit == 0 || !strings.Contains(stderr, "307 redirect to "+r.secondHost) || !strings.Contains(stderr, "the approval still stands") {
			t.Errorf("approve through a redirect: exit %d: %s", exit, stderr)
		}
		if e := onlyEntry(t, w); e.State != "pending_approval" {
			t.Errorf("the entry is %s, want still pending_approval", e.State)
		}
		if n := r.reached.Load(); n != 0 {
			t.Fatalf("%d request(s) followed the redirect to the other host", n)
		}
		if n := w.Requests(isCreate); n != 0 {
			t.Fatalf("StoreLink received %d order(s)", n)
		}
		judge(t, w)
	})
}

// TestContractErrorNamesItsCause: a timezone that is no IANA zone is named
// with its rule by the message, the log and doctor, without repeating the value.
func TestContractErrorNamesItsCause(t *testing.T) {
	const bad = "Mars/Olympus"
	const cause = "store.timezone: not an IANA time zone"
	w := e2etest.NewWorld(t)
	w.Mock.Server.SetFaults(mockstorelink.Fault{Kind: mockstorelink.FaultDriftFieldValue, OperationID: mockstorelink.OpGetStore,
		StoreID: "47", Field: "timezone", Value: []byte(strconv.Quote(bad))})
	p := e2etest.StartServer(t, w.Env())
	answer := p.Call("korral_check_stock_risk", map[string]any{"sku": mockstorelink.SKUButter, "store_id": "47"})
	msg := errMessage(answer)
	if e2etest.Code(answer) != "UPSTREAM_CONTRACT_ERROR" || !strings.Contains(msg, cause) {
		t.Fatalf("answer %v; want UPSTREAM_CONTRACT_ERROR naming %q", answer, cause)
	}
	// Ending the process lets its stderr drain completely.
	p.Stop()
	lines := p.LinesWhere("upstream.contract_error", "level", "WARN", "field", "store.timezone", "rule", "not an IANA time zone")
	if len(lines) == 0 {
		t.Fatalf("no warn line names the field and the rule:\n%s", p.Stderr.String())
	}
	if id, _ := lines[0]["call_id"].(string); id == "" || len(p.LinesWhere("tool.err", "call_id", id)) != 1 {
		t.Errorf("the line's call id %q does not lead to the call's tool.err line", id)
	}

	out, _, exit := e2etest.RunCLI(t, w.Env(), "doctor")
	if exit == 0 || !strings.Contains(out, "FAIL  key of store 47: store 47: UPSTREAM_CONTRACT_ERROR:") || !strings.Contains(out, cause) ||
		!strings.Contains(out, "ok    key of store 102:") {
		t.Errorf("doctor: exit %d, want store 47 to fail naming %q:\n%s", exit, cause, out)
	}
	if strings.Contains(msg+out+p.Stderr.String(), bad) {
		t.Errorf("StoreLink's value %q was repeated", bad)
	}
}
