package replenish

import (
	"context"
	"fmt"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// Gate is the deployment's write settings and the one check every send goes
// through, the agent's confirm and a person's approval alike: writes must
// be allowed (ALLOW_WRITES), the quantity within the ceiling
// (MAX_ORDER_UNITS) and at or above the supplier's minimum order, and the
// store's key in the keyring. A person's approval does not lift any of it.
type Gate struct {
	// AllowWrites must be true for anything to be sent.
	AllowWrites bool
	// MaxOrderUnits is the hard ceiling of one order.
	MaxOrderUnits int64
	// RequireApproval stages confirmed orders for a person instead of
	// sending them.
	RequireApproval bool
	// ApprovalTTL is how long a staged order waits before it lapses.
	ApprovalTTL time.Duration
	// HostConsent asks the person at the host (Order.Consent) to confirm
	// each confirmed order before it is sent (WRITE_APPROVAL=host).
	HostConsent bool
	// Holds reports whether the keyring holds storeID's key right now; nil
	// holds none.
	Holds func(storeID string) bool
}

func (g Gate) holds(storeID string) bool { return g.Holds != nil && g.Holds(storeID) }

// Local is the part of the gate that needs no read: writes allowed, and the
// quantity within the ceiling. It holds before anything else, whatever the
// caller asserts.
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

// Check is the whole gate of an order of qty units of skuCode at storeID:
// Local, the keyring, and the supplier's minimum order, which StoreLink
// enforces. It reads the SKU and its supplier through up (from the
// adapter's cache when a preview has just read them) and returns
// WRITES_DISABLED, ORDER_LIMIT_EXCEEDED, STORE_NOT_AUTHORIZED or
// ORDER_QUANTITY_REFUSED for an order that must not be sent, a read's own
// error, or nil.
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

// The quantity bounds: the bounds a quantity must keep to be sent at all.
// The preview's quantity check reports them as a refusing verdict; a
// confirm, and a person's approval, are refused on them locally, before
// the ledger holds anything or a request leaves, so a quantity StoreLink is
// known to refuse never spends an idempotency key (ADR 0006).

// quantityLimits are the bounds of one order: this deployment's ceiling,
// and the supplier's minimum order (0 for none), which StoreLink enforces,
// with the SKU's case pack to name the smallest order that passes.
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

// refusals lists the bounds qty breaks; none means it may be sent. It is
// the one rule behind the preview's "refuse" verdict and the refusal of a
// confirm or an approval.
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

// minimumFix names the smallest order that passes: the next whole case at
// or above the supplier's minimum, or the minimum itself when a whole case
// would pass the ceiling, or no order at all when the minimum does.
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

// roundUpTo is n rounded up to a whole number of packs.
func roundUpTo(n, pack int64) int64 {
	if pack <= 1 {
		return n
	}
	return (n + pack - 1) / pack * pack
}

// keyNotSpent tells the agent that a confirm the gate refused left the
// ledger untouched: the same idempotency key still raises the corrected
// order.
func keyNotSpent(err error) error {
	ae := apperr.From(err)
	if ae.Code != apperr.OrderQuantityRefused && ae.Code != apperr.OrderLimitExceeded {
		return err
	}
	out := *ae
	out.Message += " or recorded, so the idempotency key is not spent"
	return &out
}
