package cli

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/korral/storelink/mcpserver/internal/app"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// addApprover registers an approver with their secret, generated or read.
func addApprover(ctx context.Context, env Env, a *app.App, name string, scope []string, secret string) error {
	if len(scope) > 0 {
		ids, err := a.KeyringStores(ctx, "approvers add: --stores")
		if err != nil {
			return err
		}
		for _, id := range scope {
			if !slices.Contains(ids, id) {
				return usageError("approvers add: store %s is not in the keyring (its stores: %s); nothing was added", id, strings.Join(ids, ", "))
			}
		}
	}
	generated := secret == ""
	rec, secret, err := a.AddApprover(ctx, name, scope, secret)
	switch {
	case errors.Is(err, state.ErrApproverExists):
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers add: an active approver is already named %s (names are compared ignoring case); nothing was added. To give them a new secret, revoke and add again", name)}
	case errors.Is(err, state.ErrApproverInvalid) || errors.Is(err, app.ErrSecretInvalid):
		return usageError("approvers add: %v", err)
	case err != nil:
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers add: %w; nothing was added", err)}
	}
	fmt.Fprintf(env.Stdout, "added approver %s for %s\n", shown(rec.Name), scopeText(rec.Stores))
	if !generated {
		_, err = fmt.Fprintln(env.Stdout, "The secret read from stdin is their secret; only its verifier was stored.")
		return err
	}
	fmt.Fprintf(env.Stdout, "Hand this secret to %s privately. It is shown once and not stored; if it is lost, revoke %s and add them again:\n", shown(rec.Name), shown(rec.Name))
	_, err = fmt.Fprintln(env.Stdout, secret)
	return err
}

// scopeText names the stores of an approver.
func scopeText(stores []string) string {
	if len(stores) == 0 {
		return "every store"
	}
	return "store(s) " + strings.Join(stores, ", ")
}

// listApprovers prints the register, never a secret.
func listApprovers(ctx context.Context, env Env, a *app.App) error {
	list, err := a.State().ListApprovers(ctx)
	if err != nil {
		return err
	}
	tw := tabwriter.NewWriter(env.Stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "NAME\tSTORES\tCREATED\tREVOKED")
	for _, r := range list {
		stores, revoked := "all", "-"
		if len(r.Stores) > 0 {
			stores = strings.Join(r.Stores, ",")
		}
		if r.Revoked() {
			revoked = r.RevokedAt.Format(time.RFC3339)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", shown(r.Name), stores, r.CreatedAt.Format(time.RFC3339), revoked)
	}
	if len(list) == 0 {
		fmt.Fprintln(tw, "(no approvers; add one with: storelink-mcp approvers add NAME)")
	}
	return tw.Flush()
}

// revokeApprover ends an approver's right to decide; the record stays.
func revokeApprover(ctx context.Context, env Env, a *app.App, name string) error {
	rec, err := a.State().RevokeApprover(ctx, name, time.Now())
	if errors.Is(err, state.ErrApproverNotFound) {
		if old, found, gerr := a.State().GetApprover(ctx, name); gerr == nil && found {
			return &ExitError{Code: 1, Err: fmt.Errorf("approvers revoke: %s was already revoked at %s; nothing changed", shown(old.Name), old.RevokedAt.Format(time.RFC3339))}
		}
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers revoke: no approver is named %s (see storelink-mcp approvers list); nothing changed", name)}
	}
	if err != nil {
		return &ExitError{Code: 1, Err: fmt.Errorf("approvers revoke: %w; nothing changed", err)}
	}
	_, err = fmt.Fprintf(env.Stdout, "revoked approver %s at %s: their secret no longer approves anything\n", shown(rec.Name), rec.RevokedAt.Format(time.RFC3339))
	return err
}
