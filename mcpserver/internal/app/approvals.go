package app

import (
	"context"
	"errors"

	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Decision is a person's approval or rejection of a staged order.
type Decision = replenish.Decision

// Staged lists the staged orders; all adds decided and lapsed ones. It only
// reads: a lapsed approval shows as expired and is recorded by the next
// decision about it.
func (a *App) Staged(ctx context.Context, all bool) ([]state.Entry, error) {
	return a.workflow(nil).Staged(ctx, all)
}

// Show is one staged order.
func (a *App) Show(ctx context.Context, approvalID string) (state.Entry, error) {
	e, err := a.workflow(nil).Show(ctx, approvalID)
	if err != nil {
		return e, personError(err)
	}
	return e, nil
}

// Reject refuses a staged order as the named approver.
func (a *App) Reject(ctx context.Context, d Decision) error {
	_, err := a.workflow(a.approvers()).Reject(ctx, d)
	if err != nil {
		return personError(err)
	}
	return nil
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
func (a *App) Approve(ctx context.Context, d Decision) (Approved, error) {
	approved, err := a.workflow(a.approvers()).Approve(ctx, d)
	if err != nil {
		return Approved{}, personError(err)
	}
	sent := approved.Sent
	out := Approved{Entry: approved.Entry, OrderID: sent.Order.ID, OrderStatus: string(sent.Order.Status),
		Recorded: sent.Recorded, Conflict: sent.Conflict, Journaled: sent.Journaled}
	if a.recorder != nil {
		out.JournalPath = a.recorder.Journal.Path()
	}
	return out, nil
}

// Resolve records what a person found at StoreLink about an order whose
// outcome is unknown: the order id, or "" when StoreLink has no such order.
// In approval mode the person must be a verified approver; otherwise the
// name is recorded as given.
func (a *App) Resolve(ctx context.Context, key, name, secret, orderID string) (state.Entry, error) {
	var verifier replenish.Verifier = replenish.Unverified{}
	if a.cfg.WriteApproval == config.ApprovalRequired {
		verifier = a.approvers()
	} else {
		secret = ""
	}
	got, err := a.workflow(verifier).Resolve(ctx, replenish.Resolution{Ref: key, Name: name, Secret: secret, OrderID: orderID})
	if err != nil {
		var exit *Error
		if errors.As(err, &exit) {
			return got, exit
		}
		return got, &Error{Code: 1, Err: err}
	}
	return got, nil
}

// approvers is the verifier of the named approvers in a's register.
func (a *App) approvers() replenish.Verifier {
	return replenish.Named{Approvers: approver.New(a.db)}
}

// workflow is the order workflow for a person's command: the gate of these
// settings, the ledger, and each entry's StoreLink (reach), with verifier
// checking the person.
func (a *App) workflow(verifier replenish.Verifier) *replenish.Workflow {
	cfg := a.cfg
	f := &replenish.Workflow{
		Ledger:   a.db,
		Audit:    a.db,
		Verifier: verifier,
		Now:      a.now,
		Log:      a.log,
		Gate: replenish.Gate{
			AllowWrites:   cfg.AllowWrites && !cfg.ReadOnly,
			MaxOrderUnits: int64(cfg.MaxOrderUnits),
			// The keyring reach connected with, read when the gate runs.
			Holds: a.holds,
		},
		Reach: replenish.Reacher{Configured: cfg.UpstreamBaseURL, HasKeyring: cfg.Keyring != nil,
			Connect: func(target string) (replenish.Upstream, func(string) bool, error) {
				if err := a.connect(target, cfg.Keyring); err != nil {
					return nil, nil, err
				}
				a.upstreamID = target
				return a.up, a.holds, nil
			}}.Reach,
	}
	if a.recorder != nil {
		f.Recorder = a.recorder
	}
	return f
}

// personError maps a workflow error to exit code 1, unless the cause
// already carries its own exit code.
func personError(err error) error {
	var exit *Error
	if errors.As(err, &exit) {
		return exit
	}
	if errors.Is(err, replenish.ErrReasonRequired) {
		return exit2(err)
	}
	var ref *replenish.Refusal
	var nf *replenish.NotFoundError
	var np *replenish.NotPendingError
	if errors.Is(err, replenish.ErrDenied) || errors.As(err, &ref) || errors.As(err, &nf) || errors.As(err, &np) {
		return &Error{Code: 1, Err: err}
	}
	return err
}

// holds reports whether the keyring a connected with holds storeID.
func (a *App) holds(storeID string) bool {
	if a.keys == nil {
		return false
	}
	_, ok := a.keys.Key(storeID)
	return ok
}
