package replenish

import (
	"context"
	"errors"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Named approvers, verified against the state database's register: only a
// registered, active approver whose stores hold the order's store decides,
// and the ledger and audit trail name them as the register spells them.

// addApprover registers name with secret, limited to stores, beside the
// workflow's own approvers.
func addApprover(t *testing.T, w *Workflow, name, secret string, stores ...string) {
	t.Helper()
	if _, err := w.Verifier.(Named).Approvers.Add(context.Background(), name, stores, secret, t0); err != nil {
		t.Fatal(err)
	}
}

// stageFor stages an order that requestedBy asked for.
func stageFor(t *testing.T, w *Workflow, requestedBy string, qty int64) state.Entry {
	t.Helper()
	out, err := w.Confirm(context.Background(), Order{StoreID: "47", SKU: "8847291", QuantityUnits: qty, Reason: "stockout before close", RequestedBy: requestedBy})
	if err != nil || out.Mode != ModePendingApproval {
		t.Fatalf("confirm: %+v, %v", out, err)
	}
	return out.Entry
}

func TestNamedApproverRecordsTheRegisteredName(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		e := stage(t, w, 24)
		// Typed in another case: the register's spelling is recorded.
		got, err := w.Approve(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "JANA", Secret: credential})
		if err != nil {
			t.Fatal(err)
		}
		if got.Approver.Name != "Jana" || entry(t, b.store, e.ApprovalID).DecidedBy != "Jana" || up.orders() != 1 {
			t.Fatalf("approved by %q, ledger %+v, orders %d", got.Approver.Name, entry(t, b.store, e.ApprovalID), up.orders())
		}
		recs, err := b.store.QueryAudit(context.Background(), state.AuditFilter{Tool: "approvals.approve"})
		if err != nil || len(recs) != 1 || recs[0].Client != "approver:Jana" || recs[0].Outcome != "ok" {
			t.Fatalf("audit: %+v, %v", recs, err)
		}
	})
}

// A wrong secret, an unknown name (with a secret of one's own choosing),
// a revoked approver and one outside the order's stores are all denied,
// change nothing and are audited; the out-of-scope answer names no store.
func TestNamedApproverRefusals(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		const otherSecret = "another-secret-of-32-characters!"
		addApprover(t, w, "Petr", otherSecret)
		addApprover(t, w, "Olga", otherSecret, "102")
		if _, err := b.store.RevokeApprover(context.Background(), "Petr", t0); err != nil {
			t.Fatal(err)
		}
		e := stage(t, w, 24)
		for _, c := range []struct{ name, secret, want string }{
			{"Jana", "not-the-secret-of-jana-at-all", ErrDenied.Error()},
			{"mallory", credential, ErrDenied.Error()},
			{"mallory", "a-credential-of-my-own-choosing", ErrDenied.Error()},
			{"Petr", otherSecret, "Petr is no longer an active approver"},
			{"Olga", otherSecret, "Olga may not decide this order"},
		} {
			for _, decide := range []func(context.Context, Decision) error{
				func(ctx context.Context, d Decision) error { _, err := w.Approve(ctx, d); return err },
				func(ctx context.Context, d Decision) error {
					d.Reason = "not needed this week"
					_, err := w.Reject(ctx, d)
					return err
				},
			} {
				err := decide(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: c.name, Secret: c.secret})
				if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("%s: %v, want ErrDenied saying %q", c.name, err, c.want)
				}
				if strings.Contains(err.Error(), "47") || strings.Contains(err.Error(), "8847291") {
					t.Fatalf("%s: the refusal tells the order: %v", c.name, err)
				}
			}
		}
		if up.orders() != 0 || entry(t, b.store, e.ApprovalID).State != state.StatePendingApproval {
			t.Fatal("a denied decision changed something")
		}
		if codes := auditCodes(t, b.store, "approvals.approve"); len(codes) != 5 || codes[0] != "error:APPROVAL_DENIED" {
			t.Fatalf("audit: %v", codes)
		}
	})
}

// Whoever asked for an order through a bearer token cannot approve it
// under an approver of the same name (in any case); another approver can,
// and the requester may still reject it.
func TestApproverIsNotTheRequester(t *testing.T) {
	eachBackend(t, func(t *testing.T, b backend) {
		clk := mcptest.NewClock(t0)
		up := &fakeStoreLink{}
		w := approvalFlow(up, b.store, clk)
		const petrSecret = "another-secret-of-32-characters!"
		addApprover(t, w, "Petr", petrSecret)
		for i, by := range []string{"token:jana (claude-code)/s-1", "token:JANA/s-2", "token:Jana", "oauth:jana (claude-code)/s-4"} {
			e := stageFor(t, w, by, int64(24+i))
			before := up.orders()
			_, err := w.Approve(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential})
			var ref *Refusal
			if !errors.As(err, &ref) || ref.Step != StepSelf || !strings.Contains(err.Error(), "cannot also approve it") {
				t.Fatalf("requester %q approving: %v", by, err)
			}
			if up.orders() != before || entry(t, b.store, e.ApprovalID).State != state.StatePendingApproval {
				t.Fatalf("requester %q: a refused self-approval changed something", by)
			}
			if by == "token:JANA/s-2" {
				if _, err := w.Reject(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential, Reason: "not needed this week"}); err != nil {
					t.Fatalf("the requester rejecting: %v", err)
				}
				continue
			}
			if _, err := w.Approve(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Petr", Secret: petrSecret}); err != nil {
				t.Fatalf("another approver: %v", err)
			}
		}
		if up.orders() != 3 {
			t.Fatalf("orders: %d, want 3", up.orders())
		}
		codes := auditCodes(t, b.store, "approvals.approve")
		if n := strings.Count(strings.Join(codes, ","), "error:APPROVAL_BY_REQUESTER"); n != 4 {
			t.Fatalf("audit: %v", codes)
		}
		// A requester no token names (stdio: a client's own claim) is not
		// matched against approver names.
		e := stageFor(t, w, "Jana/s-3", 30)
		if _, err := w.Approve(context.Background(), Decision{ApprovalID: e.ApprovalID, Name: "Jana", Secret: credential}); err != nil {
			t.Fatalf("untokened requester: %v", err)
		}
	})
}

func TestRequesterToken(t *testing.T) {
	for in, want := range map[string]string{
		"token:ops-bot (claude-code)/sess": "ops-bot",
		"token:a@b.c/sess":                 "a@b.c",
		"token:x":                          "x",
		"oauth:jana@korral.cz (claude)/s":  "jana@korral.cz",
		"oauth:8f3a-41c2":                  "8f3a-41c2",
		"claude-code/sess":                 "",
		"unknown-client":                   "",
	} {
		if got := requesterToken(in); got != want {
			t.Errorf("requesterToken(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestRejectNeedsAReason: a rejection without a reason, or with one too
// long to read, is refused before anything is looked up; the reason of a
// rejection is in the audit trail under the decision's call id.
func TestRejectNeedsAReason(t *testing.T) {
	for _, reason := range []string{"", "   ", strings.Repeat("x", MaxRejectReason+1)} {
		w := &Workflow{}
		if _, err := w.Reject(context.Background(), Decision{ApprovalID: "apr-1", Name: "Jana", Secret: "s", Reason: reason}); !errors.Is(err, ErrReasonRequired) {
			t.Errorf("reason of %d runes: %v, want ErrReasonRequired", len(reason), err)
		}
	}
}
