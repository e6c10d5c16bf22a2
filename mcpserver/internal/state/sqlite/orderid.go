package sqlite

import (
	"context"
	"database/sql"

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

// checkOrderIDFree refuses to record orderID for cur while another entry of
// the same StoreLink holds it. The caller holds the write transaction, which
// in SQLite serialises every writer of the file, so the check and the
// update that follows cannot be split by another writer.
func checkOrderIDFree(ctx context.Context, tx *sql.Tx, cur state.Entry, orderID string) error {
	es, err := getMany(ctx, tx, `WHERE `+orderIDClash+` ORDER BY id LIMIT 1`, orderID, cur.IdempotencyKey, cur.UpstreamID, cur.UpstreamID)
	if err != nil {
		return err
	}
	if len(es) > 0 {
		return &state.OrderIDTakenError{OrderID: orderID, Entry: es[0]}
	}
	return nil
}
