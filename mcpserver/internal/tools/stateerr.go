package tools

import (
	"errors"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// stateUnavailable gives a call that failed because the state database was
// out of reach its own code, so the agent waits and repeats instead of
// reporting a bug. An error already in the taxonomy keeps its code: a send
// whose outcome is unknown stays WRITE_OUTCOME_UNKNOWN even if the ledger
// could not record that.
func stateUnavailable(err error) error {
	var ae *apperr.Error
	if errors.As(err, &ae) || !errors.Is(err, state.ErrUnavailable) {
		return err
	}
	return apperr.Wrap(apperr.StateUnavailable, err, "the server's state database is unreachable, so the call could not be completed", "")
}
