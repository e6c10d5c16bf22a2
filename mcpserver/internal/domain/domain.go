// Package domain holds the StoreLink facts the MCP server reasons about, in
// its own vocabulary. It must not depend on HTTP or the generated client.
package domain

import (
	"sync"
	"time"
)

// DayHours is one weekday's opening hours in store-local minutes after midnight.
type DayHours struct {
	Closed bool
	Opens  int
	Closes int
}

// Store is one store with its timezone and weekly opening hours.
type Store struct {
	ID       string
	Name     string
	Timezone string
	// Hours is indexed by time.Weekday; meaningless when Unknown has
	// store.opening_hours.
	Hours [7]DayHours
	// Unknown lists the qualifiers StoreLink left out or sent unreadable.
	Unknown Unknown
}

// Inventory is the last on-hand count of a SKU at a store.
type Inventory struct {
	OnHand int64
	// CountedAt is zero when Unknown has inventory.counted_at.
	CountedAt time.Time
	Unknown   Unknown
}

// Sale is one point-of-sale transaction line.
type Sale struct {
	TransactionID string
	At            time.Time
	Units         int64
}

// SalesPage is a bounded, newest-first slice of a SKU's sales since a time.
type SalesPage struct {
	Items []Sale
	// Total is the matching transactions StoreLink reports; it may exceed
	// len(Items) when the walk stopped at its bound.
	Total     int64
	Truncated bool
	// Unknown lists the qualifiers of any page left out or unreadable.
	Unknown Unknown
}

// SKU is a SKU's master data.
type SKU struct {
	Code          string
	Name          string
	Category      string
	SupplierID    string
	Unit          string
	CasePack      int64
	Chilled       bool
	ShelfLifeDays int64 // 0 when StoreLink gives none
	Unknown       Unknown
}

// Supplier is a supplier and its delivery terms.
type Supplier struct {
	ID               string
	Name             string
	LeadTimeDays     int
	OrderCutoff      *int // minutes after local midnight, nil when unknown
	MinimumOrderUnit int64
	// Unknown has supplier.lead_time_days when LeadTimeDays is not known.
	Unknown Unknown
}

// Order is a replenishment order as StoreLink reports it.
type Order struct {
	ID              string
	StoreID         string
	SKU             string
	QuantityUnits   int64
	Reason          string
	Status          OrderStatus
	SubmittedAt     time.Time
	ExpectedArrival time.Time
	Unknown         Unknown
}

// OrderRequest is what the server asks StoreLink to raise.
type OrderRequest struct {
	SKU           string `json:"sku"`
	QuantityUnits int64  `json:"quantity_units"`
	Reason        string `json:"reason"`
}

// OrderStatus is where StoreLink says an order is. The upstream client
// refuses any value outside OrderStatuses.
type OrderStatus string

// StoreLink's order statuses, in the order of an order's life.
const (
	OrderSubmitted    OrderStatus = "submitted"
	OrderAcknowledged OrderStatus = "acknowledged"
	OrderShipped      OrderStatus = "shipped"
	OrderDelivered    OrderStatus = "delivered"
	OrderRejected     OrderStatus = "rejected"
	OrderCancelled    OrderStatus = "cancelled"
)

// OrderStatuses lists every order status of the contract.
func OrderStatuses() []OrderStatus {
	return []OrderStatus{OrderSubmitted, OrderAcknowledged, OrderShipped, OrderDelivered, OrderRejected, OrderCancelled}
}

// Open reports whether goods are still expected after this status.
func (s OrderStatus) Open() bool {
	return s == OrderSubmitted || s == OrderAcknowledged || s == OrderShipped
}

var locations sync.Map // IANA name -> *time.Location

// Location returns the named IANA time zone, loaded once per process.
func Location(name string) (*time.Location, error) {
	if l, ok := locations.Load(name); ok {
		return l.(*time.Location), nil
	}
	l, err := time.LoadLocation(name)
	if err != nil {
		return nil, err
	}
	locations.Store(name, l)
	return l, nil
}
