package rules

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
)

// CheckStoreList checks the chain's store list.
func CheckStoreList(v *sl.StoreList, q Query) []Finding {
	var fs findings
	// prev is the last store_id before this store, of the stores that have
	// one.
	prev, havePrev := "", false
	for i, s := range v.Stores {
		at := ptr(nStores) + "/" + strconv.Itoa(i)
		if id := at + ptr(nSummaryStoreID); q.sent(id) {
			if havePrev && StoreIDLess(s.StoreID, prev) {
				fs.add(StoresOrder, id, "before the store_id of the store before it")
			}
			prev, havePrev = s.StoreID, true
		}
		fs.timezone(q, s.Timezone, at+ptr(nSummaryTZ))
	}
	return fs.result()
}

// StoreIDLess orders store ids as numbers, as [StoresOrder] does ("047" is
// 47). Non-numeric ids come after numeric ones, in string order.
func StoreIDLess(a, b string) bool {
	na, nb := digitsOnly(a), digitsOnly(b)
	switch {
	case na && nb:
		a, b = strings.TrimLeft(a, "0"), strings.TrimLeft(b, "0")
		if len(a) != len(b) {
			return len(a) < len(b)
		}
		return a < b
	case na != nb:
		return na
	}
	return a < b
}

func digitsOnly(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}

// CheckStore checks one store and its opening hours. Absent days are not
// checked; a day without closed has only its times checked.
func CheckStore(v *sl.Store, q Query) []Finding {
	var fs findings
	fs.echo(q, PathStoreID, ptr(nStoreID), v.StoreID, q.StoreID, "store")
	fs.timezone(q, v.Timezone, ptr(nStoreTZ))
	for _, d := range Week(v.OpeningHours) {
		at := ptr(nHours) + ptr(d.Name)
		if !q.sent(at) {
			continue
		}
		h := d.Hours
		opens, closes := h.Opens, h.Closes
		if !q.sent(at + ptr(nOpens)) {
			opens = nil
		}
		if !q.sent(at + ptr(nCloses)) {
			closes = nil
		}
		if q.sent(at + ptr(nClosed)) {
			if h.Closed {
				if opens != nil || closes != nil {
					fs.add(StoreHoursClosed, at, "closed but with opening hours")
				}
				continue
			}
			if opens == nil || closes == nil {
				fs.add(StoreHoursOpen, at, "open but without opens and closes")
				continue
			}
		}
		var o, c int
		ok1, ok2 := true, true
		if opens != nil {
			o, ok1 = ParseClock(*opens)
		}
		if closes != nil {
			c, ok2 = ParseClock(*closes)
		}
		switch {
		case !ok1:
			fs.add(StoreHoursFormat, at+ptr(nOpens), "not an HH:MM time")
		case !ok2:
			fs.add(StoreHoursFormat, at+ptr(nCloses), "not an HH:MM time")
		case opens != nil && closes != nil && o >= c:
			fs.add(StoreHoursOrder, at, "opens at or after it closes")
		}
	}
	return fs.result()
}

// Day is one weekday's opening hours, named as the contract names it (the
// generated WeeklyHours' JSON name).
type Day struct {
	Name    string
	Weekday time.Weekday
	Hours   sl.DayHours
}

// Week lists a store's opening hours from Monday to Sunday.
func Week(w sl.WeeklyHours) []Day {
	return []Day{
		{nDays[0], time.Monday, w.Monday}, {nDays[1], time.Tuesday, w.Tuesday},
		{nDays[2], time.Wednesday, w.Wednesday}, {nDays[3], time.Thursday, w.Thursday},
		{nDays[4], time.Friday, w.Friday}, {nDays[5], time.Saturday, w.Saturday},
		{nDays[6], time.Sunday, w.Sunday},
	}
}

// CheckInventory checks an on-hand count.
func CheckInventory(v *sl.Inventory, q Query) []Finding {
	var fs findings
	fs.echo(q, PathStoreID, pInventoryStoreID, v.StoreID, q.StoreID, "store")
	fs.echo(q, PathSKU, pInventorySKU, v.SKU, q.SKU, "SKU")
	if at := pOnHand; q.sent(at) {
		fs.within("Inventory", nOnHand, at, v.OnHandUnits)
	}
	if at := pCountedAt; q.sent(at) && future(v.CountedAt, q) {
		fs.add(InventoryCountedAt, at, "in the future")
	}
	return fs.result()
}

// CheckPOSPage checks one page of POS transactions and records it in
// q.Walk. Times are compared to the second; absent units or timestamps are
// not checked.
func CheckPOSPage(v *sl.POSPage, q Query) []Finding {
	var fs findings
	fs.echo(q, PathStoreID, pPOSStoreID, v.StoreID, q.StoreID, "store")
	fs.echo(q, PathSKU, pPOSSKU, v.SKU, q.SKU, "SKU")
	since := q.Since.Truncate(time.Second)
	if at := pSince; !q.Since.IsZero() && q.sent(at) && !v.Since.Truncate(time.Second).Equal(since) {
		fs.add(POSSince, at, "not the since of the query")
	}
	limit := q.Limit
	if limit <= 0 {
		limit = DefaultPOSLimit
	}
	if len(v.Transactions) > limit {
		fs.add(POSLimit, pTransactions, "more transactions than the query's limit")
	}
	if at := pTotalCount; q.sent(at) && v.TotalCount < int64(len(v.Transactions)) {
		fs.add(POSTotalCount, at, "fewer than the transactions on the page")
	}
	w := q.Walk
	// newer is the time of the last line before this one that has a
	// timestamp, onPage whether it is on this page (not the walk's).
	var newer time.Time
	have, onPage := false, false
	if w != nil && w.pages > 0 && !w.oldest.IsZero() {
		newer, have = w.oldest, true
	}
	lacking := q.Absent.Within(pTransactions)
	// Looked up once for the page, not per line.
	units := bound("POSTransaction", nUnits)
	latest, checkFuture := q.Now.Add(ClockSkew), !q.Now.IsZero()
	for i, t := range v.Transactions {
		if q.sentLine(lacking, i, pUnits) && (t.Units < units.Min || t.Units > units.Max) {
			fs.add(units.Rule, line(i)+pUnits, fmt.Sprintf("outside %d to %d", units.Min, units.Max))
		}
		if !q.sentLine(lacking, i, pTimestamp) {
			continue
		}
		switch {
		case !q.Since.IsZero() && t.Timestamp.Before(since):
			fs.add(POSWindow, line(i)+pTimestamp, "before the query's since")
		case checkFuture && t.Timestamp.After(latest): // future, its bound made once
			fs.add(POSWindow, line(i)+pTimestamp, "in the future")
		}
		switch {
		case have && onPage && t.Timestamp.After(newer):
			fs.add(POSOrder, line(i)+pTimestamp, "newer than the transaction before it")
		case have && !onPage && t.Timestamp.After(newer):
			fs.add(POSOrder, line(i)+pTimestamp, "newer than the last transaction of the page before")
		}
		newer, have, onPage = t.Timestamp, true, true
	}
	if c := v.NextCursor; c != nil && q.sent(pNextCursor) && ((q.Cursor != "" && *c == q.Cursor) || (w != nil && w.cursors[*c])) {
		fs.add(POSCursor, pNextCursor, "repeats a cursor already returned")
	}
	if w != nil {
		w.record(v, q)
	}
	return fs.result()
}

// CheckSKU checks a SKU's master data.
func CheckSKU(v *sl.SKU, q Query) []Finding {
	var fs findings
	fs.echo(q, PathSKU, ptr(nSKUCode), v.SKU, q.SKU, "SKU")
	if at := ptr(nCasePack); q.sent(at) {
		fs.within("SKU", nCasePack, at, v.CasePack)
	}
	if at := ptr(nShelfLifeDays); v.ShelfLifeDays != nil && q.sent(at) {
		fs.within("SKU", nShelfLifeDays, at, *v.ShelfLifeDays)
	}
	return fs.result()
}

// CheckSupplier checks a supplier's delivery terms.
func CheckSupplier(v *sl.Supplier, q Query) []Finding {
	var fs findings
	fs.echo(q, PathSupplierID, ptr(nSupplierID), v.SupplierID, q.SupplierID, "supplier")
	if at := ptr(nLeadTimeDays); q.sent(at) {
		fs.within("Supplier", nLeadTimeDays, at, v.LeadTimeDays)
	}
	if at := ptr(nMinimumOrderUnits); v.MinimumOrderUnits != nil && q.sent(at) {
		fs.within("Supplier", nMinimumOrderUnits, at, *v.MinimumOrderUnits)
	}
	if at, c := ptr(nOrderCutoffLocal), v.OrderCutoffLocal; c != nil && q.sent(at) {
		if _, ok := ParseClock(*c); !ok {
			fs.add(SupplierCutoff, at, "not an HH:MM time")
		}
	}
	return fs.result()
}

// CheckOrder checks an order, as created (q.Raised is the request) or read
// (q.OrderID from the path).
func CheckOrder(v *sl.Order, q Query) []Finding {
	var fs findings
	fs.echo(q, PathStoreID, ptr(nOrderStoreID), v.StoreID, q.StoreID, "store")
	fs.echo(q, PathOrderID, ptr(nOrderID), v.OrderID, q.OrderID, "order")
	if at := ptr(nOrderStatus); q.sent(at) && !v.Status.Valid() {
		fs.add(OrderStatus, at, "not one of the contract's order statuses")
	}
	qtyAt, skuAt := ptr(nOrderQuantity), ptr(nOrderSKU)
	qty := q.sent(qtyAt)
	if qty {
		fs.within("Order", nOrderQuantity, qtyAt, v.QuantityUnits)
	}
	if r := q.Raised; r != nil {
		switch {
		case q.sent(skuAt) && v.SKU != r.SKU:
			fs.add(OrderReadBack, skuAt, "not the SKU the order was raised for")
		case qty && v.QuantityUnits != r.QuantityUnits:
			fs.add(OrderReadBack, qtyAt, "not the quantity the order was raised for")
		}
	}
	return fs.result()
}

// Check decodes a successful answer and checks it; absent fields (found in
// the body, replacing q.Absent) are not checked. It fails when the body
// does not decode.
func Check(operation string, body []byte, q Query) ([]Finding, error) {
	switch operation {
	case OpListStores:
		return judge(body, q, CheckStoreList)
	case OpGetStore:
		return judge(body, q, CheckStore)
	case OpGetInventory:
		return judge(body, q, CheckInventory)
	case OpListPOS:
		return judge(body, q, CheckPOSPage)
	case OpGetSKU:
		return judge(body, q, CheckSKU)
	case OpGetSupplier:
		return judge(body, q, CheckSupplier)
	case OpCreateOrder, OpGetOrder:
		return judge(body, q, CheckOrder)
	}
	return nil, fmt.Errorf("rules: no rules for operation %q", operation)
}

func judge[T any](body []byte, q Query, check func(*T, Query) []Finding) ([]Finding, error) {
	var v T
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, fmt.Errorf("rules: the body does not decode: %w", err)
	}
	q.Absent = sl.BodyFields(body, &v).Absent
	return check(&v, q), nil
}
