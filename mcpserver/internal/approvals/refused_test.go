package approvals_test

import (
	"bytes"
	"context"
	"fmt"
	"html"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/approvals"
	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

var t0 = time.Date(2026, 11, 27, 9, 30, 0, 0, time.UTC)

// storeLink is store 47 selling butter; it counts the orders it gets.
type storeLink struct {
	mu      sync.Mutex
	created int
}

func (*storeLink) Store(_ context.Context, id string) (domain.Store, error) {
	s := domain.Store{ID: id, Name: "Praha Smíchov", Timezone: "Europe/Prague"}
	for d := range s.Hours {
		s.Hours[d] = domain.DayHours{Opens: 7 * 60, Closes: 21 * 60}
	}
	return s, nil
}

func (*storeLink) Inventory(context.Context, string, string) (domain.Inventory, error) {
	return domain.Inventory{OnHand: 5, CountedAt: t0.Add(-time.Hour)}, nil
}

func (*storeLink) Sales(context.Context, string, string, time.Time, int) (domain.SalesPage, error) {
	return domain.SalesPage{}, nil
}

func (*storeLink) SKU(_ context.Context, _, code string) (domain.SKU, error) {
	return domain.SKU{Code: code, Name: "Madeta butter 250g", SupplierID: "SUP-MADETA", CasePack: 12}, nil
}

func (*storeLink) Supplier(context.Context, string, string) (domain.Supplier, error) {
	return domain.Supplier{ID: "SUP-MADETA", Name: "Madeta a.s.", LeadTimeDays: 2}, nil
}

func (*storeLink) Order(_ context.Context, _, id string) (domain.Order, error) {
	return domain.Order{}, apperr.New(apperr.NotFound, "no order "+id, "")
}

func (s *storeLink) CreateOrder(_ context.Context, id string, req domain.OrderRequest) (domain.Order, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.created++
	return domain.Order{ID: fmt.Sprintf("RO-%s-%06d", id, s.created), StoreID: id, SKU: req.SKU, QuantityUnits: req.QuantityUnits, Status: domain.OrderSubmitted}, nil
}

// world is a staged order of store 47 in a real state database, and the
// console over the real backend with the gate and keyring given.
type world struct {
	b     console.Backend
	db    *sqlite.DB
	up    *storeLink
	log   *bytes.Buffer
	url   string
	order string
}

func newWorld(t *testing.T, allowWrites bool, holds func(string) bool) *world {
	t.Helper()
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	clk := mcptest.NewClock(t0)
	v := approver.New(db, approver.WithParams(approver.Params{Memory: 64, Time: 1, Threads: 1}))
	if _, err := v.Add(context.Background(), "jana", nil, "janas secret 0123456789", t0); err != nil {
		t.Fatal(err)
	}
	up := &storeLink{}
	flow := &replenish.Workflow{Upstream: up, UpstreamID: "https://storelink.test", Ledger: db, Audit: db, Now: clk.Now, LookbackDays: 14,
		Gate: replenish.Gate{AllowWrites: true, MaxOrderUnits: 500, RequireApproval: true, ApprovalTTL: 24 * time.Hour,
			Holds: func(string) bool { return true }}}
	out, err := flow.Confirm(context.Background(), replenish.Order{StoreID: "47", SKU: "8847291", QuantityUnits: 24, Reason: "stockout before close", RequestedBy: "agent"})
	if err != nil || out.Mode != replenish.ModePendingApproval {
		t.Fatalf("staging: %+v, %v", out, err)
	}
	// The console's deployment: the gate and keyring under test.
	flow.Gate.AllowWrites, flow.Gate.Holds = allowWrites, holds
	logs := &bytes.Buffer{}
	b := approvals.NewBackend(approvals.Options{Flow: flow, Approvers: db, Audit: db, Holds: holds, Now: clk.Now,
		Log: slog.New(slog.NewJSONHandler(logs, nil))})
	h, err := console.New(b, console.Options{Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &world{b: b, db: db, up: up, log: logs, url: srv.URL, order: out.Entry.ApprovalID}
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// session is a logged-in browser; send returns the status and page.
type session struct {
	t    *testing.T
	c    *http.Client
	base string
	csrf string
}

func (s *session) send(method, path string, form url.Values) (int, string) {
	s.t.Helper()
	var body io.Reader
	if form != nil {
		form.Set("csrf", s.csrf)
		body = strings.NewReader(form.Encode())
	}
	req, _ := http.NewRequest(method, s.base+path, body)
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := s.c.Do(req)
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if m := csrfField.FindSubmatch(b); m != nil {
		s.csrf = string(m[1])
	}
	return resp.StatusCode, string(b)
}

func (w *world) login(t *testing.T) *session {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	s := &session{t: t, c: &http.Client{Jar: jar}, base: w.url}
	s.send("GET", "/login", nil)
	if code, body := s.send("POST", "/login", url.Values{"name": {"jana"}, "secret": {"janas secret 0123456789"}}); code != http.StatusOK || !strings.Contains(body, `id="inbox"`) {
		t.Fatalf("login: %d\n%s", code, body)
	}
	return s
}

// A console that cannot send shows no approval, and an approval posted
// anyway is refused, logged and written to the audit trail: through the
// real handler, backend, workflow and state database.
func TestForgedApprovalIsRefusedLoggedAndAudited(t *testing.T) {
	for _, tc := range []struct {
		name        string
		allowWrites bool
		holds       func(string) bool
		code, says  string
	}{
		{"writes off", false, func(string) bool { return true }, "WRITES_DISABLED", "writes are off"},
		{"no key for the store", true, func(id string) bool { return id != "47" }, "STORE_NOT_AUTHORIZED", "holds no key for store 47"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := newWorld(t, tc.allowWrites, tc.holds)
			s := w.login(t)
			code, page := s.send("GET", "/orders/"+w.order, nil)
			if code != http.StatusOK || strings.Contains(page, `id="approve"`) || !strings.Contains(page, tc.says) {
				t.Fatalf("order page (%d) offers an approval or does not say why not (%q):\n%s", code, tc.says, page)
			}
			code, page = s.send("POST", "/orders/"+w.order+"/approve", url.Values{})
			if code != http.StatusConflict || !strings.Contains(page, "Not sent") || !strings.Contains(page, tc.says) {
				t.Errorf("forged approval: %d\n%s", code, page)
			}
			if w.up.created != 0 {
				t.Fatalf("StoreLink got %d orders", w.up.created)
			}
			recs, err := w.db.QueryAudit(context.Background(), state.AuditFilter{Tool: "approvals.approve"})
			if err != nil {
				t.Fatal(err)
			}
			if len(recs) != 1 || recs[0].ErrorCode != tc.code || recs[0].Client != "approver:jana" || recs[0].StoreID != "47" || recs[0].Outcome != "error" {
				t.Errorf("audit trail: %+v, want one refused approval by jana, %s", recs, tc.code)
			}
			if !strings.Contains(w.log.String(), `"msg":"console.approve_refused"`) || !strings.Contains(w.log.String(), tc.code) {
				t.Errorf("no log line for the refused approval:\n%s", w.log.String())
			}
			e, _, _ := w.db.ByApprovalID(context.Background(), w.order)
			if e.State != state.StatePendingApproval {
				t.Errorf("the refused approval left the order %s", e.State)
			}
		})
	}
}

// An approved order is not its own duplicate: once StoreLink raised it, the
// ledger lists it under StoreLink's order id, and the order page's
// duplicate warning still leaves it out.
func TestRaisedOrderIsNotItsOwnDuplicate(t *testing.T) {
	w := newWorld(t, true, func(string) bool { return true })
	s := w.login(t)
	s.send("GET", "/orders/"+w.order, nil)
	if code, page := s.send("POST", "/orders/"+w.order+"/approve", url.Values{}); code != http.StatusOK || !strings.Contains(page, "Order raised") {
		t.Fatalf("approve: %d\n%s", code, page)
	}
	ctx := context.Background()
	jana, err := w.b.Login(ctx, "jana", "janas secret 0123456789", "test")
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.b.Order(ctx, jana, w.order)
	if err != nil {
		t.Fatal(err)
	}
	if d.Status != console.StatusRaised || d.Decision == nil || d.Justification.DuplicateWarning != "" {
		t.Errorf("the raised order: status %s, decision %+v, duplicate warning %q", d.Status, d.Decision, d.Justification.DuplicateWarning)
	}
	if _, off := d.Decision.At.Zone(); off != 3600 {
		t.Errorf("the decision's time %s is not in the store's timezone (Europe/Prague, +01:00 in November)", d.Decision.At)
	}
}

// TestOrderPageLeadsWithTheHeadline: the order page shows the stock-risk
// headline korral_check_stock_risk gives for the store and SKU (built by
// projection.Headline from the same preview), above the order's facts.
func TestOrderPageLeadsWithTheHeadline(t *testing.T) {
	w := newWorld(t, true, func(string) bool { return true })
	s := w.login(t)
	code, page := s.send("GET", "/orders/"+w.order, nil)
	if code != http.StatusOK {
		t.Fatalf("order page: %d\n%s", code, page)
	}
	jana, err := w.b.Login(context.Background(), "jana", "janas secret 0123456789", "test")
	if err != nil {
		t.Fatal(err)
	}
	d, err := w.b.Order(context.Background(), jana, w.order)
	if err != nil {
		t.Fatal(err)
	}
	h := d.Justification.Headline
	// No sales in the fixture: the projection has no sell rate.
	if !strings.HasPrefix(h, "Stockout time unknown") {
		t.Fatalf("headline %q", h)
	}
	at, facts := strings.Index(page, `<p class="headline" id="headline">`+html.EscapeString(h)+`</p>`), strings.Index(page, `id="request"`)
	if at < 0 || facts < at {
		t.Errorf("the page does not lead with the headline %q:\n%s", h, page)
	}
}
