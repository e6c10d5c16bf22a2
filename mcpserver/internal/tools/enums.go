package tools

import (
	"slices"

	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// The closed sets the answers carry. The output schemas are built from
// these lists (enumTypes; TestEveryEnumIsItsSchema).

// orderStatus is an order's status as the tools answer it: StoreLink's
// status (domain.OrderStatus) when it can be read, otherwise the ledger's
// state (state.EntryState). Both sets name "rejected", meaning nothing is
// coming.
type orderStatus string

// storeLinkStatus is StoreLink's status of an order it holds.
func storeLinkStatus(s domain.OrderStatus) orderStatus { return orderStatus(s) }

// ledgerStatus is the ledger's state of an order StoreLink does not
// answer for.
func ledgerStatus(s state.EntryState) orderStatus { return orderStatus(s) }

// orderStatuses is every orderStatus value: StoreLink's, then the ledger's
// not also StoreLink's.
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

// open reports whether goods may still come: StoreLink's open statuses and
// the ledger's raised, maybe raised, or waiting states.
func (s orderStatus) open() bool {
	switch state.EntryState(s) {
	case state.StatePendingApproval, state.StateSending, state.StateUnknown, state.StateRaised:
		return true
	}
	return domain.OrderStatus(s).Open()
}

// openOrderStatuses are the statuses an open order can show in a preview.
func openOrderStatuses() []orderStatus {
	return slices.DeleteFunc(orderStatuses(), func(s orderStatus) bool { return !s.open() })
}

// raiseMode says what korral_raise_replenishment_order did
// (replenish.Mode).
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

// verdict is the quantity check's result for a previewed order
// (replenish.Verdict).
type verdict string

const (
	// verdictOK: nothing to remark.
	verdictOK = verdict(replenish.VerdictOK)
	// verdictReview: the reasons deserve a person's look before confirming.
	verdictReview = verdict(replenish.VerdictReview)
	// verdictRefuse: a confirm would be refused (ceiling, supplier minimum).
	verdictRefuse = verdict(replenish.VerdictRefuse)
)

func verdicts() []verdict { return []verdict{verdictOK, verdictReview, verdictRefuse} }
