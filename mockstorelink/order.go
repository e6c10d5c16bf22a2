package mockstorelink

import "github.com/korral/storelink/mockstorelink/internal/api"

// Order is a replenishment order as [Server.Orders] lists it (the
// generated contract model).
type Order = api.Order

// OrderStatus is where an [Order] is in its life.
type OrderStatus = api.OrderStatus

// The statuses an [Order] can have.
const (
	OrderStatusAcknowledged = api.OrderStatusAcknowledged
	OrderStatusCancelled    = api.OrderStatusCancelled
	OrderStatusDelivered    = api.OrderStatusDelivered
	OrderStatusRejected     = api.OrderStatusRejected
	OrderStatusShipped      = api.OrderStatusShipped
	OrderStatusSubmitted    = api.OrderStatusSubmitted
)
