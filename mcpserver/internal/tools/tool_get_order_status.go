package tools

import (
	"context"
	"fmt"
	"time"

	"regexp"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

type orderStatusIn struct {
	OrderID string `json:"order_id" jsonschema:"order id, idempotency key or approval id"`
	StoreID string `json:"store_id,omitempty" jsonschema:"optional for a known order or one store"`
}

type orderStatusOut struct {
	OrderID         string      `json:"order_id"`
	StoreID         string      `json:"store_id"`
	Status          orderStatus `json:"status"`
	IsOpen          bool        `json:"is_open"`
	SKU             string      `json:"sku"`
	ProductName     string      `json:"product_name,omitempty"`
	QuantityUnits   int64       `json:"quantity_units"`
	SubmittedAt     string      `json:"submitted_at"`
	ExpectedArrival string      `json:"expected_arrival,omitempty"`
	Ledger          *ledgerView `json:"ledger,omitempty"`
	Unknown         []string    `json:"unknown,omitempty"`
}

// ledgerView is this deployment's own record of an order request.
type ledgerView struct {
	IdempotencyKey string `json:"idempotency_key"`
	State          string `json:"state"`
	ApprovalID     string `json:"approval_id,omitempty"`
	RequestedBy    string `json:"requested_by,omitempty"`
	DecidedBy      string `json:"decided_by,omitempty"`
	RecordedAt     string `json:"recorded_at"`
	Note           string `json:"note,omitempty"`
}

func addGetOrderStatus(ms *mcp.Server, s *server) {
	register(ms, s, toolSpec[orderStatusIn, orderStatusOut]{
		tool: &mcp.Tool{
			Name:        "korral_get_order_status",
			Title:       "Get replenishment order status",
			Description: orderStatusDescription(s.opts.Writes != nil),
			Annotations: readAnnotations(),
		},
		shape: func(p map[string]*jsonschema.Schema) {
			shapeStoreID(p)
			p["order_id"].Pattern = orderRefPattern
			if s.opts.Writes == nil {
				// Read-only: no ledger, so only StoreLink's order ids.
				p["order_id"].Pattern = storeLinkOrderIDPattern
				p["order_id"].Description = "StoreLink order id"
			}
		},
		outShape: func(out *jsonschema.Schema) {
			if s.opts.Writes == nil {
				// Read-only: only StoreLink's statuses.
				setEnum(out, domain.OrderStatuses(), "data", "status")
				delete(property(out, "data").Properties, "ledger")
				return
			}
			setEnum(out, ledgerStates, "data", "ledger", "state")
		},
		handle: s.getOrderStatus,
	})
}

// orderStatusDescription mentions write-path ids only when the write tool
// exists.
func orderStatusDescription(writes bool) string {
	if !writes {
		return "Status of a replenishment order by its StoreLink order id, with SKU, quantity and expected arrival."
	}
	return "Status of a replenishment order (by order id, idempotency key or approval id) with SKU, quantity and expected arrival. " +
		"Check it before resubmitting after WRITE_OUTCOME_UNKNOWN."
}

// order_id may be an idempotency key, an approval id "apr-..." or an order
// id; they overlap in shape, so the ledger is asked first when there is one.
// Anything else is sent to StoreLink only when plausible
// (storeLinkOrderIDPattern, which is wider than our OrderID and never "."
// or ".."); an implausible id is NOT_FOUND if it has an idempotency key's
// shape and writes are on, else INVALID_ARGUMENT.
const (
	storeLinkOrderIDPattern = "^[A-Za-z0-9][A-Za-z0-9._~-]{0,63}$"
	// orderRefPattern admits all three kinds.
	orderRefPattern = "^[A-Za-z0-9][A-Za-z0-9._:~-]{0,127}$"
	// storeLinkOrderIDShape is the plausible shape in words, for refusals.
	storeLinkOrderIDShape = "1 to 64 characters of letters, digits, '.', '_', '~' and '-', starting with a letter or digit"
)

func (s *server) getOrderStatus(ctx context.Context, c *call, in orderStatusIn) (*orderStatusOut, error) {
	e, found, err := s.ledgerOrder(ctx, c, in)
	if err != nil {
		return nil, err
	}
	asked := in.StoreID
	if asked == "" && found {
		// The ledger knows the order's store (within the caller's scope).
		asked = e.StoreID
	}
	storeID, err := s.resolveStore(c, asked)
	if err != nil {
		return nil, err
	}
	orderID := in.OrderID
	var view *ledgerView
	if s.opts.Writes != nil {
		if !found && in.StoreID != "" {
			e, found, err = s.findLedgerEntry(ctx, c, in.OrderID)
			if err != nil {
				return nil, err
			}
		}
		if found {
			if e.StoreID != storeID {
				// Only a store of the caller's keyring is named (findLedgerEntry).
				return nil, apperr.New(apperr.NotFound, fmt.Sprintf("%s belongs to store %s, not %s", in.OrderID, e.StoreID, storeID), fmt.Sprintf("Pass store_id %s.", e.StoreID))
			}
			e = e.AsOf(s.opts.Now())
			view = describeEntry(e)
			c.sku = e.SKU
			if e.State != state.StateRaised {
				return ledgerOnly(c, e, view), nil
			}
			if !s.sameUpstream(e) {
				view.Note = fmt.Sprintf("Raised as order %s at another StoreLink (%s) than the one this server reaches, so its delivery status cannot be read here; treat it as open.", e.OrderID, e.UpstreamID)
				return ledgerOnly(c, e, view), nil
			}
			o, err := s.opts.Upstream.Order(ctx, storeID, e.OrderID)
			if err != nil {
				return nil, err
			}
			if !sameOrder(e, o) {
				// Never pass another order off as this one.
				view.Note = fmt.Sprintf("StoreLink's order %s is not the order this deployment raised (it is for another store, SKU or quantity), so it is not shown; ask Korral IT to check.", e.OrderID)
				return ledgerOnly(c, e, view), nil
			}
			return s.orderOut(ctx, c, storeID, o, view), nil
		}
	}
	// Not in the ledger: try it as StoreLink's order id.
	if !orderIDRE().MatchString(orderID) {
		if s.opts.Writes == nil {
			return nil, apperr.New(apperr.InvalidArgument,
				fmt.Sprintf("order_id %q cannot be a StoreLink order id (%s)", in.OrderID, storeLinkOrderIDShape),
				"Pass the order id exactly as StoreLink gave it.")
		}
		if idempotencyKeyRE().MatchString(orderID) {
			// An idempotency key the ledger does not hold for the caller's stores;
			// StoreLink knows no keys, so it is not asked.
			return nil, apperr.New(apperr.NotFound,
				fmt.Sprintf("this deployment holds no order request with idempotency key %q, and it cannot be a StoreLink order id (%s)", in.OrderID, storeLinkOrderIDShape),
				"Check the idempotency_key korral_raise_replenishment_order returned, and the store it was raised at.")
		}
		return nil, apperr.New(apperr.InvalidArgument,
			fmt.Sprintf("order_id %q is neither an idempotency key nor a StoreLink order id (%s)", in.OrderID, storeLinkOrderIDShape),
			"Pass the order_id, idempotency_key or approval_id exactly as korral_raise_replenishment_order or StoreLink gave it.")
	}
	o, err := s.opts.Upstream.Order(ctx, storeID, orderID)
	if err != nil {
		if apperr.CodeOf(err) == apperr.NotFound {
			return nil, s.noSuchOrder(err, orderID, storeID)
		}
		return nil, err
	}
	return s.orderOut(ctx, c, storeID, o, view), nil
}

// ledgerOrder looks an order up in the ledger before the store is resolved,
// when the call names no store: the entry then says which store it is.
// With a store_id the scope check comes first, as for every tool.
func (s *server) ledgerOrder(ctx context.Context, c *call, in orderStatusIn) (state.Entry, bool, error) {
	if s.opts.Writes == nil || in.StoreID != "" {
		return state.Entry{}, false, nil
	}
	return s.findLedgerEntry(ctx, c, in.OrderID)
}

// noSuchOrder is StoreLink's 404 for an order id: StoreLink said no, which
// differs from "unknown here".
func (s *server) noSuchOrder(err error, orderID, storeID string) error {
	fix := "Check the order id and the store it was raised at; do not guess another id."
	if s.opts.Writes != nil {
		fix = "Check the id (an order_id, idempotency_key or approval_id as korral_raise_replenishment_order gave it) and the store it was raised at; do not guess another id."
	}
	return apperr.Wrap(apperr.NotFound, err, fmt.Sprintf("StoreLink has no order %q at store %s", orderID, storeID), fix)
}

// orderOut is StoreLink's view of an order, with the ledger's when known.
func (s *server) orderOut(ctx context.Context, c *call, storeID string, o domain.Order, view *ledgerView) *orderStatusOut {
	c.sku = o.SKU
	out := &orderStatusOut{
		OrderID: o.ID, StoreID: o.StoreID, Status: storeLinkStatus(o.Status), IsOpen: o.Status.Open(),
		SKU: o.SKU, QuantityUnits: o.QuantityUnits,
		SubmittedAt: knownTime(o.SubmittedAt), ExpectedArrival: knownTime(o.ExpectedArrival),
		Ledger: view, Unknown: o.Unknown.Caveats(),
	}
	// The name helps a human vet the order; without it the status still stands.
	if sku, err := s.opts.Upstream.SKU(ctx, storeID, o.SKU); err == nil {
		out.ProductName = untrusted(sku.Name)
	}
	c.summary = fmt.Sprintf("Order %s at store %s for %d unit(s) of SKU %s is %s.", o.ID, storeID, o.QuantityUnits, o.SKU, o.Status)
	return out
}

// ledgerOnly answers from the ledger alone, for orders not known to be at
// the StoreLink this server reaches.
func ledgerOnly(c *call, e state.Entry, view *ledgerView) *orderStatusOut {
	st := ledgerStatus(e.State)
	c.summary = fmt.Sprintf("Order request %s for store %s (%d unit(s) of SKU %s) is %s in this deployment's ledger.", e.IdempotencyKey, e.StoreID, e.QuantityUnits, e.SKU, e.State)
	return &orderStatusOut{OrderID: e.OrderID, StoreID: e.StoreID, Status: st, IsOpen: st.open(),
		SKU: e.SKU, QuantityUnits: e.QuantityUnits, SubmittedAt: e.CreatedAt.Format(time.RFC3339), Ledger: view}
}

// sameUpstream reports whether the entry was recorded for the StoreLink this
// server reaches (replenish.Workflow.SameUpstream).
func (s *server) sameUpstream(e state.Entry) bool { return s.workflow().SameUpstream(e) }

// sameOrder reports whether StoreLink's order is the one the entry raised.
func sameOrder(e state.Entry, o domain.Order) bool { return replenish.SameOrder(e, o) }

// orderIDRE is compiled on first use: its bounded repetition is costly to
// build on every start.
var orderIDRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(storeLinkOrderIDPattern) })

var idempotencyKeyRE = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(idempotencyKeyPattern) })

// findLedgerEntry finds the entry an id names. A ledger may be shared, so
// an entry of a store outside the caller's scope is not found, revealing
// nothing about it.
func (s *server) findLedgerEntry(ctx context.Context, c *call, ref string) (state.Entry, bool, error) {
	l := s.opts.Writes.Ledger
	kr := s.callStores(c)
	for _, find := range []func(context.Context, string) (state.Entry, bool, error){l.Get, l.ByApprovalID, l.ByOrderID} {
		e, found, err := find(ctx, ref)
		if err != nil {
			return state.Entry{}, false, err
		}
		if !found || kr == nil {
			continue
		}
		if _, inScope := kr.Key(e.StoreID); inScope {
			return e, true, nil
		}
	}
	return state.Entry{}, false, nil
}

func describeEntry(e state.Entry) *ledgerView {
	v := &ledgerView{IdempotencyKey: e.IdempotencyKey, State: string(e.State), ApprovalID: e.ApprovalID,
		RequestedBy: e.RequestedBy, DecidedBy: e.DecidedBy, RecordedAt: e.CreatedAt.Format(time.RFC3339)}
	switch e.State {
	case state.StatePendingApproval:
		v.Note = "Waiting for a person to approve it; nothing has been sent to StoreLink. It lapses at " + e.ApprovalExpiresAt.Format(time.RFC3339) + "."
	case state.StateSending, state.StateUnknown:
		// An entry left sending has no error of its own; it is an unknown
		// outcome to the agent.
		code := e.ErrorCode
		if code == "" {
			code = string(apperr.WriteOutcomeUnknown)
		}
		v.Note = "The order was sent but its outcome is unknown (" + code + "). StoreLink cannot be searched by this key: ask Korral IT to check StoreLink and resolve it (storelink-mcp approvals resolve) before ordering again."
	case state.StateFailed:
		v.Note = "StoreLink refused it: " + e.ErrorMessage
	case state.StateRetryable:
		v.Note = "StoreLink did not take it (" + e.ErrorCode + "); nothing was raised. The same request may be confirmed again."
	case state.StateRejected:
		v.Note = "A person rejected it; nothing was sent."
	case state.StateExpired:
		v.Note = "Nobody approved it in time; nothing was sent."
	}
	return v
}
