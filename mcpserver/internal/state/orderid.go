package state

import (
	"errors"
	"fmt"
)

// ErrOrderIDTaken reports that a StoreLink order id is already recorded for
// another ledger entry of the same StoreLink. One order is one entry: the
// status tool finds an entry by its order id, and the duplicate warning
// counts entries, so a second entry claiming the same order would make the
// order read as ours twice. See OrderIDTakenError.
var ErrOrderIDTaken = errors.New("state: the order id is already recorded for another ledger entry")

// OrderIDTakenError names the entry that already holds the order id. It
// matches ErrOrderIDTaken with errors.Is.
type OrderIDTakenError struct {
	OrderID string
	// Entry is the entry that holds OrderID.
	Entry Entry
}

func (e *OrderIDTakenError) Error() string {
	return fmt.Sprintf("%v: order %s belongs to idempotency key %s (%s)", ErrOrderIDTaken, e.OrderID, e.Entry.IdempotencyKey, e.Entry.State)
}

// Is makes errors.Is(err, ErrOrderIDTaken) true.
func (e *OrderIDTakenError) Is(target error) bool { return target == ErrOrderIDTaken }
