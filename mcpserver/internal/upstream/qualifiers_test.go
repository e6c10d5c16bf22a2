package upstream

import (
	"context"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
)

// contractTypes are the generated types of the resources domain.Sources
// paths start with.
var contractTypes = map[string]reflect.Type{
	"store": reflect.TypeFor[sl.Store](), "inventory": reflect.TypeFor[sl.Inventory](), "pos": reflect.TypeFor[sl.POSPage](),
	"sku": reflect.TypeFor[sl.SKU](), "supplier": reflect.TypeFor[sl.Supplier](), "order": reflect.TypeFor[sl.Order](),
}

// TestTheTableNamesContractFields: every field of domain.Sources is a
// property of the contract's answer, so no entry matches nothing.
func TestTheTableNamesContractFields(t *testing.T) {
	for _, s := range domain.Sources {
		if strings.HasPrefix(s.Name, "GET ") {
			continue
		}
		parts := strings.Split(s.Name, ".")
		typ, ok := contractTypes[parts[0]]
		if !ok {
			t.Errorf("%s: no resource %q", s.Name, parts[0])
			continue
		}
	walk:
		for _, name := range parts[1:] {
			for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice {
				typ = typ.Elem()
			}
			for i := range typ.NumField() {
				if tag, _, _ := strings.Cut(typ.Field(i).Tag.Get("json"), ","); tag == name {
					typ = typ.Field(i).Type
					continue walk
				}
			}
			t.Errorf("%s: the contract's %s has no property %q", s.Name, typ.Name(), name)
			break
		}
	}
}

const storeNoHours = `{"store_id":"47","name":"Praha","timezone":"Europe/Prague"}`

// TestMissingQualifiersAreUnknown: an answer without a qualifier, or with
// it renamed, is taken with the qualifier unknown and empty, never zero.
func TestMissingQualifiersAreUnknown(t *testing.T) {
	for _, tc := range []struct {
		name, body, want string
		call             func(*Client, context.Context) (domain.Unknown, error)
	}{
		{"store without hours", storeNoHours, "store.opening_hours", func(c *Client, ctx context.Context) (domain.Unknown, error) {
			st, err := c.Store(ctx, "47")
			if st.Name != "Praha" || st.Timezone != "Europe/Prague" || st.Hours != ([7]domain.DayHours{}) {
				return nil, apperr.New(apperr.InternalError, "store "+st.Name, "")
			}
			return st.Unknown, err
		}},
		{"store with renamed hours", `{"store_id":"47","name":"Praha","timezone":"Europe/Prague","openingHours":{}}`, "store.opening_hours",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				st, err := c.Store(ctx, "47")
				return st.Unknown, err
			}},
		{"store without name", `{"store_id":"47","timezone":"Europe/Prague","opening_hours":{"monday":{"closed":true},"tuesday":{"closed":true},` +
			`"wednesday":{"closed":true},"thursday":{"closed":true},"friday":{"closed":true},"saturday":{"closed":true},"sunday":{"closed":true}}}`, "store.name",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				st, err := c.Store(ctx, "47")
				if st.Name != "" || !st.Hours[time.Monday].Closed {
					return nil, apperr.New(apperr.InternalError, "store", "")
				}
				return st.Unknown, err
			}},
		{"supplier without lead time", `{"supplier_id":"SUP-1","name":"M","minimum_order_units":12}`, "supplier.lead_time_days",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				sup, err := c.Supplier(ctx, "47", "SUP-1")
				if sup.LeadTimeDays != -1 || sup.MinimumOrderUnit != 12 {
					return nil, apperr.New(apperr.InternalError, "supplier", "")
				}
				return sup.Unknown, err
			}},
		// On a strict route too: the property can only stand for the lead time.
		{"supplier with lead time in hours", `{"supplier_id":"SUP-1","name":"M","minimum_order_units":12,"lead_time_hours":48}`, "supplier.lead_time_days",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				sup, err := c.Supplier(ctx, "47", "SUP-1")
				if err == nil && sup.LeadTimeDays != -1 {
					return nil, apperr.New(apperr.InternalError, "a lead time in hours read as days", "")
				}
				return sup.Unknown, err
			}},
		{"count without time", `{"store_id":"47","sku":"8847291","on_hand_units":5}`, "inventory.counted_at",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				inv, err := c.Inventory(ctx, "47", "8847291")
				if inv.OnHand != 5 || !inv.CountedAt.IsZero() {
					return nil, apperr.New(apperr.InternalError, "inventory", "")
				}
				return inv.Unknown, err
			}},
		// Unreadable: of another type, or a time without an offset.
		{"lead time of another type", `{"supplier_id":"SUP-1","name":"M","lead_time_days":"2 days","minimum_order_units":12}`, "supplier.lead_time_days",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				sup, err := c.Supplier(ctx, "47", "SUP-1")
				if err == nil && (sup.LeadTimeDays != -1 || sup.MinimumOrderUnit != 12 || sup.Name != "M") {
					return nil, apperr.New(apperr.InternalError, "supplier", "")
				}
				return sup.Unknown, err
			}},
		{"count time without offset", `{"store_id":"47","sku":"8847291","on_hand_units":5,"counted_at":"2026-11-27T06:00:00"}`, "inventory.counted_at",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				inv, err := c.Inventory(ctx, "47", "8847291")
				if err == nil && (inv.OnHand != 5 || !inv.CountedAt.IsZero()) {
					return nil, apperr.New(apperr.InternalError, "inventory", "")
				}
				return inv.Unknown, err
			}},
		{"hours of another type", `{"store_id":"47","name":"Praha","timezone":"Europe/Prague","opening_hours":"Mo-Sa 07:00-22:00"}`, "store.opening_hours",
			func(c *Client, ctx context.Context) (domain.Unknown, error) {
				st, err := c.Store(ctx, "47")
				if err == nil && st.Name != "Praha" {
					return nil, apperr.New(apperr.InternalError, "store", "")
				}
				return st.Unknown, err
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, logs := newClient(t, answering(t, 200, nil, tc.body), keys47(), nil)
			unknown, err := tc.call(c, callid.With(context.Background(), "call-q"))
			if err != nil || !unknown.Has(tc.want) {
				t.Fatalf("got %v, unknown %v; want the answer with %s unknown", err, unknown, tc.want)
			}
			if strings.Contains(logs.String(), "upstream.contract_error") {
				t.Errorf("a qualifier was logged as a contract error:\n%s", logs)
			}
		})
	}
}

// TestAPropertyThatMayBeADecisionIsRefused: an unknown property that may
// stand for the absent lead time or minimum order is refused.
func TestAPropertyThatMayBeADecisionIsRefused(t *testing.T) {
	c, _ := newClient(t, answering(t, 200, nil, `{"supplier_id":"SUP-1","name":"M","terms":7}`), keys47(), nil)
	sup, err := c.Supplier(context.Background(), "47", "SUP-1")
	ae := apperr.From(err)
	if ae == nil || ae.Code != apperr.UpstreamContractError || !strings.Contains(ae.Message, "supplier.minimum_order_units") {
		t.Fatalf("supplier %+v, error %v: want UPSTREAM_CONTRACT_ERROR naming the minimum", sup, err)
	}
}

// TestABrokenDecisionFieldBesideAnUnknownQualifierIsRefused: a qualifier's
// leniency never lets a decision field's break through.
func TestABrokenDecisionFieldBesideAnUnknownQualifierIsRefused(t *testing.T) {
	c, _ := newClient(t, answering(t, 200, nil, `{"store_id":"47","sku":"8847291","counted_at":"2026-11-27T06:00:00+01:00"}`), keys47(), nil)
	_, err := c.Inventory(context.Background(), "47", "8847291")
	if ae := apperr.From(err); ae == nil || !strings.Contains(ae.Message, "inventory.on_hand_units: required but missing (rule schema.required)") ||
		len(ae.Broken) != 1 {
		t.Fatalf("got %v (broken %v)", err, ae.Broken)
	}
}

// TestUnreadableDecisionFieldIsRefusedBesideAnUnreadableQualifier: an
// on-hand count of another type is refused even beside a bad qualifier.
func TestUnreadableDecisionFieldIsRefusedBesideAnUnreadableQualifier(t *testing.T) {
	c, _ := newClient(t, answering(t, 200, nil, `{"store_id":"47","sku":"8847291","on_hand_units":"five","counted_at":"yesterday"}`), keys47(), nil)
	inv, err := c.Inventory(context.Background(), "47", "8847291")
	if ae := apperr.From(err); ae == nil || ae.Code != apperr.UpstreamContractError {
		t.Fatalf("inventory %+v, error %v: want UPSTREAM_CONTRACT_ERROR", inv, err)
	}
}
