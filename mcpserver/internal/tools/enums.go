package tools

import (
	"slices"

	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// The closed sets the answers carry. Each is a named type whose values are
// the constants below, and each list is what the output schemas are built
// from (enumTypes), so a value the code can emit and a value a host accepts
// are the same by construction; TestEveryEnumIsItsSchema holds the two
// together.

// orderStatus is an order's status as the tools answer it. Once StoreLink
// holds the order and it can be read here, it is StoreLink's status
// (domain.OrderStatus); otherwise it is this deployment's ledger state
// (state.EntryState): pending_approval (waits for a person), sending or
// unknown (the outcome is not known: never resubmit), retryable (StoreLink
// did not take it), failed (StoreLink refused it), rejected (by a person),
// expired (nobody approved it in time), and raised (raised, but StoreLink's
// status cannot be read here). Both sets name "rejected", and both mean
// that nothing is coming; the ledger's note says which.
type orderStatus string

// storeLinkStatus is StoreLink's status of an order it holds.
func storeLinkStatus(s domain.OrderStatus) orderStatus { return orderStatus(s) }

// ledgerStatus is the ledger's state of an order StoreLink's answer does not
// speak for.
func ledgerStatus(s state.EntryState) orderStatus { return orderStatus(s) }

// orderStatuses is every value an orderStatus takes: StoreLink's statuses,
// then the ledger's states StoreLink does not also name.
func orderStatuses() []orderStatus {
	var out []orderStatus
	for _, s := range domain.OrderStatuses() {
		out = append(out, storeLinkStatus(s))
	}
	for _, s := range state.States() {
		if !slices.Contains(out, ledgerStatus(s)) {
			out = append(out, ledgerStatus(s))
		}
	}
	return out
}

// open reports whether goods may still come for an order with this status:
// StoreLink's open statuses, and the ledger's states in which the order is
// raised, may have been raised, or waits for a person.
func (s orderStatus) open() bool {
	switch state.EntryState(s) {
	case state.StatePendingApproval, state.StateSending, state.StateUnknown, state.StateRaised:
		return true
	}
	return domain.OrderStatus(s).Open()
}

// openOrderStatuses are the statuses an open order of the same SKU can show
// in a preview: only the open ones, since the others are not listed.
func openOrderStatuses() []orderStatus {
	return slices.DeleteFunc(orderStatuses(), func(s orderStatus) bool { return !s.open() })
}

// raiseMode says what korral_raise_replenishment_order did: the workflow's
// mode (replenish.Mode), as the answer names it.
type raiseMode string

const (
	// modePreview: nothing was sent; the answer is the preview.
	modePreview = raiseMode(replenish.ModePreview)
	// modeRaised: the order was sent and StoreLink took it.
	modeRaised = raiseMode(replenish.ModeRaised)
	// modePendingApproval: the order was staged for a person to release.
	modePendingApproval = raiseMode(replenish.ModePendingApproval)
	// modeReplay: the idempotency key was seen before; its first outcome is
	// repeated and nothing was sent.
	modeReplay = raiseMode(replenish.ModeReplay)
)

func raiseModes() []raiseMode {
	return []raiseMode{modePreview, modeRaised, modePendingApproval, modeReplay}
}

// verdict is the quantity check's judgement of a previewed order
// (replenish.Verdict).
type verdict string

const (
	// verdictOK: nothing to remark.
	verdictOK = verdict(replenish.VerdictOK)
	// verdictReview: the reasons deserve a person's look before confirming.
	verdictReview = verdict(replenish.VerdictReview)
	// verdictRefuse: a confirm would be refused (the ceiling, the supplier's
	// minimum).
	verdictRefuse = verdict(replenish.VerdictRefuse)
)

func verdicts() []verdict { return []verdict{verdictOK, verdictReview, verdictRefuse} }
