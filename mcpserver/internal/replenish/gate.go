package replenish

import (
	"context"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// Gate is the deployment's write settings and the check every send goes
// through, confirm and approval alike: writes allowed, quantity within the
// ceiling and the supplier's minimum, and the store's key in the keyring.
type Gate struct {
	// AllowWrites must be true for anything to be sent.
	AllowWrites bool
	// MaxOrderUnits is the hard ceiling of one order.
	MaxOrderUnits int64
	// RequireApproval stages confirmed orders for a person.
	RequireApproval bool
	// ApprovalTTL is how long a staged order waits before it lapses.
	ApprovalTTL time.Duration
	// HostConsent asks the person at the host before each send.
	HostConsent bool
	// Holds reports whether the keyring holds storeID's key; nil holds none.
	Holds func(storeID string) bool
}

func (g Gate) holds(storeID string) bool { return g.Holds != nil && g.Holds(storeID) }

// Local is the part of the gate that needs no read: writes allowed and the
// ceiling.
func (g Gate) Local(qty int64) error {
	if !g.AllowWrites {
		return apperr.New(apperr.WritesDisabled,
			"this deployment does not allow writes (ALLOW_WRITES is not true); nothing was sent",
			"Do not retry. Show the buyer the preview (call without confirm) so a person can raise the order another way.")
	}
	if r := (quantityLimits{ceiling: g.MaxOrderUnits}).refusals(qty); len(r) > 0 {
		return apperr.New(r[0].code, r[0].message, r[0].remediation)
	}
	return nil
}

// Check is the whole gate for qty units of skuCode at storeID: Local, the
// keyring and the supplier's minimum. It returns WRITES_DISABLED,
// ORDER_LIMIT_EXCEEDED, STORE_NOT_AUTHORIZED, ORDER_QUANTITY_REFUSED, a
// read's error, or nil.
func (g Gate) Check(ctx context.Context, up Upstream, storeID, skuCode string, qty int64) error {
	if err := g.Local(qty); err != nil {
		return err
	}
	if !g.holds(storeID) {
		return apperr.New(apperr.StoreNotAuthorized,
			fmt.Sprintf("this deployment's keyring holds no key for store %s; nothing was sent", storeID),
			"Add the store's key to the keyring, or leave the order to a deployment that holds it.")
	}
	sku, err := up.SKU(ctx, storeID, skuCode)
	if err != nil {
		return err
	}
	sup, err := up.Supplier(ctx, storeID, sku.SupplierID)
	if err != nil {
		return err
	}
	if r := (quantityLimits{ceiling: g.MaxOrderUnits, minimum: sup.MinimumOrderUnit, casePack: sku.CasePack}).refusals(qty); len(r) > 0 {
		return apperr.New(r[0].code, r[0].message, r[0].remediation)
	}
	return nil
}

// A quantity outside these bounds is refused before the ledger holds
// anything, so it never spends an idempotency key (ADR 0006).

// quantityLimits are one order's bounds: the ceiling, the supplier's
// minimum (0 for none) and the case pack.
type quantityLimits struct {
	ceiling, minimum, casePack int64
}

// quantityRefusal is one bound an order breaks.
type quantityRefusal struct {
	code apperr.Code
	// reason is the preview's sentence for the buyer.
	reason string
	// message and remediation are the confirm's error.
	message, remediation string
}

// refusals lists the bounds qty breaks; none means it may be sent.
func (l quantityLimits) refusals(qty int64) []quantityRefusal {
	var out []quantityRefusal
	if qty > l.ceiling {
		out = append(out, quantityRefusal{
			code:        apperr.OrderLimitExceeded,
			reason:      fmt.Sprintf("%d units is above this deployment's ceiling of %d", qty, l.ceiling),
			message:     fmt.Sprintf("%d units is above this deployment's ceiling of %d units per order; nothing was sent", qty, l.ceiling),
			remediation: "Recheck the quantity with the buyer; if it is right, the order must be raised outside this tool.",
		})
	}
	if l.minimum > 0 && qty < l.minimum {
		whole := roundUpTo(l.minimum, l.casePack)
		out = append(out, quantityRefusal{
			code:        apperr.OrderQuantityRefused,
			reason:      fmt.Sprintf("%d units is below the supplier's minimum order of %d units; StoreLink would refuse it (the smallest whole-case order is %d)", qty, l.minimum, whole),
			message:     fmt.Sprintf("%d units is below the supplier's minimum order of %d units, which StoreLink would refuse; nothing was sent", qty, l.minimum),
			remediation: l.minimumFix(whole),
		})
	}
	return out
}

// minimumFix names the smallest order that passes, or none when the
// minimum itself exceeds the ceiling.
func (l quantityLimits) minimumFix(whole int64) string {
	switch {
	case l.minimum > l.ceiling:
		return fmt.Sprintf("The supplier's minimum of %d units is above this deployment's ceiling of %d units: tell the buyer the order must be raised outside this tool.", l.minimum, l.ceiling)
	case l.casePack > 1 && whole <= l.ceiling:
		return fmt.Sprintf("Order at least %d units: %d units (%d cases of %d) is the smallest whole-case order at or above the minimum. Agree the corrected quantity with the buyer, then confirm it.",
			l.minimum, whole, whole/l.casePack, l.casePack)
	default:
		return fmt.Sprintf("Order at least %d units, the supplier's minimum. Agree the corrected quantity with the buyer, then confirm it.", l.minimum)
	}
}

func roundUpTo(n, pack int64) int64 {
	if pack <= 1 {
		return n
	}
	return (n + pack - 1) / pack * pack
}

// keyNotSpent tells the agent the idempotency key is still free.
func keyNotSpent(err error) error {
	ae := apperr.From(err)
	if ae.Code != apperr.OrderQuantityRefused && ae.Code != apperr.OrderLimitExceeded {
		return err
	}
	out := *ae
	out.Message += " or recorded, so the idempotency key is not spent"
	return &out
}
