package tools

import (
	"context"
	"fmt"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/notify"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

const maxReasonChars = 500

type raiseIn struct {
	SKU            string `json:"sku" jsonschema:"SKU code to order"`
	QuantityUnits  int64  `json:"quantity_units" jsonschema:"units to order (not cases)"`
	Reason         string `json:"reason" jsonschema:"the buyer's justification, kept with the order"`
	StoreID        string `json:"store_id,omitempty" jsonschema:"optional if one store is authorized"`
	Confirm        bool   `json:"confirm,omitempty" jsonschema:"true sends; false previews only"`
	IdempotencyKey string `json:"idempotency_key,omitempty" jsonschema:"from the preview; one key never raises two orders"`
}

// sentRequest is the exact request the server sends (or would send).
type sentRequest struct {
	Method string              `json:"method"`
	Path   string              `json:"path"`
	Body   domain.OrderRequest `json:"body"`
}

type existingOrder struct {
	Reference     string      `json:"reference" jsonschema:"order id, else idempotency key"`
	State         orderStatus `json:"state"`
	QuantityUnits int64       `json:"quantity_units"`
	CreatedAt     string      `json:"created_at"`
}

type quantityCheck struct {
	Verdict verdict  `json:"verdict"`
	Reasons []string `json:"reasons"`
}

type raiseOut struct {
	Mode             raiseMode                `json:"mode"`
	Replayed         bool                     `json:"replayed"`
	IdempotencyKey   string                   `json:"idempotency_key"`
	StoreID          string                   `json:"store_id"`
	SKU              string                   `json:"sku"`
	ProductName      string                   `json:"product_name,omitempty"`
	Request          sentRequest              `json:"request"`
	Justification    *replenish.Justification `json:"justification,omitempty"`
	OpenOrders       []existingOrder          `json:"open_orders_same_sku"`
	DuplicateWarning string                   `json:"duplicate_warning,omitempty"`
	QuantityCheck    *quantityCheck           `json:"quantity_check,omitempty"`
	WritesEnabled    bool                     `json:"writes_enabled"`
	ApprovalRequired bool                     `json:"approval_required"`
	MaxOrderUnits    int64                    `json:"max_order_units"`
	OrderID          string                   `json:"order_id,omitempty"`
	OrderStatus      orderStatus              `json:"order_status,omitempty"`
	ExpectedArrival  string                   `json:"expected_arrival,omitempty"`
	ApprovalID       string                   `json:"approval_id,omitempty"`
	ApprovalExpires  string                   `json:"approval_expires_at,omitempty"`
	ApprovalURL      string                   `json:"approval_url,omitempty" jsonschema:"the order's page in the approvals console, where a named approver logs in and decides it"`
	NextStep         string                   `json:"next_step"`
}

func addRaiseReplenishmentOrder(ms *mcp.Server, s *server) {
	register(ms, s, toolSpec[raiseIn, raiseOut]{
		tool: &mcp.Tool{
			Name:        "korral_raise_replenishment_order",
			Title:       "Raise replenishment order",
			Description: raiseDescription(*s.opts.Writes),
			Annotations: &mcp.ToolAnnotations{
				ReadOnlyHint:    false,
				DestructiveHint: ptr(false), // it adds an order; it never changes or deletes one
				IdempotentHint:  false,      // two calls with different keys raise two orders
				OpenWorldHint:   ptr(true),
			},
		},
		shape: func(p map[string]*jsonschema.Schema) {
			shapeSKU(p)
			shapeStoreID(p)
			// The schema's maximum is the ceiling itself, validated as shown, so
			// a quantity above it is refused in words that name the ceiling.
			ceiling := min(s.opts.Writes.MaxOrderUnits, maxPreviewUnits)
			p["quantity_units"].Minimum = ptr(1.0)
			p["quantity_units"].Maximum = ptr(float64(ceiling))
			p["quantity_units"].Description = "units to order (not cases), at most the ceiling of one order"
			p["reason"].MinLength = ptr(1)
			p["reason"].MaxLength = ptr(maxReasonChars)
			p["reason"].Pattern = reasonPattern
			p["confirm"].Default = []byte("false")
			p["idempotency_key"].Pattern = idempotencyKeyPattern
		},
		outShape: func(out *jsonschema.Schema) {
			setEnum(out, domain.OrderStatuses(), "data", "order_status")
			// Only open orders are listed.
			setEnum(out, openOrderStatuses(), "data", "open_orders_same_sku", "state")
		},
		handle: s.raiseReplenishmentOrder,
	})
}

// raiseDescription says what confirm does on this deployment; only
// approval mode puts a person in the loop.
func raiseDescription(w WriteOptions) string {
	d := "Raise a replenishment order. Without confirm it only previews, sending nothing: exact request, stock evidence, days of cover after delivery, open orders, quantity check. " +
		"confirm:true is your judgement, not a person's approval; pass the preview's idempotency_key. "
	switch {
	case !w.AllowWrites:
		return d + "Writes are off here: confirm is refused; show the buyer the preview."
	case w.RequireApproval:
		return d + "Here confirm only stages the order; a person releases it out of band, not you."
	case w.HostConsent != nil:
		return d + "Here confirm asks the user, via the host, to type the quantity before sending: a person saw it, not who."
	default:
		return d + "Here confirm sends at once, within the unit ceiling."
	}
}

// maxPreviewUnits bounds quantity_units when MAX_ORDER_UNITS is set higher.
const maxPreviewUnits = 100000

const idempotencyKeyPattern = "^[A-Za-z0-9][A-Za-z0-9._:-]{7,127}$"

// reasonPattern admits a reason that is not only blank space.
const reasonPattern = `\S`

func (s *server) raiseReplenishmentOrder(ctx context.Context, c *call, in raiseIn) (*raiseOut, error) {
	c.sku = in.SKU
	storeID, err := s.resolveStore(c, in.StoreID)
	if err != nil {
		return nil, err
	}
	o := replenish.Order{StoreID: storeID, SKU: in.SKU, QuantityUnits: in.QuantityUnits, Reason: in.Reason,
		IdempotencyKey: in.IdempotencyKey, RequestedBy: c.requester()}
	flow := s.workflow()
	var r *replenish.Outcome
	if in.Confirm {
		if flow.Gate.HostConsent {
			o.Consent = hostConsent{s: s, c: c}
			c.summary = fmt.Sprintf("Asked the person at the host to confirm an order of %d unit(s) of SKU %s for store %s; nothing was sent yet.", in.QuantityUnits, in.SKU, storeID)
		}
		r, err = flow.Confirm(ctx, o)
	} else {
		r, err = flow.Preview(ctx, o)
	}
	if err != nil {
		return nil, err
	}
	if r.Mode == replenish.ModePendingApproval {
		s.notifyStaged(r, c.requester())
	}
	out := s.raiseAnswer(c, r, in.Confirm)
	if err := s.leadToApprover(ctx, c, r, out); err != nil {
		return nil, err
	}
	return out, nil
}

// notifyStaged tells the approvers' webhook of a newly staged order,
// without waiting; a replayed staging is not told again.
func (s *server) notifyStaged(r *replenish.Outcome, requestedBy string) {
	w := s.opts.Writes
	if w == nil || w.Notifier == nil {
		return
	}
	e := r.Entry
	w.Notifier.Staged(notify.Notice{ApprovalID: e.ApprovalID, StoreID: e.StoreID, ProductName: r.ProductName, SKU: e.SKU,
		QuantityUnits: int(e.QuantityUnits), ExpiresAt: e.ApprovalExpiresAt, RequestedBy: requestedBy})
}

// raiseAnswer is the tool's answer for what the workflow did: facts, next
// step and audit summary.
func (s *server) raiseAnswer(c *call, r *replenish.Outcome, confirm bool) *raiseOut {
	w := s.opts.Writes
	req, storeID := r.Request, r.StoreID
	out := &raiseOut{
		Mode: raiseMode(r.Mode), IdempotencyKey: r.IdempotencyKey, StoreID: storeID, SKU: r.SKU,
		Request:          sentRequest{Method: "POST", Path: "/v1/stores/" + storeID + "/replenishment", Body: req},
		OpenOrders:       []existingOrder{},
		WritesEnabled:    w.AllowWrites,
		ApprovalRequired: w.RequireApproval,
		MaxOrderUnits:    w.MaxOrderUnits,
	}
	e := r.Entry
	switch r.Mode {
	case replenish.ModePreview:
		out.ProductName = untrusted(r.ProductName)
		out.Justification = r.Justification
		for _, o := range r.OpenOrders {
			st := ledgerStatus(o.State)
			if o.Status != "" {
				st = storeLinkStatus(o.Status)
			}
			out.OpenOrders = append(out.OpenOrders, existingOrder{Reference: o.Reference, State: st, QuantityUnits: o.QuantityUnits, CreatedAt: o.CreatedAt.Format(time.RFC3339)})
		}
		if len(out.OpenOrders) > 0 {
			out.DuplicateWarning = fmt.Sprintf("%d order(s) of this SKU for this store are already open or pending; check them before ordering more", len(out.OpenOrders))
		}
		out.QuantityCheck = &quantityCheck{Verdict: verdict(r.QuantityCheck.Verdict), Reasons: r.QuantityCheck.Reasons}
		switch {
		case out.QuantityCheck.Verdict == verdictRefuse:
			out.NextStep = "Do not confirm: the quantity would be refused. Correct it and preview again."
		case !w.AllowWrites:
			out.NextStep = "Writes are disabled here: show this preview to the buyer; confirm:true would be refused."
		case w.RequireApproval:
			out.NextStep = "If the buyer agrees, call again with confirm:true and this idempotency_key; the order is then staged until a person approves it."
		case w.HostConsent != nil:
			out.NextStep = "If the buyer agrees, call again with confirm:true and this idempotency_key; the host then asks the buyer to type the quantity before it is sent."
		default:
			out.NextStep = "If the buyer agrees, call again with confirm:true and this idempotency_key."
		}
		if r.RefusedBefore {
			out.NextStep = fmt.Sprintf("StoreLink refused this exact request earlier (%s); confirming it again would be refused. Correct the request and preview again.", e.ErrorMessage)
		}
		c.summary = fmt.Sprintf("Previewed an order of %d unit(s) of %s (SKU %s) for store %s; nothing was sent.", req.QuantityUnits, plain(out.ProductName), req.SKU, storeID)
	case replenish.ModePendingApproval:
		out.ProductName = untrusted(r.ProductName)
		out.ApprovalID = e.ApprovalID
		out.ApprovalExpires = e.ApprovalExpiresAt.Format(time.RFC3339)
		out.NextStep = "Nothing was sent. Tell the buyer the order awaits a person's approval (approval id above); follow it with korral_get_order_status using the approval id. You cannot approve it yourself."
		c.summary = fmt.Sprintf("Staged an order of %d unit(s) of %s (SKU %s) for store %s for human approval (%s); nothing was sent.", req.QuantityUnits, r.ProductName, req.SKU, storeID, e.ApprovalID)
	case replenish.ModeRaised:
		o := r.Order
		out.ProductName = untrusted(r.ProductName)
		out.OrderID, out.OrderStatus, out.ExpectedArrival = o.ID, storeLinkStatus(o.Status), knownTime(o.ExpectedArrival)
		out.NextStep = "Tell the buyer the order id; follow it with korral_get_order_status."
		c.summary = fmt.Sprintf("Raised order %s: %d unit(s) of %s (SKU %s) for store %s, reason: %s.", o.ID, req.QuantityUnits, r.ProductName, req.SKU, storeID, req.Reason)
		if r.HostConfirmed {
			c.summary += " The person at the host confirmed it by typing the quantity."
		}
		if !r.Sent.Recorded {
			// StoreLink holds the order whatever the ledger recorded; next_step says
			// what becomes of the record (no extra field: ADR 0012).
			out.NextStep, c.summary = unrecordedNextStep(r.Sent, e.IdempotencyKey), c.summary+" "+unrecordedSummary(r.Sent)
		}
	case replenish.ModeReplay:
		out.Replayed = true
		switch e.State {
		case state.StateRaised:
			out.OrderID = e.OrderID
			if o := r.Order; o != nil {
				out.OrderStatus, out.ExpectedArrival = storeLinkStatus(o.Status), knownTime(o.ExpectedArrival)
			}
			out.NextStep = "This order was already raised; nothing was sent now. Follow it with korral_get_order_status."
			c.summary = fmt.Sprintf("Replayed idempotency key %s: order %s was already raised; nothing was sent.", e.IdempotencyKey, e.OrderID)
		case state.StatePendingApproval:
			out.ApprovalID = e.ApprovalID
			out.ApprovalExpires = e.ApprovalExpiresAt.Format(time.RFC3339)
			out.NextStep = "This order already awaits a person's approval; nothing was sent now."
			c.summary = fmt.Sprintf("Replayed idempotency key %s: the order still awaits approval %s.", e.IdempotencyKey, e.ApprovalID)
		}
		if !confirm {
			out.NextStep = "Already handled: " + out.NextStep
		}
	}
	return out
}

// knownTime is an RFC 3339 time from StoreLink, or "" when unknown
// (ADR 0030), never the zero time.
func knownTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format(time.RFC3339)
}

// unrecordedNextStep tells the agent an order was raised though the ledger
// has not recorded it, and what becomes of the record.
func unrecordedNextStep(sent replenish.Sent, key string) string {
	raised := fmt.Sprintf("StoreLink raised order %s: tell the buyer the order id. Do not raise it again. ", sent.Order.ID)
	switch {
	case sent.Conflict != "":
		return raised + fmt.Sprintf("This server's ledger holds another outcome for idempotency key %s, which was not overwritten: ask Korral IT to check it (storelink-mcp doctor names the conflict).", key)
	case sent.Journaled:
		return raised + "This server's ledger could not record it yet (its state database is unreachable or busy); the outcome journal keeps it and records it by itself once the database is back. Until then korral_get_order_status may not find it."
	default:
		return raised + fmt.Sprintf("This server's ledger could not record it and its outcome journal could not keep it: ask Korral IT to record it with storelink-mcp approvals resolve %s --raised %s.", key, sent.Order.ID)
	}
}

func unrecordedSummary(sent replenish.Sent) string {
	switch {
	case sent.Conflict != "":
		return "The ledger holds another outcome for it, left as it was: " + sent.Conflict + "."
	case sent.Journaled:
		return "The ledger could not record it yet; the outcome journal holds it."
	default:
		return "Neither the ledger nor the outcome journal could record it."
	}
}

// requester names who asked, for the ledger and the audit trail.
func (c *call) requester() string {
	who := c.client
	if who == "" {
		who = "unknown-client"
	}
	if c.session != "" {
		who += "/" + c.session
	}
	return who
}
