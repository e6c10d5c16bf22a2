package tools

import (
	"errors"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// stateUnavailable gives a call that failed on the state database its own
// code, so the agent waits and repeats. An error already in the taxonomy
// keeps its code (WRITE_OUTCOME_UNKNOWN stays).
func stateUnavailable(err error) error {
	var ae *apperr.Error
	if errors.As(err, &ae) || !errors.Is(err, state.ErrUnavailable) {
		return err
	}
	return apperr.Wrap(apperr.StateUnavailable, err, "the server's state database is unreachable, so the call could not be completed", "")
}
