package replenish

import (
	"context"
	"fmt"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Reacher connects a person's command to the StoreLink a ledger entry was
// recorded for and checks the store's key opens it, before the ledger
// changes. A configured base URL must name the same StoreLink; an embedded
// one cannot be reached from another process.
type Reacher struct {
	// Configured is UPSTREAM_BASE_URL, or "".
	Configured string
	// HasKeyring says whether a keyring is configured.
	HasKeyring bool
	// Connect builds the client for target; holds reports whether its
	// keyring holds a store.
	Connect func(target string) (up Upstream, holds func(storeID string) bool, err error)
}

// Reach implements Workflow.Reach.
func (r Reacher) Reach(ctx context.Context, e state.Entry) (Upstream, string, error) {
	refuse := func(format string, args ...any) (Upstream, string, error) {
		return nil, "", fmt.Errorf(format+"; nothing changed", args...)
	}
	target := e.UpstreamID
	switch {
	case IsEmbedded(target):
		return refuse("%s was staged for the embedded mock StoreLink inside one server process, which no other process can reach; reject it, and stage orders against a real StoreLink (UPSTREAM_BASE_URL)", dash(e.ApprovalID))
	case target == "" && r.Configured == "":
		return refuse("the ledger does not say which StoreLink %s was recorded for: set UPSTREAM_BASE_URL to the StoreLink the server uses", e.IdempotencyKey)
	case target == "":
		target = UpstreamIdentity(r.Configured)
	case r.Configured != "" && UpstreamIdentity(r.Configured) != target:
		return refuse("%s was recorded for the StoreLink at %s, but UPSTREAM_BASE_URL names %s: unset it or point it at %s", e.IdempotencyKey, target, UpstreamIdentity(r.Configured), target)
	}
	if !r.HasKeyring {
		return refuse("no key for store %s: set STORELINK_KEYRING_FILE (or STORELINK_KEYRING) to a keyring holding store %s's key for %s", e.StoreID, e.StoreID, target)
	}
	up, holds, err := r.Connect(target)
	if err != nil {
		return nil, "", err
	}
	if !holds(e.StoreID) {
		return refuse("the keyring holds no key for store %s: add store %s's key for %s to it", e.StoreID, e.StoreID, target)
	}
	if _, err := up.Store(ctx, e.StoreID); err != nil {
		ae := apperr.From(err)
		return refuse("StoreLink at %s could not be used with store %s's key (%s: %s)", target, e.StoreID, ae.Code, ae.Message)
	}
	return up, target, nil
}
