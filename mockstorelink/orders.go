package mockstorelink

import (
	"fmt"
	"sync"
	"time"

	"github.com/korral/storelink/mockstorelink/internal/api"
)

// Order life cycle: how long after submission an order is acknowledged. It
// ships halfway to its expected arrival and is delivered at that arrival.
const acknowledgeAfter = 10 * time.Minute

// firstOrderNumber numbers the first order raised through the API; the
// fixture orders use smaller numbers so the two never collide.
const firstOrderNumber = 1000

type orderEntry struct {
	order api.Order
	// fixed is a terminal status set by the fixture; "" follows the clock.
	fixed api.OrderStatus
}

// statusAt derives an order's status from the clock, so a test that moves
// its fake clock watches the order travel.
func (e *orderEntry) statusAt(now time.Time) api.OrderStatus {
	if e.fixed != "" {
		return e.fixed
	}
	o := e.order
	ack := o.SubmittedAt.Add(acknowledgeAfter)
	ship := o.SubmittedAt.Add(o.ExpectedArrival.Sub(o.SubmittedAt) / 2)
	if ship.Before(ack) {
		ship = ack
	}
	deliver := o.ExpectedArrival
	if deliver.Before(ship) {
		deliver = ship
	}
	switch {
	case !now.Before(deliver):
		return api.OrderStatusDelivered
	case !now.Before(ship):
		return api.OrderStatusShipped
	case !now.Before(ack):
		return api.OrderStatusAcknowledged
	default:
		return api.OrderStatusSubmitted
	}
}

// orderBook holds every order of the world, in creation order.
type orderBook struct {
	mu      sync.Mutex
	entries []*orderEntry
	byID    map[string]*orderEntry
	next    int
}

func newOrderBook(w *world, start time.Time) *orderBook {
	b := &orderBook{byID: map[string]*orderEntry{}, next: firstOrderNumber}
	anchor := start.Truncate(time.Minute)
	smichov, brno := w.stores[StoreSmichov], w.stores[StoreBrno] // fixtures: always there

	openAt := anchor.Add(-30 * time.Hour).In(smichov.loc)
	b.add(&orderEntry{order: api.Order{
		OrderID:         OrderOpen,
		StoreID:         StoreSmichov,
		SKU:             SKUSteady,
		QuantityUnits:   48,
		Reason:          "Weekend promotion: stock up before Saturday.",
		SubmittedAt:     openAt,
		ExpectedArrival: openAt.AddDate(0, 0, int(w.suppliers[SupplierKofola].leadTimeDays)),
	}})
	rejectedAt := anchor.Add(-50 * time.Hour).In(brno.loc)
	b.add(&orderEntry{order: api.Order{
		OrderID:         OrderRejected,
		StoreID:         StoreBrno,
		SKU:             SKUMinimumOrder,
		QuantityUnits:   96,
		Reason:          "Heatwave forecast.",
		SubmittedAt:     rejectedAt,
		ExpectedArrival: rejectedAt.AddDate(0, 0, int(w.suppliers[SupplierAqua].leadTimeDays)),
	}, fixed: api.OrderStatusRejected})
	return b
}

func (b *orderBook) add(e *orderEntry) {
	b.entries = append(b.entries, e)
	b.byID[e.order.OrderID] = e
}

// create raises a new order; the caller has checked the business rules.
func (b *orderBook) create(st *store, skuCode string, quantity int64, reason string, sup *supplier, now time.Time) api.Order {
	b.mu.Lock()
	defer b.mu.Unlock()
	submitted := now.Truncate(time.Second).In(st.loc)
	e := &orderEntry{order: api.Order{
		OrderID:         fmt.Sprintf("RO-%s-%06d", st.id, b.next),
		StoreID:         st.id,
		SKU:             skuCode,
		QuantityUnits:   quantity,
		Reason:          reason,
		SubmittedAt:     submitted,
		ExpectedArrival: st.deliveryAt(submitted, sup.leadTimeDays, sup.cutoff),
	}}
	b.next++
	b.add(e)
	o := e.order
	o.Status = e.statusAt(now)
	return o
}

// get returns an order as seen through one store's key: another store's
// order does not exist.
func (b *orderBook) get(storeID, orderID string, now time.Time) (api.Order, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e, ok := b.byID[orderID]
	if !ok || e.order.StoreID != storeID {
		return api.Order{}, false
	}
	o := e.order
	o.Status = e.statusAt(now)
	return o, true
}

func (b *orderBook) all(now time.Time) []api.Order {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]api.Order, len(b.entries))
	for i, e := range b.entries {
		out[i] = e.order
		out[i].Status = e.statusAt(now)
	}
	return out
}

// deliveryAt is when an order submitted at t arrives: lead-time days after
// t (the next day after the cut-off), at opening time on a trading day.
func (st *store) deliveryAt(t time.Time, leadDays int64, cutoff string) time.Time {
	local := t.In(st.loc)
	day := time.Date(local.Year(), local.Month(), local.Day(), 0, 0, 0, 0, st.loc)
	if cutoff != "" {
		var hh, mm int
		if _, err := fmt.Sscanf(cutoff, "%d:%d", &hh, &mm); err == nil && local.Hour()*60+local.Minute() >= hh*60+mm {
			day = day.AddDate(0, 0, 1)
		}
	}
	day = day.AddDate(0, 0, int(leadDays))
	for i := 0; i < 7; i++ {
		h := st.week[day.Weekday()]
		if !h.closed {
			open := time.Date(day.Year(), day.Month(), day.Day(), h.open/60, h.open%60, 0, 0, st.loc)
			if open.After(t) {
				return open
			}
		}
		day = day.AddDate(0, 0, 1)
	}
	return t.AddDate(0, 0, int(leadDays)) // a store closed all week: no better answer
}
