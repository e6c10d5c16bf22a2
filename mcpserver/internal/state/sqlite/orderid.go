package sqlite

import (
	"context"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// orderIDClash selects another entry holding the order id (first
// placeholder) that an update is about to record for the entry with the key
// (second) at the StoreLink (third and fourth, the same value). Order ids are
// StoreLink's: two StoreLinks (an embedded demo started again, a test
// StoreLink beside the real one) may each issue the same id for different
// orders, so only the same StoreLink counts; an entry recorded before
// entries named their StoreLink (empty upstream) matches any, as the status
// tool reads it. The PostgreSQL backend applies the same condition.
const orderIDClash = `order_id = ? AND idempotency_key <> ? AND (upstream_id = ? OR upstream_id = '' OR ? = '')`

// OrderIDHolder implements state.LedgerTx.
func (t ledgerTx) OrderIDHolder(ctx context.Context, cur state.Entry, orderID string) (state.Entry, bool, error) {
	return first(getMany(ctx, t.tx, `WHERE `+orderIDClash+` ORDER BY id LIMIT 1`, orderID, cur.IdempotencyKey, cur.UpstreamID, cur.UpstreamID))
}
