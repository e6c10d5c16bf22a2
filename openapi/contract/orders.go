package contract

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
)

// FindingOrderRaised: StoreLink accepted a write it must refuse, raising an
// order; the details and OrdersCreated name it.
const FindingOrderRaised = "order-raised"

// CreatedOrder is an order a check or replay left at StoreLink: an
// accepted write, or an unanswered one.
type CreatedOrder struct {
	// OrderID is the id StoreLink answered with; "" when the answer
	// named none the check could read, or there was no answer.
	OrderID string `json:"order_id,omitempty"`
	// StoreID is the store of the request's path.
	StoreID string `json:"store_id"`
	// Request is the method and path sent.
	Request string `json:"request"`
	// Probe names the probe or generated case that sent it.
	Probe string `json:"probe"`
	// Status is StoreLink's answer; 0 when none came.
	Status int `json:"status,omitempty"`
	// Intended is set for the one order the check means to raise (the
	// positive write probe, or a valid generated write); a negative probe
	// StoreLink should have refused leaves it unset.
	Intended bool `json:"intended"`
}

// String names the order in one line, for the table, JUnit and stderr.
func (o CreatedOrder) String() string {
	id := o.OrderID
	switch {
	case o.Status == 0:
		id = "an order StoreLink may have raised (the write got no answer; look for it among the store's orders)"
	case id == "":
		id = fmt.Sprintf("an order whose id the answer (%d) does not name", o.Status)
	default:
		id = "order " + id
	}
	s := fmt.Sprintf("%s at store %s, by %q (%s", id, o.StoreID, o.Probe, o.Request)
	if o.Status != 0 {
		s += fmt.Sprintf(", %d", o.Status)
	}
	s += ")"
	if !o.Intended && o.Status != 0 {
		s += ": a request StoreLink must refuse"
	}
	return s
}

// raisesOrders reports whether a request could raise an order: any method
// but GET on the write's path. target may carry a query.
func (r *runner) raisesOrders(method, target string) bool {
	if method == http.MethodGet {
		return false
	}
	op, ok := r.spec.ops[opCreateOrder]
	if !ok {
		return false
	}
	path, _, _ := strings.Cut(target, "?")
	want, got := strings.Split(op.path, "/"), strings.Split(path, "/")
	if len(want) != len(got) {
		return false
	}
	for i, seg := range want {
		if !strings.HasPrefix(seg, "{") && seg != got[i] {
			return false
		}
	}
	return true
}

// writeHeld says why a write is not sent (Config.MaxOrders reached); ""
// lets it through.
func (r *runner) writeHeld(method, target string) string {
	if !r.raisesOrders(method, target) || len(r.orders) < r.cfg.MaxOrders {
		return ""
	}
	names := make([]string, len(r.orders))
	for i, o := range r.orders {
		names[i] = o.String()
	}
	return fmt.Sprintf("not sent: the check leaves at most %d order(s) at StoreLink (--max-orders), and has left %s",
		r.cfg.MaxOrders, strings.Join(names, "; "))
}

// noteWrite records the order a write may have left (2xx or no answer);
// nil when nothing was left.
func (r *runner) noteWrite(method, target, store, probe string, status int, body []byte, intended bool) *CreatedOrder {
	if !r.raisesOrders(method, target) || (status != 0 && (status < 200 || status > 299)) {
		return nil
	}
	o := CreatedOrder{StoreID: store, Request: method + " " + target, Probe: probe, Status: status, Intended: intended}
	if status != 0 {
		o.OrderID = orderIDOf(r.spec, body)
	}
	r.orders = append(r.orders, o)
	return &r.orders[len(r.orders)-1]
}

// orderRaised is the finding of a negative write StoreLink accepted. Its
// message leaves out the id, so all such orders are one cause.
func orderRaised(o *CreatedOrder, due string) Finding {
	id := o.OrderID
	if id == "" {
		id = "(its id is not in the answer)"
	}
	return Finding{Kind: FindingOrderRaised,
		Message: fmt.Sprintf("StoreLink raised an order for a request it must refuse with %s", due),
		Details: []string{fmt.Sprintf("order %s at store %s is left at StoreLink: cancel it", id, o.StoreID)}}
}

// wantsSuccess reports whether a probe expects a 2xx among its statuses:
// a write probe that means to raise an order.
func wantsSuccess(expect []int) bool {
	return slices.ContainsFunc(expect, func(s int) bool { return s >= 200 && s <= 299 })
}

// dueOf says what a generated case of each kind must get.
func dueOf(c *Case) string {
	switch c.Expect {
	case expectInvalid:
		return "400"
	case expectUnauthenticated:
		return "401"
	case expectForbidden:
		return "403"
	}
	return "4xx"
}
