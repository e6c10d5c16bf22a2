package replenish

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// A person's side of the workflow: list, show, approve, reject and resolve
// staged orders. Typed errors (ErrDenied, *NotFoundError, *NotPendingError,
// *Refusal) let a caller tell the cases apart.

// Decision is a person's decision about a staged order.
type Decision struct {
	ApprovalID string
	// Name and Secret identify the person to the Verifier.
	Name, Secret string
	// Binding is the approval binding the person was shown; "" binds what
	// the ledger recorded at staging.
	Binding string
	// Reason is a rejection's reason, required by Reject and audited.
	Reason string
}

// RejectReasonTool names the audit record that keeps a rejection's reason,
// under the call id "approval-" + approval id.
const RejectReasonTool = "approvals.reject_reason"

// MaxRejectReason bounds a rejection's reason, in runes.
const MaxRejectReason = 1000

// ErrReasonRequired refuses a rejection without a reason.
var ErrReasonRequired = errors.New("a rejection needs a reason (at most 1000 characters), so the requester learns why; nothing was changed")

// Approved is an approval StoreLink accepted.
type Approved struct {
	// Entry is the order as claimed and sent.
	Entry    state.Entry
	Approver Approver
	// Sent is the order StoreLink raised and how far its recording got.
	Sent Sent
}

// Step names where a decision stopped.
type Step string

// The steps a Refusal names.
const (
	StepGate     Step = "gate"     // writes off, or above the ceiling
	StepSelf     Step = "self"     // the approver is the order's requester
	StepReach    Step = "reach"    // the entry's StoreLink could not be used
	StepBinding  Step = "binding"  // what would be sent is not what was approved
	StepQuantity Step = "quantity" // the quantity gate refused it, or could not read
	StepClaim    Step = "claim"    // the ledger did not hand the approval over
	StepSend     Step = "send"     // StoreLink did not raise the order
	StepDecide   Step = "decide"   // the ledger did not record a rejection
)

// Refusal is a decision that stopped at Step. Entry is the entry after it;
// Err is the cause.
type Refusal struct {
	Step  Step
	Entry state.Entry
	Err   error
	msg   string
}

func (r *Refusal) Error() string { return r.msg }
func (r *Refusal) Unwrap() error { return r.Err }

// NotFoundError reports that no entry answers to Ref.
type NotFoundError struct {
	Ref string
	// Ledger: Ref was looked up as a key or an approval id (Resolve).
	Ledger bool
}

func (e *NotFoundError) Error() string {
	if e.Ledger {
		return fmt.Sprintf("no ledger entry with idempotency key or approval id %s", e.Ref)
	}
	return fmt.Sprintf("no staged order with approval id %s", e.Ref)
}

// NotPendingError reports a staged order that can no longer be decided.
// Entry is the ledger's entry at answer time (a send in progress is waited
// for, within settleWait).
type NotPendingError struct {
	Verb  string
	Entry state.Entry
	// Lapsed: its approval ran out; the workflow has recorded the expiry.
	Lapsed bool
}

func (e *NotPendingError) Error() string {
	if e.Lapsed {
		return fmt.Sprintf("%s %s: the staged order is %s (it lapsed at %s), no longer pending; nothing was sent",
			e.Verb, e.Entry.ApprovalID, state.StateExpired, e.Entry.ApprovalExpiresAt.UTC().Format(time.RFC3339))
	}
	noun := map[string]string{"approve": "approval", "reject": "rejection"}[e.Verb]
	if noun == "" {
		noun = e.Verb
	}
	return fmt.Sprintf("%s %s: too late, the staged order is %s, no longer pending: %s; your %s changed nothing",
		e.Verb, e.Entry.ApprovalID, e.Entry.State, DecidedText(e.Entry), noun)
}

// DecidedText says, for a person, who decided a staged order, when (UTC),
// and which StoreLink order it became.
func DecidedText(e state.Entry) string {
	by, at := "", ""
	if e.DecidedBy != "" {
		by = " by " + e.DecidedBy
	}
	if !e.UpdatedAt.IsZero() {
		at = " at " + e.UpdatedAt.UTC().Format(time.RFC3339)
	}
	switch e.State {
	case state.StateRaised:
		return fmt.Sprintf("it was approved%s and raised at StoreLink as order %s%s", by, e.OrderID, at)
	case state.StateSending:
		return fmt.Sprintf("it was approved%s and is still being sent to StoreLink (since%s); check its status before doing anything else", by, at)
	case state.StateUnknown:
		return fmt.Sprintf("it was approved%s and sent%s, but StoreLink's answer was lost: the order may exist; check its status", by, at)
	case state.StateFailed:
		return fmt.Sprintf("it was approved%s and StoreLink refused the order%s", by, at)
	case state.StateRejected:
		return fmt.Sprintf("it was rejected%s%s; nothing was sent", by, at)
	case state.StateExpired:
		return fmt.Sprintf("its approval lapsed at %s; nothing was sent", e.ApprovalExpiresAt.UTC().Format(time.RFC3339))
	}
	return fmt.Sprintf("it is %s", e.State)
}

// Staged lists the orders awaiting approval, oldest first, or with all
// every staged order, each as it stands now. It only reads; expiries are
// written on the decision path.
func (w *Workflow) Staged(ctx context.Context, all bool) ([]state.Entry, error) {
	now := w.now()
	var es []state.Entry
	var err error
	if all {
		es, err = w.Ledger.Staged(ctx)
	} else {
		es, err = w.Ledger.Pending(ctx, now)
	}
	if err != nil {
		return nil, err
	}
	for i := range es {
		es[i] = es[i].AsOf(now)
	}
	return es, nil
}

// Show returns the staged order approvalID names, as it stands now.
func (w *Workflow) Show(ctx context.Context, approvalID string) (state.Entry, error) {
	e, found, err := w.Ledger.ByApprovalID(ctx, approvalID)
	if err != nil {
		return state.Entry{}, err
	}
	if !found {
		return state.Entry{}, &NotFoundError{Ref: approvalID}
	}
	return e.AsOf(w.now()), nil
}

// pending finds the staged order of a decision and verifies the person. A
// person the Verifier refuses learns nothing of the entry, not even whether
// it exists.
func (w *Workflow) pending(ctx context.Context, verb string, d Decision) (state.Entry, Approver, error) {
	e, found, err := w.Ledger.ByApprovalID(ctx, d.ApprovalID)
	if err != nil {
		return state.Entry{}, Approver{}, err
	}
	who, err := w.verify(ctx, d.Name, d.Secret, e.StoreID)
	if errors.Is(err, ErrDenied) {
		w.log().Warn("approval.denied", "approval_id", d.ApprovalID, "decided_by", d.Name, "action", verb)
		w.recordDecision(ctx, e, d.ApprovalID, d.Name, verb, "error", "APPROVAL_DENIED",
			fmt.Sprintf("%s tried to %s %s and was not accepted as an approver; nothing changed.", d.Name, verb, d.ApprovalID))
	}
	if err != nil {
		return state.Entry{}, Approver{}, err
	}
	if !found {
		return state.Entry{}, Approver{}, &NotFoundError{Ref: d.ApprovalID}
	}
	now := w.now()
	if cur := e.AsOf(now); cur.State != state.StatePendingApproval {
		np := w.notPending(ctx, verb, w.settle(ctx, e), now)
		w.recordLate(ctx, np, who.Name)
		return state.Entry{}, Approver{}, np
	}
	return e, who, nil
}

// settleWait bounds how long a losing decision waits for a send in progress
// to end, so it can report the result instead of "being sent".
const settleWait = 15 * time.Second

// settle returns e, or once e's send has ended (or settleWait passed) the
// entry as it stands then.
func (w *Workflow) settle(ctx context.Context, e state.Entry) state.Entry {
	deadline := time.Now().Add(settleWait)
	for e.State == state.StateSending && time.Now().Before(deadline) {
		select {
		case <-ctx.Done():
			return e
		case <-time.After(100 * time.Millisecond):
		}
		cur, found, err := w.Ledger.ByApprovalID(ctx, e.ApprovalID)
		if err != nil || !found {
			return e
		}
		e = cur
	}
	return e
}

// late answers a decision whose ledger write lost to another: the entry as
// it stands now, with an audit row. Nil when the entry cannot be read or is
// still pending.
func (w *Workflow) late(ctx context.Context, verb, id, who string, now time.Time) *NotPendingError {
	cur, found, err := w.Ledger.ByApprovalID(ctx, id)
	if err != nil || !found || cur.AsOf(now).State == state.StatePendingApproval {
		return nil
	}
	np := w.notPending(ctx, verb, w.settle(ctx, cur), now)
	w.recordLate(ctx, np, who)
	return np
}

// recordLate audits a decision that lost to another one.
func (w *Workflow) recordLate(ctx context.Context, np *NotPendingError, who string) {
	code := "APPROVAL_ALREADY_DECIDED"
	if np.Lapsed || np.Entry.State == state.StateExpired {
		code = "APPROVAL_EXPIRED"
	}
	w.recordDecision(ctx, np.Entry, np.Entry.ApprovalID, who, np.Verb, "error", code,
		fmt.Sprintf("%s tried to %s %s too late: %s.", who, np.Verb, np.Entry.ApprovalID, DecidedText(np.Entry)))
}

func (w *Workflow) verify(ctx context.Context, name, secret, storeID string) (Approver, error) {
	if w.Verifier == nil {
		return Approver{}, ErrDenied
	}
	return w.Verifier.Verify(ctx, name, secret, storeID)
}

// notPending answers about an entry that is not pending at now, recording
// a lapsed approval as expired.
func (w *Workflow) notPending(ctx context.Context, verb string, e state.Entry, now time.Time) *NotPendingError {
	lapsed := e.State == state.StatePendingApproval && e.AsOf(now).State == state.StateExpired
	if lapsed {
		if got, err := w.Ledger.Apply(context.WithoutCancel(ctx), e.IdempotencyKey, state.EventExpire, state.Change{}, now); err == nil {
			e = got
		} else {
			// Readers see it as expired (Entry.AsOf); the next decision records it.
			w.log().Warn("approval.expire_failed", "approval_id", e.ApprovalID, "error", err.Error())
			e = e.AsOf(now)
		}
	}
	return &NotPendingError{Verb: verb, Entry: e, Lapsed: lapsed}
}

// Reject turns a staged order down; nothing is sent.
func (w *Workflow) Reject(ctx context.Context, d Decision) (state.Entry, error) {
	reason := strings.TrimSpace(d.Reason)
	if reason == "" || utf8.RuneCountInString(reason) > MaxRejectReason {
		return state.Entry{}, ErrReasonRequired
	}
	pending, who, err := w.pending(ctx, "reject", d)
	if err != nil {
		return state.Entry{}, err
	}
	now := w.now()
	e, err := w.Ledger.Reject(ctx, d.ApprovalID, who.Name, now)
	if err != nil {
		if errors.Is(err, state.ErrNotPending) {
			// Another decision took the approval after the read above.
			if late := w.late(ctx, "reject", d.ApprovalID, who.Name, now); late != nil {
				return state.Entry{}, late
			}
		}
		return state.Entry{}, &Refusal{Step: StepDecide, Entry: pending, Err: err, msg: fmt.Sprintf("reject %s: %v", d.ApprovalID, err)}
	}
	w.recordDecision(ctx, e, d.ApprovalID, who.Name, "reject", "ok", "",
		fmt.Sprintf("%s rejected the staged order %s (%d unit(s) of SKU %s for store %s); nothing was sent.", who.Name, d.ApprovalID, e.QuantityUnits, e.SKU, e.StoreID))
	w.audit(ctx, state.AuditRecord{Time: now.UTC(), CallID: "approval-" + d.ApprovalID, Client: "approver:" + who.Name,
		Tool: RejectReasonTool, StoreID: e.StoreID, SKU: e.SKU, Outcome: "ok", Summary: reason})
	return e, nil
}

// Approve releases a staged order through the agent's gate, binding check,
// the ledger's claim and the same send. The approval is single use, and
// expiry is checked with the clock read at the claim, right before sending.
func (w *Workflow) Approve(ctx context.Context, d Decision) (*Approved, error) {
	const verb = "approve"
	e, who, err := w.pending(ctx, verb, d)
	if err != nil {
		return nil, err
	}
	id := d.ApprovalID
	notSent := func(step Step, code string, cause error, msg string) error {
		w.recordDecision(ctx, e, id, who.Name, verb, "error", code, fmt.Sprintf("%s tried to approve %s, but it was not sent: %s.", who.Name, id, msg))
		return &Refusal{Step: step, Entry: e, Err: cause, msg: msg}
	}
	// Four eyes: the requester cannot release it under an approver of the
	// same name.
	if tok := requesterToken(e.RequestedBy); tok != "" && approver.SameName(tok, who.Name) {
		return nil, notSent(StepSelf, "APPROVAL_BY_REQUESTER", errSelfApproval,
			fmt.Sprintf("approve %s: %s requested this order (%s %s) and cannot also approve it; another approver must; nothing was sent, and the approval still stands", id, who.Name, requesterKind(e.RequestedBy), tok))
	}
	// A person's approval does not lift the deployment's limits.
	if err := w.Gate.Local(e.QuantityUnits); err != nil {
		msg := "this deployment does not allow writes (ALLOW_WRITES); nothing was sent"
		if apperr.CodeOf(err) == apperr.OrderLimitExceeded {
			msg = fmt.Sprintf("%d units is above MAX_ORDER_UNITS=%d; nothing was sent", e.QuantityUnits, w.Gate.MaxOrderUnits)
		}
		return nil, &Refusal{Step: StepGate, Entry: e, Err: err, msg: msg}
	}
	up, target, err := w.reach(ctx, e)
	if err != nil {
		w.recordDecision(ctx, e, id, who.Name, verb, "error", "APPROVAL_NOT_SENT", fmt.Sprintf("%s tried to approve %s, but it was not sent: %v.", who.Name, id, err))
		return nil, &Refusal{Step: StepReach, Entry: e, Err: err, msg: err.Error()}
	}
	// Re-read the quantity gate: the supplier's minimum may have changed.
	if err := w.Gate.Check(ctx, up, e.StoreID, e.SKU, e.QuantityUnits); err != nil {
		ae := apperr.From(err)
		w.recordDecision(ctx, e, id, who.Name, verb, "error", string(ae.Code), fmt.Sprintf("%s tried to approve %s, but it was not sent: %s.", who.Name, id, ae.Message))
		return nil, &Refusal{Step: StepQuantity, Entry: e, Err: err,
			msg: fmt.Sprintf("approve %s: %s: %s; the approval still stands, and rejecting it is the way to close it", id, ae.Code, ae.Message)}
	}
	// What is sent must be what was staged and shown.
	bound := expectedBinding(e, d.Binding, target)
	if e.SendBinding(target) != bound {
		return nil, notSent(StepBinding, "APPROVAL_BINDING_CHANGED", errBindingChanged, bindingMessage(id))
	}
	// Read the clock after the round trips: an approval that lapsed
	// meanwhile is not sent.
	now := w.now()
	claimed, err := w.Ledger.Claim(ctx, id, who.Name, now)
	if err != nil {
		var fl *state.InFlightError
		switch {
		case errors.As(err, &fl):
			return nil, &Refusal{Step: StepClaim, Entry: e, Err: err,
				msg: fmt.Sprintf("approve %s: the same order is already %s under idempotency key %s; resolve that first; nothing changed", id, fl.Entry.State, fl.Entry.IdempotencyKey)}
		case errors.Is(err, state.ErrNotPending) && e.AsOf(now).State == state.StateExpired:
			w.recordDecision(ctx, e, id, who.Name, verb, "error", "APPROVAL_EXPIRED",
				fmt.Sprintf("%s tried to approve %s, but it lapsed at %s before it could be sent; nothing was sent.", who.Name, id, e.ApprovalExpiresAt.UTC().Format(time.RFC3339)))
			return nil, w.notPending(ctx, verb, e, now)
		case errors.Is(err, state.ErrNotPending):
			// Another decision took the approval after the read above.
			if late := w.late(ctx, verb, id, who.Name, now); late != nil {
				return nil, late
			}
		}
		return nil, &Refusal{Step: StepClaim, Entry: e, Err: err, msg: fmt.Sprintf("approve %s: %v", id, err)}
	}
	// The claimed entry changed after the read above; the approval goes
	// back to waiting, unconsumed.
	if claimed.SendBinding(target) != bound {
		back, uerr := w.Ledger.Apply(context.WithoutCancel(ctx), claimed.IdempotencyKey, state.EventUnclaim, state.Change{}, w.now())
		if uerr == nil {
			e = back
		}
		return nil, notSent(StepBinding, "APPROVAL_BINDING_CHANGED", errBindingChanged, bindingMessage(id))
	}
	sent, err := w.send(ctx, up, claimed)
	if err != nil {
		ae := apperr.From(err)
		after, _, _ := w.Ledger.ByApprovalID(ctx, id)
		w.recordDecision(ctx, after, id, who.Name, verb, "error", string(ae.Code), fmt.Sprintf("%s approved %s but StoreLink did not take it: %s; the entry is now %s.", who.Name, id, ae.Message, after.State))
		msg := fmt.Sprintf("approved, but StoreLink did not raise the order: %s: %s (the entry is now %s)", ae.Code, ae.Message, after.State)
		if after.State == state.StatePendingApproval {
			msg = fmt.Sprintf("not sent: %s: %s; the approval still stands, approve again later", ae.Code, ae.Message)
		}
		return nil, &Refusal{Step: StepSend, Entry: after, Err: err, msg: msg}
	}
	o := sent.Order
	w.recordDecision(ctx, claimed, id, who.Name, verb, "ok", "", fmt.Sprintf("%s approved %s: order %s raised for %d unit(s) of SKU %s at store %s.", who.Name, id, o.ID, claimed.QuantityUnits, claimed.SKU, claimed.StoreID))
	return &Approved{Entry: claimed, Approver: who, Sent: sent}, nil
}

// errSelfApproval is the cause of a StepSelf refusal.
var errSelfApproval = errors.New("the approver is the order's requester")

// errBindingChanged is the cause of a StepBinding refusal.
var errBindingChanged = errors.New("the approval binding differs")

func bindingMessage(id string) string {
	return fmt.Sprintf("approve %s: the staged order is no longer what was staged and shown for approval (its store, SKU, quantity or reason changed in the ledger, or it would go to another StoreLink); nothing was sent, and the approval was not used: reject it, and stage the order again", id)
}

// expectedBinding is the binding an approval of e must send: the one shown,
// else the one recorded at staging, else (old entries) the StoreLink Reach
// accepted.
func expectedBinding(e state.Entry, shown, target string) string {
	legacy := e
	if legacy.UpstreamID == "" {
		legacy.UpstreamID = target
	}
	if shown == "" || e.UpstreamID == "" && shown == e.ApprovalBinding() {
		return legacy.ApprovalBinding()
	}
	return shown
}

// reach is the StoreLink a decision about e acts on: Reach's, else the
// workflow's own.
func (w *Workflow) reach(ctx context.Context, e state.Entry) (Upstream, string, error) {
	if w.Reach != nil {
		return w.Reach(ctx, e)
	}
	if !w.SameUpstream(e) {
		return nil, "", fmt.Errorf("%s was recorded for the StoreLink at %s, but this server sends to %s; nothing changed", e.IdempotencyKey, e.UpstreamID, w.UpstreamID)
	}
	return w.Upstream, w.UpstreamID, nil
}

// recordDecision audits a person's decision and logs it. e is zero when no
// entry was found.
func (w *Workflow) recordDecision(ctx context.Context, e state.Entry, id, who, verb, outcome, code, summary string) {
	rec := state.AuditRecord{Time: w.now().UTC(), CallID: "approval-" + id, Client: "approver:" + who, Tool: "approvals." + verb,
		StoreID: e.StoreID, SKU: e.SKU, Outcome: outcome, ErrorCode: code, Summary: summary}
	w.audit(ctx, rec)
	w.log().Info("audit", "call_id", rec.CallID, "client", rec.Client, "tool", rec.Tool, "store_id", rec.StoreID, "sku", rec.SKU,
		"outcome", outcome, "error_code", code, "summary", summary)
}

func (w *Workflow) audit(ctx context.Context, rec state.AuditRecord) {
	if w.Audit == nil {
		return
	}
	if err := w.Audit.RecordAudit(context.WithoutCancel(ctx), rec); err != nil {
		w.log().Error("audit.write_failed", "error", err.Error())
	}
}
