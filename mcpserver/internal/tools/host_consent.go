package tools

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/consent"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Host consent (WRITE_APPROVAL=host, ADR 0007): before a confirmed order is
// sent, the person at the host confirms it by typing its quantity. On
// 2025-11-25 sessions this is a form elicitation within the call; on
// 2026-07-28 the call answers input_required with a sealed requestState and
// the client's retry carries the answer. Anything but an exact confirmation
// sends nothing.

// consentInputID names the one question of an input_required answer.
const consentInputID = "confirm_order"

// consentField is the form field the person types the quantity into.
const consentField = "quantity_units"

// multiRoundTripVersion is the first revision that uses input_required.
const multiRoundTripVersion = "2026-07-28"

// inputRequired is the handler's input_required answer: not a failure, so
// register turns it into the result the client retries from.
type inputRequired struct {
	requests mcp.InputRequestMap
	state    string
}

func (*inputRequired) Error() string { return "the host must ask its user before the order is sent" }

// hostConsent is the MCP tool's replenish.Consent for one tool call.
type hostConsent struct {
	s *server
	c *call
}

// Ask implements replenish.Consent.
func (h hostConsent) Ask(ctx context.Context, sum replenish.Summary) error {
	w, req := h.s.opts.Writes, h.c.req
	if w == nil || w.HostConsent == nil || w.ConsentNonces == nil || req == nil {
		return fmt.Errorf("host consent is on without its sealer or nonce store")
	}
	if !canElicitForm(req.ClientCapabilities()) {
		return apperr.New(apperr.HostConsentUnavailable,
			"this host cannot ask its user to confirm the order (it declares no form elicitation), and this deployment sends orders only after that; nothing was sent", "")
	}
	form := &mcp.ElicitParams{Mode: "form", Message: consentMessage(sum), RequestedSchema: consentSchema(sum.QuantityUnits)}
	if req.ProtocolVersion() < multiRoundTripVersion {
		res, err := req.Session.Elicit(ctx, form)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return apperr.Wrap(apperr.HostConsentUnavailable, err, "the host did not ask its user to confirm the order; nothing was sent", "")
		}
		return judgeConsent(res, sum)
	}

	// The state is bound to the caller (token label and client name), not
	// the session: stateless requests have none, and any replica must open it.
	fp := consent.FingerprintOf(consent.Order{StoreID: sum.StoreID, SKU: sum.SKU, QuantityUnits: sum.QuantityUnits,
		RequestHash: sum.RequestHash, IdempotencyKey: sum.IdempotencyKey, RequestedBy: h.c.client})
	if req.Params.RequestState == "" {
		token, _, err := w.HostConsent.Seal(fp)
		if err != nil {
			return err
		}
		return &inputRequired{requests: mcp.InputRequestMap{consentInputID: form}, state: token}
	}
	st, err := w.HostConsent.Open(req.Params.RequestState, fp)
	switch {
	case errors.Is(err, consent.ErrExpired):
		return apperr.New(apperr.HostConsentStateExpired, fmt.Sprintf("the confirmation question lapsed (it is valid for %s); nothing was sent", consent.StateTTL), "")
	case errors.Is(err, consent.ErrMismatch):
		return apperr.New(apperr.HostConsentStateMismatch, "the requestState was issued for another order (store, SKU, quantity, reason or idempotency key differ); nothing was sent", "")
	case err != nil:
		return apperr.New(apperr.HostConsentStateInvalid, "the requestState is not one this server issued, or it was altered; nothing was sent", "")
	}
	// The nonce is spent before the answer is read, so each state is
	// answered once across replicas.
	fresh, err := w.ConsentNonces.UseConsentNonce(ctx, st.Nonce, st.ExpiresAt, h.s.opts.Now())
	if err != nil {
		return err
	}
	if !fresh {
		return apperr.New(apperr.HostConsentStateReplayed, "this requestState was answered once already; nothing was sent", "")
	}
	res, _ := req.Params.InputResponses[consentInputID].(*mcp.ElicitResult)
	if res == nil {
		return apperr.New(apperr.HostConsentCancelled, "the retry carried no answer to the confirmation question; nothing was sent", "")
	}
	return judgeConsent(res, sum)
}

// canElicitForm reports whether the client declares form elicitation (a
// capability naming no mode means form).
func canElicitForm(caps *mcp.ClientCapabilities) bool {
	if caps == nil || caps.Elicitation == nil {
		return false
	}
	e := caps.Elicitation
	return e.Form != nil || e.URL == nil
}

// judgeConsent accepts only a confirmation whose typed quantity is the
// order's, as a whole number.
func judgeConsent(res *mcp.ElicitResult, sum replenish.Summary) error {
	switch res.Action {
	case "accept":
	case "decline":
		return apperr.New(apperr.HostConsentDeclined, "the person at the host declined the order; nothing was sent", "")
	default:
		return apperr.New(apperr.HostConsentCancelled, "the person at the host dismissed the confirmation without answering; nothing was sent", "")
	}
	typed, ok := res.Content[consentField].(float64)
	if !ok || typed != math.Trunc(typed) || int64(typed) != sum.QuantityUnits {
		return apperr.New(apperr.HostConsentQuantityMismatch,
			fmt.Sprintf("the quantity typed at the host is not the order's %d units; nothing was sent", sum.QuantityUnits), "")
	}
	return nil
}

// consentSchema is the form: one quantity field with no default, so the
// person must type it.
func consentSchema(units int64) map[string]any {
	return map[string]any{
		"type": "object",
		"properties": map[string]any{
			consentField: map[string]any{
				"type": "integer", "minimum": 1, "title": "Quantity in units",
				"description": fmt.Sprintf("Type %d to send this order.", units),
			},
		},
		"required": []string{consentField},
	}
}

// maxShown bounds, in runes, each StoreLink or agent text in the question.
const maxShown = 200

// consentMessage is the order as it would be sent. StoreLink and agent
// texts are escaped so none can pose as a summary line.
func consentMessage(s replenish.Summary) string {
	store := s.StoreID
	if s.StoreName != "" {
		store += " " + textsafe.Bound(s.StoreName, maxShown)
	}
	cover := "unknown (no sell rate)"
	if c := s.Cover; c != nil {
		cover = fmt.Sprintf("%.1f to %.1f days", c.Low, c.High)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Send this replenishment order to StoreLink?\n")
	fmt.Fprintf(&b, "Store: %s\n", store)
	fmt.Fprintf(&b, "Product: %s (SKU %s)\n", textsafe.Bound(s.ProductName, maxShown), s.SKU)
	fmt.Fprintf(&b, "Quantity: %d units (%s)\n", s.QuantityUnits, cases(s.QuantityUnits, s.CasePack))
	fmt.Fprintf(&b, "Days of cover after delivery: %s\n", cover)
	fmt.Fprintf(&b, "Reason: %s\n", textsafe.Bound(s.Reason, maxShown))
	fmt.Fprintf(&b, "To send it, type the quantity in units (%d). Decline to send nothing.", s.QuantityUnits)
	return b.String()
}

// cases says a quantity in cases of the SKU's case pack.
func cases(units, pack int64) string {
	if pack <= 1 {
		return "sold by the unit"
	}
	whole, rest := units/pack, units%pack
	s := fmt.Sprintf("%d case(s) of %d", whole, pack)
	if rest != 0 {
		s += fmt.Sprintf(" and %d unit(s)", rest)
	}
	return s
}
