package cli

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// resolveClockSkew is how much earlier than its ledger entry an order may
// say it was submitted and still be the order the entry became. The entry
// is written before the POST leaves, so its order can only be younger; the
// margin absorbs a StoreLink clock that runs behind this host's, not an
// order raised before anyone here asked for it.
const resolveClockSkew = 5 * time.Minute

// checkFoundOrder reports why StoreLink's order o cannot be the order that
// entry e became, naming each field that disagrees, or nil when it can be.
// A person's finding is checked against what the ledger knows, because a
// wrong one makes another order read as ours everywhere.
func checkFoundOrder(e state.Entry, o domain.Order) error {
	var diffs []string
	if o.StoreID != e.StoreID {
		diffs = append(diffs, fmt.Sprintf("its store is %s, the entry's is %s", o.StoreID, e.StoreID))
	}
	if o.SKU != e.SKU {
		diffs = append(diffs, fmt.Sprintf("its SKU is %s, the entry's is %s", o.SKU, e.SKU))
	}
	if o.QuantityUnits != e.QuantityUnits {
		diffs = append(diffs, fmt.Sprintf("it is for %d unit(s), the entry for %d", o.QuantityUnits, e.QuantityUnits))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("order %s is not this entry's order: %s; nothing changed", o.ID, strings.Join(diffs, "; "))
	}
	if earliest := e.CreatedAt.Add(-resolveClockSkew); o.SubmittedAt.Before(earliest) {
		return fmt.Errorf("order %s is not this entry's order: StoreLink says it was submitted at %s, %s before the entry was created at %s (only %s is allowed for a difference of clocks); nothing changed",
			o.ID, o.SubmittedAt.UTC().Format(time.RFC3339), e.CreatedAt.Sub(o.SubmittedAt).Round(time.Second), e.CreatedAt.UTC().Format(time.RFC3339), resolveClockSkew)
	}
	return nil
}

// orderTaken turns the ledger's refusal of an order id that another entry
// already holds into the person's answer; other errors give nil.
func orderTaken(err error, orderID string) error {
	var taken *state.OrderIDTakenError
	if !errors.As(err, &taken) {
		return nil
	}
	return fmt.Errorf("order %s is already recorded for another entry (idempotency key %s, %s): one StoreLink order belongs to one entry; nothing changed",
		orderID, taken.Entry.IdempotencyKey, taken.Entry.State)
}
