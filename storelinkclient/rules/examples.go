package rules

import (
	"encoding/json"
	"fmt"
	"slices"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
)

// Example breaks one rule, for tests of code that applies the rules.
// [Good] answers the example's Query keeping every rule; Mutate makes an
// answer break Rule at Field and keep the others.
type Example struct {
	Rule      string
	Operation string
	// Field is the JSON Pointer the finding names.
	Field string
	// Query is the request the example answers; [ExampleQuery] builds it.
	Query Query
	// Mutate breaks the rule in an answer to q, decoded into a JSON object
	// (with or without json.Decoder.UseNumber), in place. It works on Good's
	// answers and on a conformant StoreLink's.
	Mutate func(body map[string]any, q Query)
}

// Bad is the example's answer: Good's answer to the example's query,
// mutated, as JSON.
func (ex Example) Bad() []byte {
	body := Good(ex.Operation, ex.Query)
	ex.Mutate(body, ex.Query)
	return encode(body)
}

// ExampleNow is the clock of the examples' queries.
var ExampleNow = time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)

// Ids the examples' queries use.
const (
	ExampleStore    = "47"
	ExampleSKU      = "8847291"
	ExampleSupplier = "SUP-MADETA"
	ExampleOrder    = "RO-47-000123"
	// ExampleRaised is the quantity of the order the create's example
	// raises.
	ExampleRaised = 12
)

// ExampleQuery is the query the examples of an operation answer. Each call
// returns a fresh walk.
func ExampleQuery(operation string) Query {
	q := Query{Now: ExampleNow}
	switch operation {
	case OpGetStore:
		q.StoreID = ExampleStore
	case OpGetInventory:
		q.StoreID, q.SKU = ExampleStore, ExampleSKU
	case OpListPOS:
		q.StoreID, q.SKU, q.Since, q.Walk = ExampleStore, ExampleSKU, ExampleNow.Add(-24*time.Hour), &Walk{}
	case OpGetSKU:
		q.SKU = ExampleSKU
	case OpGetSupplier:
		q.SupplierID = ExampleSupplier
	case OpCreateOrder:
		q.StoreID = ExampleStore
		q.Raised = &sl.OrderRequest{SKU: ExampleSKU, QuantityUnits: ExampleRaised, Reason: "gap of 7 units before close"}
	case OpGetOrder:
		q.StoreID, q.OrderID = ExampleStore, ExampleOrder
	}
	return q
}

func rfc3339(t time.Time) string { return t.Format(time.RFC3339) }

func day(opens, closes string) map[string]any {
	return map[string]any{"closed": false, "opens": opens, "closes": closes}
}

// Good is an answer to the operation that keeps every rule for q, as a JSON
// object.
func Good(operation string, q Query) map[string]any {
	now := q.Now
	if now.IsZero() {
		now = ExampleNow
	}
	order := func(id, sku string, qty int64) map[string]any {
		return map[string]any{"order_id": id, "store_id": q.StoreID, "sku": sku, "quantity_units": qty,
			"reason": "gap of 7 units before close", "status": "submitted",
			"submitted_at": rfc3339(now.Add(-time.Hour)), "expected_arrival": rfc3339(now.Add(40 * time.Hour))}
	}
	switch operation {
	case OpListStores:
		return map[string]any{"stores": []any{
			map[string]any{"store_id": "47", "name": "Praha Smíchov", "timezone": "Europe/Prague"},
			map[string]any{"store_id": "210", "name": "Wien Hauptbahnhof", "timezone": "Europe/Vienna"},
		}}
	case OpGetStore:
		return map[string]any{"store_id": q.StoreID, "name": "Praha Smíchov", "timezone": "Europe/Prague",
			"opening_hours": map[string]any{
				"monday": day("07:00", "22:00"), "tuesday": day("07:00", "22:00"), "wednesday": day("07:00", "22:00"),
				"thursday": day("07:00", "22:00"), "friday": day("07:00", "22:00"), "saturday": day("08:00", "20:00"),
				"sunday": map[string]any{"closed": true},
			}}
	case OpGetInventory:
		return map[string]any{"store_id": q.StoreID, "sku": q.SKU, "on_hand_units": 9, "counted_at": rfc3339(now.Add(-8 * time.Hour))}
	case OpListPOS:
		since := q.Since
		if since.IsZero() {
			since = now.Add(-24 * time.Hour)
		}
		var txs []any
		for i := range 3 {
			at := now.Add(-time.Duration(i+1) * time.Hour)
			if at.Before(since) {
				break
			}
			txs = append(txs, map[string]any{"transaction_id": fmt.Sprintf("T-%s-%04d", q.StoreID, 3-i), "timestamp": rfc3339(at), "units": 1 + i})
		}
		return map[string]any{"store_id": q.StoreID, "sku": q.SKU, "since": since.Format(time.RFC3339Nano),
			"transactions": txs, "total_count": len(txs)}
	case OpGetSKU:
		return map[string]any{"sku": q.SKU, "name": "Madeta butter 250g", "category": "dairy", "supplier_id": ExampleSupplier,
			"unit": "piece", "case_pack": 12, "chilled": true, "shelf_life_days": 30}
	case OpGetSupplier:
		return map[string]any{"supplier_id": q.SupplierID, "name": "Madeta a.s.", "lead_time_days": 2,
			"order_cutoff_local": "14:00", "minimum_order_units": 12}
	case OpCreateOrder:
		r := q.Raised
		if r == nil {
			r = &sl.OrderRequest{SKU: ExampleSKU, QuantityUnits: ExampleRaised}
		}
		return order("RO-47-000124", r.SKU, r.QuantityUnits)
	case OpGetOrder:
		sku, qty := ExampleSKU, int64(24)
		if r := q.Raised; r != nil {
			sku, qty = r.SKU, r.QuantityUnits
		}
		return order(q.OrderID, sku, qty)
	}
	return map[string]any{}
}

func encode(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic("rules: encode an example: " + err.Error())
	}
	return b
}

// other returns an id of the same shape as id, but not id.
func other(id, alt string) string {
	if id == alt {
		return alt + "9"
	}
	return alt
}

func number(v any) int64 {
	switch n := v.(type) {
	case json.Number:
		i, _ := n.Int64()
		return i
	case float64:
		return int64(n)
	case int:
		return int64(n)
	case int64:
		return n
	}
	return 0
}

// transactions returns the page's transactions, adding one inside the
// window when the page has none, so that a mutation has a line to break.
func transactions(body map[string]any, q Query) []any {
	txs, _ := body["transactions"].([]any)
	if len(txs) == 0 {
		at := q.Since
		if at.IsZero() || (!q.Now.IsZero() && at.After(q.Now)) {
			at = q.Now
		}
		txs = []any{map[string]any{"transaction_id": "T-EXAMPLE-1", "timestamp": rfc3339(at.Add(time.Second).Truncate(time.Second)), "units": 1}}
		body["transactions"] = txs
		body["total_count"] = max(number(body["total_count"]), 1)
	}
	return txs
}

func setDay(name string, hours map[string]any) func(map[string]any, Query) {
	return func(b map[string]any, _ Query) {
		if oh, ok := b["opening_hours"].(map[string]any); ok {
			oh[name] = hours
		}
	}
}

// Examples lists at least one example of every rule, in the registry's
// order. Each call returns fresh queries.
func Examples() []Example {
	return slices.Concat(echoExamples(), storeExamples(), inventoryExamples(), posExamples(), catalogueExamples(), orderExamples())
}

func newExample(rule, op, field string, mutate func(map[string]any, Query)) Example {
	return Example{Rule: rule, Operation: op, Field: field, Query: ExampleQuery(op), Mutate: mutate}
}

// echoExamples answer with another id than the request named.
func echoExamples() []Example {
	ex := newExample
	return []Example{
		ex(PathStoreID, OpGetStore, "/store_id", func(b map[string]any, q Query) { b["store_id"] = other(q.StoreID, "8") }),
		ex(PathStoreID, OpGetInventory, "/store_id", func(b map[string]any, q Query) { b["store_id"] = other(q.StoreID, "8") }),
		ex(PathSKU, OpGetInventory, "/sku", func(b map[string]any, q Query) { b["sku"] = other(q.SKU, "1234567") }),
		ex(PathSKU, OpGetSKU, "/sku", func(b map[string]any, q Query) { b["sku"] = other(q.SKU, "1234567") }),
		ex(PathSupplierID, OpGetSupplier, "/supplier_id", func(b map[string]any, q Query) {
			b["supplier_id"] = other(q.SupplierID, "SUP-ELSEWHERE")
		}),
		ex(PathOrderID, OpGetOrder, "/order_id", func(b map[string]any, q Query) { b["order_id"] = other(q.OrderID, "RO-ELSEWHERE-1") }),
	}
}

// storeExamples break the store list's order, a timezone or opening hours.
func storeExamples() []Example {
	ex := newExample
	return []Example{
		ex(StoresOrder, OpListStores, "/stores/1/store_id", func(b map[string]any, _ Query) {
			// The list's first two stores swapped: 210 before 47 (a list
			// of one gets a second store to swap).
			stores, _ := b["stores"].([]any)
			if len(stores) < 2 {
				stores = append(stores, map[string]any{"store_id": "999998", "name": "Example", "timezone": "Europe/Prague"})
			}
			stores[0], stores[1] = stores[1], stores[0]
			b["stores"] = stores
		}),
		ex(StoreTimezone, OpGetStore, "/timezone", func(b map[string]any, _ Query) { b["timezone"] = "Mars/Olympus_Mons" }),
		ex(StoreTimezone, OpListStores, "/stores/0/timezone", func(b map[string]any, _ Query) {
			if stores, _ := b["stores"].([]any); len(stores) > 0 {
				if s, ok := stores[0].(map[string]any); ok {
					s["timezone"] = "Mars/Olympus_Mons"
				}
			}
		}),
		ex(StoreHoursFormat, OpGetStore, "/opening_hours/monday/opens", setDay("monday", day("7:00", "22:00"))),
		ex(StoreHoursOpen, OpGetStore, "/opening_hours/monday", setDay("monday", map[string]any{"closed": false, "opens": "07:00"})),
		ex(StoreHoursClosed, OpGetStore, "/opening_hours/sunday", setDay("sunday", map[string]any{"closed": true, "opens": "08:00", "closes": "20:00"})),
		ex(StoreHoursOrder, OpGetStore, "/opening_hours/monday", setDay("monday", day("20:59", "09:11"))),
	}
}

// inventoryExamples break the stock count or its time.
func inventoryExamples() []Example {
	ex := newExample
	return []Example{
		ex(InventoryRange, OpGetInventory, "/on_hand_units", func(b map[string]any, _ Query) { b["on_hand_units"] = 2000000 }),
		ex(InventoryCountedAt, OpGetInventory, "/counted_at", func(b map[string]any, q Query) {
			b["counted_at"] = rfc3339(q.Now.Add(time.Hour))
		}),
	}
}

// posExamples break a POS page.
func posExamples() []Example {
	ex := newExample
	cursor := ex(POSCursor, OpListPOS, "/next_cursor", posCursorLoop)
	cursor.Query.Cursor = "c2luY2U9MTcwMDAwMDAwMA"
	return []Example{
		ex(POSWindow, OpListPOS, "/transactions/0/timestamp", posBeforeWindow),
		ex(POSOrder, OpListPOS, "/transactions/1/timestamp", posOldestFirst),
		ex(POSSince, OpListPOS, "/since", func(b map[string]any, q Query) {
			b["since"] = rfc3339(q.Since.Add(-time.Hour))
		}),
		ex(POSUnits, OpListPOS, "/transactions/0/units", func(b map[string]any, q Query) {
			if tx, ok := transactions(b, q)[0].(map[string]any); ok {
				tx["units"] = 0
			}
		}),
		ex(POSTotalCount, OpListPOS, "/total_count", func(b map[string]any, q Query) {
			b["total_count"] = len(transactions(b, q)) - 1
		}),
		cursor,
		ex(POSLimit, OpListPOS, "/transactions", posOverLimit),
	}
}

// posBeforeWindow dates every line from 1905: still newest first, all
// before since.
func posBeforeWindow(b map[string]any, q Query) {
	for i, t := range transactions(b, q) {
		if tx, ok := t.(map[string]any); ok {
			tx["timestamp"] = rfc3339(time.Date(1905, 3, 1, 10, 0, 0, 0, time.UTC).Add(-time.Duration(i) * time.Minute))
		}
	}
}

// posOldestFirst leaves two lines inside the window, oldest first.
func posOldestFirst(b map[string]any, q Query) {
	base := q.Since.Truncate(time.Second)
	if !q.Now.IsZero() && q.Now.Sub(base) > 2*time.Hour {
		base = q.Now.Add(-2 * time.Hour).Truncate(time.Second)
	}
	b["transactions"] = []any{
		map[string]any{"transaction_id": "T-EXAMPLE-1", "timestamp": rfc3339(base.Add(10 * time.Minute)), "units": 1},
		map[string]any{"transaction_id": "T-EXAMPLE-2", "timestamp": rfc3339(base.Add(20 * time.Minute)), "units": 1},
	}
	b["total_count"] = max(number(b["total_count"]), 2)
}

// posCursorLoop makes the page's next cursor the one that fetched it,
// keeping only its oldest line; a first page is left alone.
func posCursorLoop(b map[string]any, q Query) {
	if q.Cursor == "" {
		return
	}
	b["next_cursor"] = q.Cursor
	txs := transactions(b, q)
	b["transactions"] = txs[len(txs)-1:]
}

// posOverLimit pads the page to one line over the limit with copies of its
// oldest line.
func posOverLimit(b map[string]any, q Query) {
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPOSLimit
	}
	txs := transactions(b, q)
	last, _ := txs[len(txs)-1].(map[string]any)
	for i := len(txs); i <= limit; i++ {
		line := map[string]any{}
		for k, v := range last {
			line[k] = v
		}
		line["transaction_id"] = fmt.Sprintf("T-EXAMPLE-LIMIT-%d", i)
		txs = append(txs, line)
	}
	b["transactions"] = txs
	b["total_count"] = max(number(b["total_count"]), int64(len(txs)))
}

// catalogueExamples break a SKU or a supplier.
func catalogueExamples() []Example {
	ex := newExample
	return []Example{
		ex(SKURange, OpGetSKU, "/case_pack", func(b map[string]any, _ Query) { b["case_pack"] = 0 }),
		ex(SupplierRange, OpGetSupplier, "/lead_time_days", func(b map[string]any, _ Query) { b["lead_time_days"] = -1 }),
		ex(SupplierCutoff, OpGetSupplier, "/order_cutoff_local", func(b map[string]any, _ Query) { b["order_cutoff_local"] = "14h00" }),
	}
}

// orderExamples break an order.
func orderExamples() []Example {
	ex := newExample
	return []Example{
		ex(OrderStatus, OpGetOrder, "/status", func(b map[string]any, _ Query) { b["status"] = "lost" }),
		ex(OrderRange, OpGetOrder, "/quantity_units", func(b map[string]any, _ Query) { b["quantity_units"] = 0 }),
		ex(OrderReadBack, OpCreateOrder, "/quantity_units", func(b map[string]any, _ Query) {
			// The 24 units for a 12-unit request: twice what was raised.
			b["quantity_units"] = number(b["quantity_units"]) * 2
		}),
	}
}
