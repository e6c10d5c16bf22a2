package replenish

import (
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// The tolerance for StoreLink's clock, at its exact edge: an order dated
// resolveClockSkew before its entry may be the entry's order; one dated a
// nanosecond earlier may not.
func TestCheckFoundOrderClockSkewEdge(t *testing.T) {
	created := time.Date(2026, 11, 27, 13, 30, 0, 0, time.UTC)
	e := state.Entry{IdempotencyKey: "k", StoreID: "47", SKU: "8847291", QuantityUnits: 24, CreatedAt: created}
	o := domain.Order{ID: "RO-47-001000", StoreID: "47", SKU: "8847291", QuantityUnits: 24}
	for _, tc := range []struct {
		submitted time.Time
		ok        bool
	}{
		{created.Add(time.Hour), true},
		{created, true},
		{created.Add(-resolveClockSkew), true},
		{created.Add(-resolveClockSkew - time.Nanosecond), false},
		{created.Add(-29 * time.Hour), false},
		{time.Time{}, false}, // no submission time at all is no evidence
	} {
		o.SubmittedAt = tc.submitted
		err := checkFoundOrder(e, o)
		if (err == nil) != tc.ok {
			t.Errorf("submitted %s before the entry: err = %v, want ok=%v", created.Sub(tc.submitted), err, tc.ok)
		}
		if err != nil && !strings.Contains(err.Error(), "before the entry was created") {
			t.Errorf("refusal does not say why: %v", err)
		}
	}
}

// Every disagreeing field is named, each with both values.
func TestCheckFoundOrderNamesEachMismatch(t *testing.T) {
	created := time.Date(2026, 11, 27, 13, 30, 0, 0, time.UTC)
	e := state.Entry{StoreID: "47", SKU: "8847291", QuantityUnits: 24, CreatedAt: created}
	o := domain.Order{ID: "RO-102-001000", StoreID: "102", SKU: "8800101", QuantityUnits: 25, SubmittedAt: created}
	err := checkFoundOrder(e, o)
	for _, want := range []string{"its store is 102, the entry's is 47", "its SKU is 8800101, the entry's is 8847291", "it is for 25 unit(s), the entry for 24", "nothing changed"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("err = %v; want it to say %q", err, want)
		}
	}
}
