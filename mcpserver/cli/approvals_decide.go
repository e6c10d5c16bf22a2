package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/app"
	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/secretfile"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// entryJSON is a staged order as `approvals show` prints it. Its
// approval_binding fingerprints the request (state.ApprovalBinding); an
// approval sends only that.
func entryJSON(e state.Entry) map[string]any {
	return map[string]any{"approval_id": e.ApprovalID, "idempotency_key": e.IdempotencyKey, "state": e.State, "store_id": e.StoreID,
		"sku": e.SKU, "quantity_units": e.QuantityUnits, "reason": e.Reason, "requested_by": e.RequestedBy, "decided_by": e.DecidedBy,
		"order_id": e.OrderID, "expires_at": e.ApprovalExpiresAt.Format(time.RFC3339), "created_at": e.CreatedAt.Format(time.RFC3339),
		"storelink": e.UpstreamID, "approval_binding": e.ApprovalBinding()}
}

// person is who runs a decision: the approver's name and where their
// secret comes from.
type person struct {
	name        string
	secretFile  string
	secretStdin bool
	// reason is a rejection's reason.
	reason string
}

// secret is the approver's secret: from --secret-file, else stdin with
// --secret-stdin, else APPROVER_SECRET. One trailing line break is dropped.
// It is never echoed.
func (p person) secret(env Env, verb, fromEnv string) (string, error) {
	var raw string
	switch {
	case p.secretFile != "":
		// Refused when other users can read it (package secretfile). A path
		// not on disk is checked by the read alone.
		if err := secretfile.Check(p.secretFile); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return "", usageError("approvals %s: --secret-file: %v", verb, err)
		}
		b, err := env.ReadFile(p.secretFile)
		if err != nil {
			return "", usageError("approvals %s: --secret-file: cannot read %s", verb, p.secretFile)
		}
		raw = string(b)
	case p.secretStdin:
		if env.Stdin == nil {
			return "", usageError("approvals %s: --secret-stdin: no standard input", verb)
		}
		b, err := io.ReadAll(io.LimitReader(env.Stdin, app.MaxSecretLen+3))
		if err != nil {
			return "", usageError("approvals %s: --secret-stdin: reading stdin: %v", verb, err)
		}
		raw = string(b)
	default:
		raw = fromEnv
	}
	s := strings.TrimSuffix(strings.TrimSuffix(raw, "\n"), "\r")
	if s == "" {
		return "", usageError("approvals %s: no secret for approver %s: give it with --secret-file FILE, --secret-stdin, or APPROVER_SECRET", verb, p.name)
	}
	return s, nil
}

// decide approves or rejects a staged order as the person p.
func decide(ctx context.Context, env Env, verb, id string, p person) error {
	a, err := app.New(ctx, env.options(), app.StateOnly)
	if err != nil {
		return err
	}
	defer a.Close()
	presented, err := p.secret(env, verb, a.Config().ApproverSecret)
	if err != nil {
		return err
	}
	d := app.Decision{ApprovalID: id, Name: p.name, Secret: presented, Reason: p.reason}
	if verb == "reject" {
		if err := a.Reject(ctx, d); err != nil {
			return err
		}
		fmt.Fprintf(env.Stdout, "rejected %s\n", id)
		return nil
	}
	sent, err := a.Approve(ctx, d)
	if err != nil {
		return err
	}
	e := sent.Entry
	fmt.Fprintf(env.Stdout, "approved %s: order %s raised (%s)\n", id, sent.OrderID, sent.OrderStatus)
	if !sent.Recorded {
		// The order exists at StoreLink; only its record is behind.
		switch {
		case sent.Conflict != "":
			fmt.Fprintf(env.Stdout, "warning: the ledger holds another outcome for %s, left as it was: %s\n", e.IdempotencyKey, sent.Conflict)
		case sent.Journaled:
			fmt.Fprintf(env.Stdout, "warning: the ledger could not record order %s yet; the outcome journal %s keeps it, and the next start or doctor records it\n", sent.OrderID, sent.JournalPath)
		default:
			fmt.Fprintf(env.Stdout, "warning: neither the ledger nor the outcome journal could record order %s: record it with storelink-mcp approvals resolve %s --raised %s\n", sent.OrderID, e.IdempotencyKey, sent.OrderID)
		}
	}
	return nil
}

// resolve records what a person found at StoreLink about an order whose
// outcome is unknown (app.App.Resolve).
func resolve(ctx context.Context, env Env, key string, p person, orderID string) error {
	a, err := app.New(ctx, env.options(), app.StateOnly)
	if err != nil {
		return err
	}
	defer a.Close()
	// In approval mode this needs a verified approver; otherwise the name
	// is recorded as given.
	presented := ""
	if a.Config().WriteApproval == config.ApprovalRequired {
		if presented, err = p.secret(env, "resolve", a.Config().ApproverSecret); err != nil {
			return err
		}
	}
	got, err := a.Resolve(ctx, key, p.name, presented, orderID)
	if err != nil {
		return err
	}
	fmt.Fprintf(env.Stdout, "resolved %s: %s\n", got.IdempotencyKey, got.State)
	return nil
}
