package replenish

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
)

// orders is a StoreLink's orders by id, or its failure.
type orders struct {
	held map[string]domain.Order
	err  error
}

func (o orders) Order(_ context.Context, storeID, orderID string) (domain.Order, error) {
	if o.err != nil {
		return domain.Order{}, o.err
	}
	if v, ok := o.held[orderID]; ok && v.StoreID == storeID {
		return v, nil
	}
	return domain.Order{}, apperr.New(apperr.NotFound, "no such order", "")
}

// TestConfirmOrdersReadsTheOrderBack: an accepted order is confirmed only
// when StoreLink holds it for the entry's store, SKU and quantity, dated
// after the entry; StoreLink's "no such order", another request, an older
// order or another StoreLink refuse it; a failing StoreLink is no answer.
func TestConfirmOrdersReadsTheOrderBack(t *testing.T) {
	created := time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)
	e := state.Entry{IdempotencyKey: "k", StoreID: "47", SKU: "8847291", QuantityUnits: 24, UpstreamID: "https://storelink.test", CreatedAt: created}
	sl := orders{held: map[string]domain.Order{
		"RO-47-1": {ID: "RO-47-1", StoreID: "47", SKU: "8847291", QuantityUnits: 24, SubmittedAt: created.Add(time.Second)},
		"RO-47-2": {ID: "RO-47-2", StoreID: "47", SKU: "8847291", QuantityUnits: 48, SubmittedAt: created.Add(time.Second)},
		"RO-47-3": {ID: "RO-47-3", StoreID: "47", SKU: "8847291", QuantityUnits: 24, SubmittedAt: created.Add(-time.Hour)},
	}}
	c := ConfirmOrders(sl, "https://storelink.test")
	ctx := context.Background()
	if err := c.ConfirmOrder(ctx, e, "RO-47-1"); err != nil {
		t.Fatalf("the entry's own order: %v", err)
	}
	for id, want := range map[string]string{
		"RO-47-FORGED1": "holds no order RO-47-FORGED1",
		"RO-47-2":       "it is for 48 unit(s), the entry for 24",
		"RO-47-3":       "before the entry was created",
	} {
		var not *journal.NotConfirmedError
		if err := c.ConfirmOrder(ctx, e, id); !errors.As(err, &not) || !strings.Contains(not.Reason, want) {
			t.Errorf("%s: %v, want a refusal with %q", id, err, want)
		}
	}
	var not *journal.NotConfirmedError
	if err := ConfirmOrders(sl, "https://other.test").ConfirmOrder(ctx, e, "RO-47-1"); !errors.As(err, &not) || !strings.Contains(not.Reason, "sent to the StoreLink at https://storelink.test") {
		t.Errorf("another StoreLink: %v", err)
	}
	down := ConfirmOrders(orders{err: apperr.New(apperr.UpstreamUnavailable, "connection refused", "")}, "https://storelink.test")
	if err := down.ConfirmOrder(ctx, e, "RO-47-1"); err == nil || errors.As(err, &not) || !strings.Contains(err.Error(), "UPSTREAM_UNAVAILABLE") {
		t.Errorf("StoreLink down: %v, want an error that is no refusal", err)
	}
}
