package approvals

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Approve implements console.Backend.
func (b *consoleBackend) Approve(ctx context.Context, a console.Approver, approvalID string) (console.Outcome, error) {
	e, who, err := b.decidable(ctx, a, approvalID)
	if err != nil {
		return console.Outcome{}, err
	}
	if approver.SameName(who.Name, e.RequestedBy) {
		return console.Outcome{Kind: console.OutcomeRefused, Reason: "you requested this order yourself, and an order needs a second person's approval; nothing was sent"}, nil
	}
	// A console that cannot send offers no approval; a POST that arrives
	// anyway (an old page, or a forged request) is refused here, logged
	// and audited, before the workflow claims anything.
	if reason, code := b.notSending(e.StoreID); reason != "" {
		b.refused(ctx, e, who.Name, code, reason)
		return console.Outcome{Kind: console.OutcomeRefused, Reason: reason}, nil
	}
	done, err := b.decider(who).Approve(ctx, replenish.Decision{ApprovalID: approvalID, Name: who.Name})
	if err != nil {
		var ref *replenish.Refusal
		if errors.As(err, &ref) && ref.Step == replenish.StepGate {
			// The workflow audits every other refusal itself.
			b.refused(ctx, e, who.Name, string(apperr.CodeOf(ref.Err)), ref.Error())
		}
		o, err := decisionOutcome(err)
		b.decidedInStore(ctx, err, e.StoreID)
		return b.inStore(ctx, o, e.StoreID), err
	}
	o := done.Sent.Order
	return b.inStore(ctx, console.Outcome{Kind: console.OutcomeRaised, OrderID: o.ID, OrderStatus: string(o.Status), ExpectedArrival: o.ExpectedArrival}, e.StoreID), nil
}

// refused logs and audits an approval this console would not send.
func (b *consoleBackend) refused(ctx context.Context, e state.Entry, who, code, reason string) {
	b.log.Warn("console.approve_refused", "approval_id", e.ApprovalID, "approver", who, "store_id", e.StoreID, "sku", e.SKU, "error_code", code)
	b.record(ctx, state.AuditRecord{Time: b.now().UTC(), CallID: "approval-" + e.ApprovalID, Client: "approver:" + who,
		Tool: "approvals.approve", StoreID: e.StoreID, SKU: e.SKU, Outcome: "error", ErrorCode: code,
		Summary: fmt.Sprintf("%s tried to approve %s in the approvals console, which refused: %s Nothing was sent.", who, e.ApprovalID, reason)})
}

// inStore gives an outcome's times in the store's timezone.
func (b *consoleBackend) inStore(ctx context.Context, o console.Outcome, storeID string) console.Outcome {
	loc := b.namer().location(ctx, storeID)
	if !o.ExpectedArrival.IsZero() {
		o.ExpectedArrival = o.ExpectedArrival.In(loc)
	}
	if !o.DecidedAt.IsZero() {
		o.DecidedAt = o.DecidedAt.In(loc)
	}
	return o
}

// Reject implements console.Backend. The ledger keeps who rejected; the
// workflow keeps the reason in the audit trail beside its own record.
func (b *consoleBackend) Reject(ctx context.Context, a console.Approver, approvalID, reason string) error {
	e, who, err := b.decidable(ctx, a, approvalID)
	if err != nil {
		return err
	}
	err = b.reject(ctx, who, approvalID, reason)
	b.decidedInStore(ctx, err, e.StoreID)
	return err
}

// decidedInStore gives a *console.DecidedError's time in the store's
// timezone.
func (b *consoleBackend) decidedInStore(ctx context.Context, err error, storeID string) {
	var d *console.DecidedError
	if errors.As(err, &d) && !d.DecidedAt.IsZero() {
		d.DecidedAt = d.DecidedAt.In(b.namer().location(ctx, storeID))
	}
}

func (b *consoleBackend) reject(ctx context.Context, who state.Approver, approvalID, reason string) error {
	_, err := b.decider(who).Reject(ctx, replenish.Decision{ApprovalID: approvalID, Name: who.Name, Reason: reason})
	if err == nil {
		return nil
	}
	if _, cerr := decisionOutcome(err); cerr != nil {
		return cerr
	}
	// A refusal that is not one of the console's errors: the rejection
	// was not written, and the page must not say it was. Report what the
	// ledger holds instead.
	if e, serr := b.flow.Show(ctx, approvalID); serr == nil && e.State != state.StatePendingApproval {
		return decidedError(e)
	}
	return err
}

// decidedError is the console's error for an approval the ledger holds as
// decided.
func decidedError(e state.Entry) *console.DecidedError {
	return &console.DecidedError{Status: consoleStatus(e.State), OrderID: e.OrderID, DecidedBy: e.DecidedBy, DecidedAt: e.UpdatedAt.UTC()}
}

// record writes r to the audit trail; a failure is logged, and the
// decision it records stands.
func (b *consoleBackend) record(ctx context.Context, r state.AuditRecord) {
	if err := b.audit.RecordAudit(context.WithoutCancel(ctx), r); err != nil {
		b.log.Error("audit.write_failed", "error", err.Error())
	}
}

func (b *consoleBackend) rejectReason(ctx context.Context, e state.Entry) string {
	if e.State != state.StateRejected {
		return ""
	}
	recs, err := b.audit.QueryAudit(ctx, state.AuditFilter{CallID: "approval-" + e.ApprovalID, Tool: replenish.RejectReasonTool})
	if err != nil || len(recs) == 0 {
		return ""
	}
	return recs[len(recs)-1].Summary
}

// decidable finds the entry and checks the approver against its store
// before the workflow runs, so that a page tells revoked and out of scope
// apart from a refusal.
func (b *consoleBackend) decidable(ctx context.Context, a console.Approver, approvalID string) (state.Entry, state.Approver, error) {
	e, err := b.flow.Show(ctx, approvalID)
	var nf *replenish.NotFoundError
	if errors.As(err, &nf) {
		return state.Entry{}, state.Approver{}, console.ErrNotFound
	}
	if err != nil {
		return state.Entry{}, state.Approver{}, err
	}
	who, err := b.authorize(ctx, a, e.StoreID)
	if err != nil {
		return state.Entry{}, state.Approver{}, err
	}
	return e, who, nil
}

// decisionOutcome maps the workflow's typed errors onto the console's
// verdicts and errors.
func decisionOutcome(err error) (console.Outcome, error) {
	var nf *replenish.NotFoundError
	var np *replenish.NotPendingError
	var ref *replenish.Refusal
	switch {
	case errors.As(err, &nf):
		return console.Outcome{}, console.ErrNotFound
	case errors.Is(err, approver.ErrRevoked), errors.Is(err, replenish.ErrDenied):
		return console.Outcome{}, console.ErrRevoked
	case errors.Is(err, approver.ErrOutOfScope):
		return console.Outcome{}, console.ErrOutOfScope
	case errors.As(err, &np) && np.Lapsed:
		return console.Outcome{Kind: console.OutcomeLapsed}, console.ErrLapsed
	case errors.As(err, &np):
		d := decidedError(np.Entry)
		return console.Outcome{Kind: console.OutcomeAlreadyDecided, Prior: d.Status, OrderID: d.OrderID, DecidedBy: d.DecidedBy, DecidedAt: d.DecidedAt}, d
	case errors.As(err, &ref) && ref.Entry.State == state.StateUnknown:
		return console.Outcome{Kind: console.OutcomeUnknown}, nil
	case errors.As(err, &ref):
		return console.Outcome{Kind: console.OutcomeRefused, Reason: refusalReason(ref)}, nil
	}
	return console.Outcome{}, err
}

// refusalReason words a refusal for the approver: what stopped it, without
// the approval id the page already shows or the error code the audit
// trail keeps.
func refusalReason(ref *replenish.Refusal) string {
	msg := ref.Error()
	if ae := apperr.From(ref.Err); ref.Err != nil && ae.Message != "" && ae.Code != "" && ref.Step != replenish.StepBinding && ref.Step != replenish.StepClaim {
		msg = ae.Message
		switch ref.Step {
		case replenish.StepQuantity:
			msg += "; the approval still stands, and rejecting it closes it"
		case replenish.StepSend:
			msg = "StoreLink did not raise the order: " + msg
			if ref.Entry.State == state.StatePendingApproval {
				msg += "; the approval still stands, approve again later"
			}
		}
	}
	if _, rest, ok := strings.Cut(msg, ref.Entry.ApprovalID+": "); ok && ref.Entry.ApprovalID != "" {
		msg = rest
	}
	return msg
}
