package e2e_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/internal/e2etest"
)

// Approvals and time: the approval binds what was staged, expiry is checked
// at sending, a pinned clock never reaches a real StoreLink, and listing
// changes nothing.

const ledgerTime = "2006-01-02T15:04:05.000000000Z07:00"

// stageOne starts a server with env (approval mode), stages an order of 24 units and stops it.
func stageOne(t *testing.T, env []string) (approvalID string) {
	t.Helper()
	p := e2etest.StartServer(t, env)
	defer p.Stop()
	staged := data(t, p.Call("korral_raise_replenishment_order", e2etest.Order(24, "confirm", true)))
	id, _ := staged["approval_id"].(string)
	if id == "" {
		t.Fatalf("nothing staged: %v", staged)
	}
	return id
}

// An approval that lapses while StoreLink holds the approver's first read is not sent.
func TestApprovalLapsingDuringItsReadsIsNotSent(t *testing.T) {
	// Start-up time varies, so a run whose approval lapsed before any read was
	// held proves nothing and is repeated with a window twice as long.
	for window := 3 * time.Second; ; window *= 2 {
		if approvalLapsesDuringReads(t, window) {
			return
		}
		if window >= 24*time.Second {
			t.Fatalf("the approval lapsed before its StoreLink reads began even with %s to spare; nothing here tested the reads", window)
		}
		t.Logf("the approval lapsed before its StoreLink reads began with %s to spare; again with a longer window", window)
	}
}

// approvalLapsesDuringReads approves an approval lapsing in window while
// StoreLink holds its first read; it reports false when no read was held.
func approvalLapsesDuringReads(t *testing.T, window time.Duration) (held bool) {
	t.Helper()
	w, env, cred := approvalWorld(t)
	target, _ := url.Parse(w.Mock.URL)
	forward := httputil.NewSingleHostReverseProxy(target)
	var mu sync.Mutex
	var expiry time.Time // zero: pass everything through
	var holds atomic.Int32
	slow := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		mu.Lock()
		until := expiry
		mu.Unlock()
		if !until.IsZero() && r.Method == http.MethodGet && r.URL.Path == "/v1/stores/47" {
			holds.Add(1)
			for deadline := time.Now().Add(window + 10*time.Second); !time.Now().After(until) && time.Now().Before(deadline); {
				time.Sleep(10 * time.Millisecond)
			}
		}
		forward.ServeHTTP(rw, r)
	}))
	defer slow.Close()
	env = append(without(env, "UPSTREAM_BASE_URL"), "UPSTREAM_BASE_URL="+slow.URL)
	id := stageOne(t, env)

	// The first read returns only after the approval has lapsed.
	lapse := time.Now().Add(window)
	execState(t, w.StatePath, `UPDATE entries SET approval_expires_at = ? WHERE approval_id = ?`, lapse.UTC().Format(ledgerTime), id)
	mu.Lock()
	expiry = lapse
	mu.Unlock()
	_, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "approve", id, "--approver", "Jana Nováková")
	if holds.Load() == 0 {
		// Lapsed before the reads: correct, but not what this test checks.
		if exit != 1 || !strings.Contains(stderr, "lapsed at") || w.Requests(isCreate) != 0 {
			t.Fatalf("approve of an approval that lapsed before its reads: exit %d, %d POSTs: %s", exit, w.Requests(isCreate), stderr)
		}
		return false
	}
	if exit != 1 || !strings.Contains(stderr, "lapsed at") || !strings.Contains(stderr, "nothing was sent") {
		t.Fatalf("approve of an approval that lapsed during its reads: exit %d: %s", exit, stderr)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs", n)
	}
	if e := onlyEntry(t, w); e.State != "expired" || e.OrderID != "" {
		t.Fatalf("entry after the lapsed approval: %+v", e)
	}
	if trail, _, _ := e2etest.RunCLI(t, env, "audit", "--tool", "approvals.approve"); !strings.Contains(trail, "APPROVAL_EXPIRED") {
		t.Fatalf("the lapsed approval is not in the audit trail:\n%s", trail)
	}
	judge(t, w)
	return true
}

// Every command that runs no embedded demo refuses STORELINK_MOCK_NOW.
func TestPinnedClockIsRefusedOutsideTheDemo(t *testing.T) {
	w, env, cred := approvalWorld(t)
	id := stageOne(t, env)
	// Lapsed a minute ago; a clock pinned an hour back would call it live.
	execState(t, w.StatePath, `UPDATE entries SET approval_expires_at = ? WHERE approval_id = ?`,
		time.Now().Add(-time.Minute).UTC().Format(ledgerTime), id)
	past := "STORELINK_MOCK_NOW=" + time.Now().Add(-time.Hour).UTC().Format(time.RFC3339)
	future := "STORELINK_MOCK_NOW=2027-06-01T12:00:00Z"
	// Keyring only: the ledger names the StoreLink, and nothing is the demo.
	shell := append(without(env, "UPSTREAM_BASE_URL"), "APPROVER_SECRET="+cred)
	for _, args := range [][]string{
		{"approvals", "approve", id, "--approver", "Jana"},
		{"approvals", "reject", id, "--approver", "Jana", "--reason", "not needed"},
		{"approvals", "list"},
		{"approvals", "list", "--all"},
		{"approvals", "show", id},
		{"approvals", "resolve", id, "--not-raised", "--approver", "Jana"},
		{"audit"},
		{"migrate"},
		{"doctor"},
	} {
		for _, pin := range []string{past, future} {
			for _, e := range [][]string{shell, append(shell, "UPSTREAM_BASE_URL="+w.Mock.URL)} {
				out, stderr, exit := e2etest.RunCLI(t, append(e, pin), args...)
				if exit != 2 || !strings.Contains(stderr, "STORELINK_MOCK_NOW") {
					t.Errorf("%s with %s: exit %d, want 2 naming STORELINK_MOCK_NOW:\n%s%s", strings.Join(args, " "), pin, exit, out, stderr)
				}
			}
		}
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs", n)
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" {
		t.Fatalf("a refused command changed the entry: %+v", e)
	}
	// A server running the embedded demo still takes it.
	dir := t.TempDir()
	p := e2etest.StartServer(t, []string{"STATE_DB_PATH=" + dir + "/state.db", "HOME=" + dir, future})
	defer p.Stop()
	if c := e2etest.Code(p.Call("korral_list_authorized_stores", map[string]any{})); c != "" {
		t.Fatalf("the embedded demo with a pinned clock: %s", c)
	}
}

// Listing and showing approvals never writes lapsed ones down as expired.
func TestListingApprovalsChangesNothing(t *testing.T) {
	w, env, cred := approvalWorld(t)
	id := stageOne(t, env)
	execState(t, w.StatePath, `UPDATE entries SET approval_expires_at = ? WHERE approval_id = ?`,
		time.Now().Add(-time.Minute).UTC().Format(ledgerTime), id)
	before := ledgerRows(t, w.StatePath)
	list, _, exit := e2etest.RunCLI(t, env, "approvals", "list")
	if exit != 0 || strings.Contains(list, id) {
		t.Fatalf("list (exit %d) shows a lapsed approval:\n%s", exit, list)
	}
	all, _, exit := e2etest.RunCLI(t, env, "approvals", "list", "--all")
	if exit != 0 || !strings.Contains(all, id) || !strings.Contains(all, "expired") {
		t.Fatalf("list --all (exit %d):\n%s", exit, all)
	}
	if show, _, exit := e2etest.RunCLI(t, env, "approvals", "show", id); exit != 0 || !strings.Contains(show, `"state":"expired"`) {
		t.Fatalf("show (exit %d): %s", exit, show)
	}
	after := ledgerRows(t, w.StatePath)
	if len(before) != len(after) {
		t.Fatalf("ledger rows: %v before, %v after", before, after)
	}
	for k, v := range before {
		if after[k] != v {
			t.Fatalf("listing changed %s: %q before, %q after", k, v, after[k])
		}
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" {
		t.Fatalf("listing wrote the expiry: %+v", e)
	}
	// A decision about it writes the expiry down.
	if _, stderr, exit := e2etest.RunCLI(t, append(env, "APPROVER_SECRET="+cred), "approvals", "reject", id, "--approver", "Jana", "--reason", "not needed"); exit != 1 || !strings.Contains(stderr, "expired") {
		t.Fatalf("reject of a lapsed approval: exit %d: %s", exit, stderr)
	}
	if e := onlyEntry(t, w); e.State != "expired" {
		t.Fatalf("entry after the decision: %+v", e)
	}
}

// A staged order changed in the state database is not sent: the send checks
// the approval binding (the request as staged, at its StoreLink).
func TestApprovalOfAChangedOrderIsRefused(t *testing.T) {
	w, env, cred := approvalWorld(t)
	id := stageOne(t, env)
	execState(t, w.StatePath, `UPDATE entries SET quantity_units = 96 WHERE approval_id = ?`, id)
	approver := append(env, "APPROVER_SECRET="+cred)
	_, stderr, exit := e2etest.RunCLI(t, approver, "approvals", "approve", id, "--approver", "Jana Nováková")
	if exit != 1 || !strings.Contains(stderr, "no longer what was staged") || !strings.Contains(stderr, "nothing was sent") {
		t.Fatalf("approve of a changed order: exit %d: %s", exit, stderr)
	}
	if n := w.Requests(isCreate); n != 0 {
		t.Fatalf("%d POSTs", n)
	}
	if e := onlyEntry(t, w); e.State != "pending_approval" || e.OrderID != "" {
		t.Fatalf("a refused approval changed the entry: %+v", e)
	}
	if trail, _, _ := e2etest.RunCLI(t, env, "audit", "--tool", "approvals.approve"); !strings.Contains(trail, "APPROVAL_BINDING_CHANGED") {
		t.Fatalf("the refused approval is not in the audit trail:\n%s", trail)
	}
	// Put back as staged, it is approved as staged.
	execState(t, w.StatePath, `UPDATE entries SET quantity_units = 24 WHERE approval_id = ?`, id)
	if out, stderr, exit := e2etest.RunCLI(t, approver, "approvals", "approve", id, "--approver", "Jana Nováková"); exit != 0 || !strings.Contains(out, "raised") {
		t.Fatalf("approve as staged: exit %d: %s %s", exit, out, stderr)
	}
	if e := onlyEntry(t, w); e.State != "raised" || e.Units != 24 {
		t.Fatalf("entry after the approval: %+v", e)
	}
	judge(t, w)
}
