package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/orderlink"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Approval in the conversation (WRITE_APPROVAL=required with
// CONSOLE_PUBLIC_URL, ADR 0021): a staged order's answer leads the buyer
// to its page in the approvals console. Hosts with URL elicitation are
// asked to open it (input_required on 2026-07-28); others read the link in
// next_step. Opening it needs a log-in.

// DefaultApprovalPoll is how often the server reads the ledger for the
// decisions its sessions wait on (one read for all of them).
const DefaultApprovalPoll = time.Second

// approvalInputID names the URL request of an input_required answer.
const approvalInputID = "approve_order"

// leadToApprover leads the buyer of a staged order to its console page, by
// URL elicitation where possible, else by the link in next_step; on
// 2026-07-28 it returns *inputRequired. The answer also carries
// approval_url. It does nothing without a console URL or for an order not
// awaiting approval.
func (s *server) leadToApprover(ctx context.Context, c *call, r *replenish.Outcome, out *raiseOut) error {
	w := s.opts.Writes
	e := r.Entry
	fresh := r.Mode == replenish.ModePendingApproval
	if !fresh && (r.Mode != replenish.ModeReplay || e.State != state.StatePendingApproval) {
		return nil
	}
	link := orderlink.URL(w.ConsoleURL, e.ApprovalID)
	if link == "" {
		return nil
	}
	out.ApprovalURL = link
	req := c.req
	watchable := req != nil && req.Session != nil && s.approvals.room(req.Session)
	if fresh && req != nil && req.Session != nil && !watchable && canElicitURL(req.ClientCapabilities()) {
		s.log.WarnContext(ctx, "approval.watch_refused", "call_id", c.id, "approval_id", e.ApprovalID, "max", MaxApprovalWatchesPerSession)
	}
	if fresh && watchable && canElicitURL(req.ClientCapabilities()) {
		ask := &mcp.ElicitParams{Mode: "url", Message: approvalMessage(r), URL: link}
		if req.ProtocolVersion() >= multiRoundTripVersion {
			if req.Params.RequestState == "" {
				// The state carries no authority: the retry replays the order by its
				// idempotency key.
				return &inputRequired{requests: mcp.InputRequestMap{approvalInputID: ask}, state: e.ApprovalID}
			}
		} else {
			ask.ElicitationID = e.ApprovalID
			res, err := req.Session.Elicit(ctx, ask)
			switch {
			case err != nil:
				s.log.WarnContext(ctx, "approval.elicit_failed", "call_id", c.id, "approval_id", e.ApprovalID, "err", err)
			case res.Action == "accept":
				s.log.InfoContext(ctx, "approval.elicited", "call_id", c.id, "approval_id", e.ApprovalID, "action", res.Action)
				ss := req.Session
				if !s.approvals.watch(ss, func() { _ = ss.Wait() }, e, func(ctx context.Context) error {
					return ss.NotifyElicitationComplete(ctx, &mcp.ElicitationCompleteParams{ElicitationID: e.ApprovalID})
				}) {
					// Another call took the last slot since room said yes.
					s.log.WarnContext(ctx, "approval.watch_refused", "call_id", c.id, "approval_id", e.ApprovalID, "max", MaxApprovalWatchesPerSession)
				}
				out.NextStep = "Nothing was sent. The host opened the order's page in the approvals console for the buyer; a named approver logs in there and approves or rejects it. " +
					"When the host reports that step complete, check korral_get_order_status with the approval id. You cannot approve it yourself."
				return nil
			default:
				s.log.InfoContext(ctx, "approval.elicited", "call_id", c.id, "approval_id", e.ApprovalID, "action", res.Action)
			}
		}
	}
	if fresh {
		out.NextStep = "Nothing was sent. Tell the buyer the order awaits a person's approval: a named approver logs in at " + link +
			" and approves or rejects it. Follow it with korral_get_order_status using the approval id. You cannot approve it yourself."
	} else {
		out.NextStep += " A named approver decides it at " + link + " (log-in required)."
	}
	return nil
}

// canElicitURL reports whether the client declares URL elicitation.
func canElicitURL(caps *mcp.ClientCapabilities) bool {
	return caps != nil && caps.Elicitation != nil && caps.Elicitation.URL != nil
}

// approvalMessage is what the host shows beside the link. Texts from
// StoreLink are escaped and bounded.
func approvalMessage(r *replenish.Outcome) string {
	e := r.Entry
	return fmt.Sprintf("An order of %d unit(s) of %s (SKU %s) for store %s awaits a named approver. Open the approvals console to approve or reject it (log-in required). Nothing is sent until then.",
		e.QuantityUnits, textsafe.Bound(r.ProductName, maxShown), e.SKU, e.StoreID)
}

// approvalSettled reports whether a staged order needs no more waiting:
// decided and any send finished, or lapsed.
func approvalSettled(e state.Entry, now time.Time) bool {
	switch e.State {
	case state.StatePendingApproval:
		return !now.Before(e.ApprovalExpiresAt)
	case state.StateSending:
		return false
	default:
		return true
	}
}
