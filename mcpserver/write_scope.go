package mcpserver

import (
	"errors"
	"fmt"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Scope on the write path. A ledger may be shared with deployments that
// hold other stores' keys (one PostgreSQL for several teams, or one state
// file reused with a smaller keyring), so an entry the caller reaches by an
// idempotency key or a request fingerprint can belong to a store outside
// this keyring. Such an entry is never described: not its store, SKU,
// quantity, reason or key. The answer says only what the caller must do.

// keyringHolds reports whether storeID is one of the stores this
// deployment's keyring holds a key for right now.
func (s *server) keyringHolds(storeID string) bool {
	kr := s.opts.Keyring()
	if kr == nil {
		return false
	}
	_, ok := kr.Key(storeID)
	return ok
}

// foreignKeyUsed answers a key that names an entry of a store outside the
// keyring. The key is the caller's own argument, so naming it reveals
// nothing.
func foreignKeyUsed(key string) error {
	return apperr.New(apperr.IdempotencyKeyReused,
		fmt.Sprintf("idempotency key %s is already used; nothing was sent", key),
		"Choose another idempotency_key, or omit it to have one derived.")
}

// inScopeInFlight keeps an in-flight refusal (inFlight) from describing an
// entry of a store outside the keyring; other errors pass through.
func (s *server) inScopeInFlight(err error) error {
	var fl *state.InFlightError
	if !errors.As(err, &fl) || s.keyringHolds(fl.Entry.StoreID) {
		return err
	}
	return apperr.Wrap(apperr.OrderInFlight, err,
		"the same order is already being sent, or its outcome is unknown, under another idempotency key; nothing was sent",
		"Do not resubmit under any key. Ask an operator to check the ledger and resolve the other entry (storelink-mcp approvals resolve).")
}
