package approvals

import (
	"context"
	"errors"

	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Commands are a person's approval commands at the command line
// (storelink-mcp approvals): list, show, approve, reject and resolve staged
// orders on the order workflow.
type Commands struct {
	// Flow is the order workflow, with verifier checking the person.
	Flow func(verifier replenish.Verifier) *replenish.Workflow
	// Approvers checks a named approver against the register.
	Approvers replenish.Verifier
	// RequireApproval is approval mode: Resolve then needs a verified
	// approver; otherwise the name is recorded as given.
	RequireApproval bool
	// JournalPath is the outcome journal's file; "" without one.
	JournalPath string
}

// Staged lists the staged orders; all adds decided and lapsed ones. It only
// reads: a lapsed approval shows as expired and is recorded by the next
// decision about it.
func (c Commands) Staged(ctx context.Context, all bool) ([]state.Entry, error) {
	return c.Flow(nil).Staged(ctx, all)
}

// Show is one staged order.
func (c Commands) Show(ctx context.Context, approvalID string) (state.Entry, error) {
	return c.Flow(nil).Show(ctx, approvalID)
}

// Reject refuses a staged order as the named approver.
func (c Commands) Reject(ctx context.Context, d replenish.Decision) error {
	_, err := c.Flow(c.Approvers).Reject(ctx, d)
	return err
}

// Approved is what an approval did: the entry, and the order it sent.
type Approved struct {
	Entry state.Entry
	// OrderID and OrderStatus are StoreLink's.
	OrderID     string
	OrderStatus string
	// Recorded is false when the ledger could not record the order yet;
	// then Conflict names another outcome the ledger holds, or Journaled
	// says the outcome journal keeps it.
	Recorded    bool
	Conflict    string
	Journaled   bool
	JournalPath string
}

// Approve releases a staged order as the named approver: the order is sent
// to the StoreLink its entry names.
func (c Commands) Approve(ctx context.Context, d replenish.Decision) (Approved, error) {
	approved, err := c.Flow(c.Approvers).Approve(ctx, d)
	if err != nil {
		return Approved{}, err
	}
	sent := approved.Sent
	return Approved{Entry: approved.Entry, OrderID: sent.Order.ID, OrderStatus: string(sent.Order.Status),
		Recorded: sent.Recorded, Conflict: sent.Conflict, Journaled: sent.Journaled, JournalPath: c.JournalPath}, nil
}

// Resolve records what a person found at StoreLink about an order whose
// outcome is unknown: the order id, or "" when StoreLink has no such order.
func (c Commands) Resolve(ctx context.Context, key, name, secret, orderID string) (state.Entry, error) {
	var verifier replenish.Verifier = replenish.Unverified{}
	if c.RequireApproval {
		verifier = c.Approvers
	} else {
		secret = ""
	}
	return c.Flow(verifier).Resolve(ctx, replenish.Resolution{Ref: key, Name: name, Secret: secret, OrderID: orderID})
}

// ExitCode is the exit code of a command that failed with err: 2 for a
// rejection without its reason, 1 for a refused person or decision, or an
// order not found or not pending, and 0 for any other failure.
func ExitCode(err error) int {
	if errors.Is(err, replenish.ErrReasonRequired) {
		return 2
	}
	var ref *replenish.Refusal
	var nf *replenish.NotFoundError
	var np *replenish.NotPendingError
	if errors.Is(err, replenish.ErrDenied) || errors.As(err, &ref) || errors.As(err, &nf) || errors.As(err, &np) {
		return 1
	}
	return 0
}
