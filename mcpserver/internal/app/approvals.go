package app

import (
	"context"
	"errors"

	"github.com/korral/storelink/mcpserver/internal/approvals"
	"github.com/korral/storelink/mcpserver/internal/approver"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/replenish"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Decision is a person's approval or rejection of a staged order.
type Decision = replenish.Decision

// Staged lists the staged orders (approvals.Commands.Staged).
func (a *App) Staged(ctx context.Context, all bool) ([]state.Entry, error) {
	return a.commands().Staged(ctx, all)
}

// Show is one staged order.
func (a *App) Show(ctx context.Context, approvalID string) (state.Entry, error) {
	e, err := a.commands().Show(ctx, approvalID)
	return e, withExitCode(err, approvals.ExitCode(err))
}

// Reject refuses a staged order as the named approver.
func (a *App) Reject(ctx context.Context, d Decision) error {
	err := a.commands().Reject(ctx, d)
	return withExitCode(err, approvals.ExitCode(err))
}

// Approve releases a staged order as the named approver.
func (a *App) Approve(ctx context.Context, d Decision) (approvals.Approved, error) {
	out, err := a.commands().Approve(ctx, d)
	return out, withExitCode(err, approvals.ExitCode(err))
}

// Resolve records what a person found at StoreLink about an order whose
// outcome is unknown (approvals.Commands.Resolve); every failure exits 1.
func (a *App) Resolve(ctx context.Context, key, name, secret, orderID string) (state.Entry, error) {
	got, err := a.commands().Resolve(ctx, key, name, secret, orderID)
	return got, withExitCode(err, 1)
}

// withExitCode gives err the exit code code, unless err already carries
// one; code 0 leaves err as it is.
func withExitCode(err error, code int) error {
	var exit *Error
	if errors.As(err, &exit) {
		return exit
	}
	if err == nil || code == 0 {
		return err
	}
	return &Error{Code: code, Err: err}
}

// commands are the approval commands over a's register and workflow.
func (a *App) commands() approvals.Commands {
	c := approvals.Commands{Flow: a.workflow, Approvers: replenish.Named{Approvers: approver.New(a.db)},
		RequireApproval: a.cfg.WriteApproval == config.ApprovalRequired}
	if a.recorder != nil {
		c.JournalPath = a.recorder.Journal.Path()
	}
	return c
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

// holds reports whether the keyring a connected with holds storeID.
func (a *App) holds(storeID string) bool {
	if a.keys == nil {
		return false
	}
	_, ok := a.keys.Key(storeID)
	return ok
}
