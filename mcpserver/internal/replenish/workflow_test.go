package replenish

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/postgres"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

// The approval path of the workflow against both ledger backends, with a
// fake StoreLink and a clock the test moves.

var t0 = time.Date(2026, 11, 27, 13, 30, 0, 0, time.UTC)

// fakeStoreLink is one store (47) selling one SKU. onRead runs on every
// read an approval makes before it sends.
type fakeStoreLink struct {
	mu      sync.Mutex
	minimum int64
	created []domain.OrderRequest
	onRead  func()
}

func (f *fakeStoreLink) read() {
	f.mu.Lock()
	hook := f.onRead
	f.mu.Unlock()
	if hook != nil {
		hook()
	}
}

func (f *fakeStoreLink) Store(_ context.Context, id string) (domain.Store, error) {
	f.read()
	return domain.Store{ID: id, Name: "Praha Smíchov", Timezone: "Europe/Prague"}, nil
}

func (f *fakeStoreLink) Inventory(context.Context, string, string) (domain.Inventory, error) {
	return domain.Inventory{OnHand: 5, CountedAt: t0.Add(-time.Hour)}, nil
}

func (f *fakeStoreLink) Sales(context.Context, string, string, time.Time, int) (domain.SalesPage, error) {
	return domain.SalesPage{}, nil
}

func (f *fakeStoreLink) SKU(_ context.Context, _, code string) (domain.SKU, error) {
	f.read()
	return domain.SKU{Code: code, Name: "Madeta butter 250g", SupplierID: "SUP-MADETA", CasePack: 12}, nil
}

func (f *fakeStoreLink) Supplier(context.Context, string, string) (domain.Supplier, error) {
	f.read()
	f.mu.Lock()
	defer f.mu.Unlock()
	return domain.Supplier{ID: "SUP-MADETA", Name: "Madeta a.s.", LeadTimeDays: 2, MinimumOrderUnit: f.minimum}, nil
}

func (f *fakeStoreLink) Order(_ context.Context, _, id string) (domain.Order, error) {
	return domain.Order{}, apperr.New(apperr.NotFound, "no order "+id, "")
}

func (f *fakeStoreLink) CreateOrder(_ context.Context, id string, req domain.OrderRequest) (domain.Order, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.created = append(f.created, req)
	return domain.Order{ID: fmt.Sprintf("RO-%s-%06d", id, len(f.created)), StoreID: id, SKU: req.SKU, QuantityUnits: req.QuantityUnits, Status: domain.OrderSubmitted}, nil
}

func (f *fakeStoreLink) orders() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.created)
}

// backend is a ledger under test and a way to change its rows directly.
type backend struct {
	store state.Store
	exec  func(t *testing.T, query string)
}

// eachBackend runs fn against SQLite and, when TEST_DATABASE_URL names one,
// PostgreSQL.
func eachBackend(t *testing.T, fn func(t *testing.T, b backend)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "state.db")
		db, err := sqlite.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		fn(t, backend{store: db, exec: func(t *testing.T, query string) {
			t.Helper()
			raw, err := sql.Open("sqlite", path)
			if err != nil {
				t.Fatal(err)
			}
			defer raw.Close()
			if _, err := raw.Exec(query); err != nil {
				t.Fatal(err)
			}
		}})
	})
	t.Run("postgres", func(t *testing.T) {
		url := statetest.PostgresURL(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 8})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		fn(t, backend{store: db, exec: func(t *testing.T, query string) {
			t.Helper()
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, query); err != nil {
				t.Fatal(err)
			}
		}})
	})
}

const (
	upstreamID = "https://storelink.test"
	credential = "approver-credential-0123456789"
	ttl        = time.Hour
)

// cheapArgon keeps the suite fast; package approver tests the real cost.
var cheapArgon = approver.Params{Memory: 64, Time: 1, Threads: 1}

// approvalFlow is a workflow in approval mode at clk, with approver Jana
// (every store) in db's register.
func approvalFlow(up *fakeStoreLink, db state.Store, clk *mcptest.Clock) *Workflow {
	v := approver.New(db, approver.WithParams(cheapArgon))
	if _, err := v.Add(context.Background(), "Jana", nil, credential, clk.Now()); err != nil && !errors.Is(err, state.ErrApproverExists) {
		panic(err)
	}
	return &Workflow{
		Upstream: up, UpstreamID: upstreamID, Ledger: db, Audit: db, Now: clk.Now,
		Verifier: Named{Approvers: v},
		Gate: Gate{AllowWrites: true, MaxOrderUnits: 500, RequireApproval: true, ApprovalTTL: ttl,
			Holds: func(id string) bool { return id == "47" }},
	}
}

// stage stages an order of qty units and returns its entry.
func stage(t *testing.T, w *Workflow, qty int64) state.Entry {
	t.Helper()
	out, err := w.Confirm(context.Background(), Order{StoreID: "47", SKU: "8847291", QuantityUnits: qty, Reason: "stockout before close", RequestedBy: "agent"})
	if err != nil {
		t.Fatal(err)
	}
	if out.Mode != ModePendingApproval || out.Entry.ApprovalID == "" {
		t.Fatalf("confirm in approval mode: %+v", out)
	}
	return out.Entry
}

func approve(w *Workflow, id string) (*Approved, error) {
	return w.Approve(context.Background(), Decision{ApprovalID: id, Name: "Jana", Secret: credential})
}

func entry(t *testing.T, db state.Store, id string) state.Entry {
	t.Helper()
	e, found, err := db.ByApprovalID(context.Background(), id)
	if err != nil || !found {
		t.Fatalf("entry %s: found %v, %v", id, found, err)
	}
	return e
}

func auditCodes(t *testing.T, db state.Store, tool string) []string {
	t.Helper()
	recs, err := db.QueryAudit(context.Background(), state.AuditFilter{Tool: tool})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, r := range recs {
		out = append(out, r.Outcome+":"+r.ErrorCode)
	}
	return out
}

// An approval whose expiry passes during its StoreLink reads is not sent:
// the clock is read at the claim.
func TestApprovalThatLapsesDuringTheRoundTripsIsNotSent(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		staged := stage(t, w, 24)
		// Approve just before expiry; the first read runs past it.
		clk.Advance(ttl - time.Second)
		up.onRead = func() { clk.Advance(2 * time.Second) }
		_, err := approve(w, staged.ApprovalID)
		var np *NotPendingError
		if !errors.As(err, &np) || !np.Lapsed {
			t.Fatalf("approve of an approval that lapsed during the reads: %v", err)
		}
		if n := up.orders(); n != 0 {
			t.Fatalf("StoreLink received %d order(s)", n)
		}
		if e := entry(t, b.store, staged.ApprovalID); e.State != state.StateExpired || e.OrderID != "" {
			t.Fatalf("entry after the lapsed approval: %+v", e)
		}
		if codes := auditCodes(t, b.store, "approvals.approve"); len(codes) != 1 || codes[0] != "error:APPROVAL_EXPIRED" {
			t.Fatalf("audit of the lapsed approval: %v", codes)
		}
	})
}

// An approval raises one order, however often and however concurrently it
// is approved.
func TestApprovalIsSingleUse(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)

		first := stage(t, w, 24)
		if got, err := approve(w, first.ApprovalID); err != nil || got.Entry.ApprovalID != first.ApprovalID || got.Sent.Order.ID == "" {
			t.Fatalf("first approve: %+v, %v", got, err)
		}
		_, err := approve(w, first.ApprovalID)
		var np *NotPendingError
		if !errors.As(err, &np) || np.Entry.State != state.StateRaised {
			t.Fatalf("second approve: %v", err)
		}
		if n := up.orders(); n != 1 {
			t.Fatalf("two approvals raised %d orders", n)
		}

		// Eight concurrent approvers on another staged order.
		second := stage(t, w, 36)
		const approvers = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		wins, errs := 0, []error{}
		start := make(chan struct{})
		for range approvers {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				_, err := approve(w, second.ApprovalID)
				mu.Lock()
				defer mu.Unlock()
				if err == nil {
					wins++
				} else {
					errs = append(errs, err)
				}
			}()
		}
		close(start)
		wg.Wait()
		if wins != 1 || up.orders() != 2 {
			t.Fatalf("%d concurrent approvals won and StoreLink holds %d orders; want 1 and 2 (errors: %v)", wins, up.orders(), errs)
		}
		for _, err := range errs {
			// A losing approval reports the winner's order.
			if !errors.As(err, &np) || np.Entry.State != state.StateRaised || np.Entry.OrderID == "" {
				t.Errorf("a losing approval: %v", err)
			}
		}
		if e := entry(t, b.store, second.ApprovalID); e.State != state.StateRaised {
			t.Fatalf("entry after the concurrent approvals: %+v", e)
		}
	})
}

// The send re-checks the approval binding: a changed request, another
// shown binding or another StoreLink is refused, changing nothing.
func TestApprovalBindsWhatWasStagedAndShown(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		refused := func(t *testing.T, err error, id string) {
			t.Helper()
			var ref *Refusal
			if !errors.As(err, &ref) || ref.Step != StepBinding {
				t.Fatalf("approve: %v", err)
			}
			if n := up.orders(); n != 0 {
				t.Fatalf("StoreLink received %d order(s)", n)
			}
			if e := entry(t, b.store, id); e.State != state.StatePendingApproval || e.DecidedBy != "" {
				t.Fatalf("a refused approval changed the entry: %+v", e)
			}
		}

		t.Run("a field changed in the ledger", func(t *testing.T) {
			e := stage(t, w, 24)
			b.exec(t, fmt.Sprintf(`UPDATE entries SET quantity_units = 96 WHERE approval_id = '%s'`, e.ApprovalID))
			_, err := approve(w, e.ApprovalID)
			refused(t, err, e.ApprovalID)
		})
		t.Run("changed after it was shown", func(t *testing.T) {
			e := stage(t, w, 48)
			shown := e.ApprovalBinding()
			// Change the fingerprint too, so only the shown binding tells.
			b.exec(t, fmt.Sprintf(`UPDATE entries SET quantity_units = 60, request_hash = '%s' WHERE approval_id = '%s'`,
				state.RequestHash(e.StoreID, e.SKU, 60, e.Reason), e.ApprovalID))
			_, err := w.Approve(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential, Binding: shown})
			refused(t, err, e.ApprovalID)
		})
		t.Run("changed between the read and the claim", func(t *testing.T) {
			e := stage(t, w, 60)
			racing := *w
			racing.Ledger = claimHook{Ledger: b.store, before: func() {
				b.exec(t, fmt.Sprintf(`UPDATE entries SET quantity_units = 120 WHERE approval_id = '%s'`, e.ApprovalID))
			}}
			_, err := approve(&racing, e.ApprovalID)
			refused(t, err, e.ApprovalID)
		})
		t.Run("another StoreLink", func(t *testing.T) {
			e := stage(t, w, 72)
			other := *w
			other.Reach = func(context.Context, state.Entry) (Upstream, string, error) { return up, "https://other.test", nil }
			_, err := approve(&other, e.ApprovalID)
			refused(t, err, e.ApprovalID)
		})
		if codes := auditCodes(t, b.store, "approvals.approve"); len(codes) != 4 || codes[0] != "error:APPROVAL_BINDING_CHANGED" {
			t.Fatalf("audit of the refused approvals: %v", codes)
		}
		t.Run("what was shown", func(t *testing.T) {
			e := stage(t, w, 84)
			got, err := w.Approve(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential, Binding: e.ApprovalBinding()})
			if err != nil || got.Entry.QuantityUnits != 84 || up.orders() != 1 {
				t.Fatalf("approve of what was shown: %+v, %v (%d orders)", got, err, up.orders())
			}
		})
	})
}

// claimHook runs its hook just before each Claim.
type claimHook struct {
	state.Ledger
	before func()
}

func (h claimHook) Claim(ctx context.Context, id, by string, now time.Time) (state.Entry, error) {
	h.before()
	return h.Ledger.Claim(ctx, id, by, now)
}

// rejectHook runs its hook just before each Reject.
type rejectHook struct {
	state.Ledger
	before func()
}

func (h rejectHook) Reject(ctx context.Context, id, by string, now time.Time) (state.Entry, error) {
	h.before()
	return h.Ledger.Reject(ctx, id, by, now)
}

// A decision that loses to another process's reports what the ledger holds
// and leaves an audit row of the attempt.
func TestLateDecisionReportsTheLedger(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		other := approvalFlow(up, b.store, clk)

		// Approve wins: the rejection is too late.
		e := stage(t, w, 24)
		late := *w
		late.Ledger = rejectHook{Ledger: b.store, before: func() {
			if _, err := approve(other, e.ApprovalID); err != nil {
				t.Errorf("the other approval: %v", err)
			}
		}}
		_, err := late.Reject(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential, Reason: "enough on the shelf"})
		var np *NotPendingError
		if !errors.As(err, &np) || np.Entry.State != state.StateRaised || np.Entry.OrderID == "" || np.Lapsed {
			t.Fatalf("a rejection after the approval: %v", err)
		}
		if !strings.Contains(err.Error(), "raised at StoreLink as order "+np.Entry.OrderID) || !strings.Contains(err.Error(), "by Jana") {
			t.Errorf("the late rejection reads %q", err)
		}
		if got := entry(t, b.store, e.ApprovalID); got.State != state.StateRaised || up.orders() != 1 {
			t.Fatalf("the ledger holds %s and StoreLink %d orders", got.State, up.orders())
		}
		if codes := auditCodes(t, b.store, "approvals.reject"); !slices.Equal(codes, []string{"error:APPROVAL_ALREADY_DECIDED"}) {
			t.Errorf("audit rows of the rejection: %v", codes)
		}

		// Reject wins: the approval is too late and sends nothing.
		e = stage(t, w, 36)
		lateApprove := *w
		lateApprove.Ledger = claimHook{Ledger: b.store, before: func() {
			if _, err := other.Reject(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential, Reason: "not needed"}); err != nil {
				t.Errorf("the other rejection: %v", err)
			}
		}}
		_, err = approve(&lateApprove, e.ApprovalID)
		if !errors.As(err, &np) || np.Entry.State != state.StateRejected {
			t.Fatalf("an approval after the rejection: %v", err)
		}
		if !strings.Contains(err.Error(), "rejected by Jana") || up.orders() != 1 {
			t.Errorf("the late approval reads %q; StoreLink holds %d orders", err, up.orders())
		}
		if got := entry(t, b.store, e.ApprovalID); got.State != state.StateRejected {
			t.Fatalf("the ledger holds %s", got.State)
		}
	})
}

// Listing and showing only read: a lapsed approval reads as expired but
// stays pending until a decision records it.
func TestListingChangesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		e := stage(t, w, 24)
		clk.Advance(ttl)
		pending, err := w.Staged(context.Background(), false)
		if err != nil || len(pending) != 0 {
			t.Fatalf("pending after the expiry: %v, %v", pending, err)
		}
		all, err := w.Staged(context.Background(), true)
		if err != nil || len(all) != 1 || all[0].State != state.StateExpired {
			t.Fatalf("every staged order after the expiry: %v, %v", all, err)
		}
		if shown, err := w.Show(context.Background(), e.ApprovalID); err != nil || shown.State != state.StateExpired {
			t.Fatalf("show after the expiry: %+v, %v", shown, err)
		}
		if got := entry(t, b.store, e.ApprovalID); got.State != state.StatePendingApproval || !got.UpdatedAt.Equal(e.UpdatedAt) {
			t.Fatalf("listing changed the entry: %+v", got)
		}
		// The decision path writes the expiry down.
		_, err = w.Reject(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential, Reason: "not needed this week"})
		var np *NotPendingError
		if !errors.As(err, &np) || !np.Lapsed {
			t.Fatalf("reject after the expiry: %v", err)
		}
		if got := entry(t, b.store, e.ApprovalID); got.State != state.StateExpired {
			t.Fatalf("entry after the decision: %+v", got)
		}
	})
}

// A person the verifier refuses learns and changes nothing, and is audited.
func TestDeniedApproverChangesNothing(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		e := stage(t, w, 24)
		for _, id := range []string{e.ApprovalID, "apr-nosuchapproval"} {
			_, err := w.Approve(context.Background(), Decision{ApprovalID: id, Name: "mallory", Secret: "a-credential-of-my-own"})
			if !errors.Is(err, ErrDenied) {
				t.Fatalf("approve %s with a wrong credential: %v", id, err)
			}
		}
		if up.orders() != 0 || entry(t, b.store, e.ApprovalID).State != state.StatePendingApproval {
			t.Fatal("a denied approval changed something")
		}
		if codes := auditCodes(t, b.store, "approvals.approve"); len(codes) != 2 || codes[0] != "error:APPROVAL_DENIED" {
			t.Fatalf("audit: %v", codes)
		}
	})
}

// The gate is the same for the agent's confirm and a person's approval.
func TestApprovalGoesThroughTheGate(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		over := stage(t, w, 400)
		low := stage(t, w, 24)
		up.mu.Lock()
		up.minimum = 48
		up.mu.Unlock()
		for _, tc := range []struct {
			name string
			gate func(*Gate)
			id   string
			step Step
			code apperr.Code
		}{
			{"writes off", func(g *Gate) { g.AllowWrites = false }, over.ApprovalID, StepGate, apperr.WritesDisabled},
			{"above the ceiling", func(g *Gate) { g.MaxOrderUnits = 100 }, over.ApprovalID, StepGate, apperr.OrderLimitExceeded},
			{"store not in the keyring", func(g *Gate) { g.Holds = func(string) bool { return false } }, over.ApprovalID, StepQuantity, apperr.StoreNotAuthorized},
			{"below the supplier's minimum", func(*Gate) {}, low.ApprovalID, StepQuantity, apperr.OrderQuantityRefused},
		} {
			t.Run(tc.name, func(t *testing.T) {
				gated := *w
				tc.gate(&gated.Gate)
				_, err := approve(&gated, tc.id)
				var ref *Refusal
				if !errors.As(err, &ref) || ref.Step != tc.step || apperr.CodeOf(err) != tc.code {
					t.Fatalf("approve: %v", err)
				}
			})
		}
		if up.orders() != 0 {
			t.Fatalf("StoreLink received %d order(s)", up.orders())
		}
		for _, id := range []string{over.ApprovalID, low.ApprovalID} {
			if e := entry(t, b.store, id); e.State != state.StatePendingApproval {
				t.Fatalf("a gated approval changed the entry: %+v", e)
			}
		}
	})
}
