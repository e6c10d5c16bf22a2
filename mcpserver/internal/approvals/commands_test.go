package approvals

import (
	"errors"
	"fmt"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/replenish"
)

// TestExitCode: a rejection without its reason is a usage error (2); a
// refused person or decision, and an order not found or not pending, exit 1;
// anything else carries no code of its own.
func TestExitCode(t *testing.T) {
	for err, want := range map[error]int{
		replenish.ErrReasonRequired:                                  2,
		fmt.Errorf("reject: %w", replenish.ErrDenied):                1,
		&replenish.Refusal{Step: "send", Err: errors.New("timeout")}: 1,
		&replenish.NotFoundError{Ref: "A-1"}:                         1,
		&replenish.NotPendingError{Verb: "approve"}:                  1,
		errors.New("database is locked"):                             0,
		nil:                                                          0,
	} {
		if got := ExitCode(err); got != want {
			t.Errorf("ExitCode(%v) = %d, want %d", err, got, want)
		}
	}
}
