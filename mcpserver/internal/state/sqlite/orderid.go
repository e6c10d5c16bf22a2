package sqlite

import (
	"context"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// orderIDClash selects another entry holding the order id (first
// placeholder) at the same StoreLink (third and fourth) as the entry with
// the key (second). Ids are per StoreLink; an entry with an empty upstream
// matches any. The PostgreSQL backend uses the same condition.
const orderIDClash = `order_id = ? AND idempotency_key <> ? AND (upstream_id = ? OR upstream_id = '' OR ? = '')`

// OrderIDHolder implements state.LedgerTx.
func (t ledgerTx) OrderIDHolder(ctx context.Context, cur state.Entry, orderID string) (state.Entry, bool, error) {
	return first(getMany(ctx, t.tx, `WHERE `+orderIDClash+` ORDER BY id LIMIT 1`, orderID, cur.IdempotencyKey, cur.UpstreamID, cur.UpstreamID))
}
