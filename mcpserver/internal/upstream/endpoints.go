package upstream

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	sl "github.com/korral/storelink/storelinkclient"
)

// Store returns one store with its opening hours.
func (c *Client) Store(ctx context.Context, storeID string) (domain.Store, error) {
	it := masterItem{kind: "store", route: "/v1/stores/{store_id}", storeID: storeID, id: storeID}
	return reuse(ctx, c, it, func(ctx context.Context) (domain.Store, error) { return c.fetchStore(ctx, storeID) })
}

func (c *Client) fetchStore(ctx context.Context, storeID string) (domain.Store, error) {
	v, err := call(ctx, c, "GET", "/v1/stores/{store_id}", storeID, func(ctx context.Context, key keyring.Key) (*sl.Store, error) {
		return sl.Result(c.api.GetStoreWithResponse(ctx, storeID, sl.WithStoreKey(key.Reveal())))
	})
	if err != nil {
		return domain.Store{}, err
	}
	st, convErr := convertStore(v)
	if convErr == nil {
		convErr = sameRecord("store.store_id", storeID, st.ID)
	}
	if convErr != nil {
		return domain.Store{}, c.fail(ctx, "GET", "/v1/stores/{store_id}", storeID, convErr)
	}
	return st, nil
}

// Inventory returns the last on-hand count of a SKU at a store.
func (c *Client) Inventory(ctx context.Context, storeID, sku string) (domain.Inventory, error) {
	v, err := call(ctx, c, "GET", "/v1/stores/{store_id}/inventory", storeID, func(ctx context.Context, key keyring.Key) (*sl.Inventory, error) {
		return sl.Result(c.api.GetInventoryWithResponse(ctx, storeID, &sl.GetInventoryParams{SKU: sku}, sl.WithStoreKey(key.Reveal())))
	})
	if err != nil {
		return domain.Inventory{}, err
	}
	return domain.Inventory{OnHand: v.OnHandUnits, CountedAt: v.CountedAt}, nil
}

// Sales walks the point-of-sale pages of a SKU at a store since a time, newest
// first, keeping at most max transactions. The walk is bounded in pages too;
// Truncated reports that more exist than were returned.
func (c *Client) Sales(ctx context.Context, storeID, sku string, since time.Time, max int) (domain.SalesPage, error) {
	var out domain.SalesPage
	var cursor *string
	seen := map[string]bool{}
	limit := c.pageSize
	for page := 0; ; page++ {
		if page == c.maxPages {
			out.Truncated = true
			return out, nil
		}
		v, err := call(ctx, c, "GET", "/v1/stores/{store_id}/pos", storeID, func(ctx context.Context, key keyring.Key) (*sl.POSPage, error) {
			params := &sl.ListPOSTransactionsParams{SKU: sku, Since: since, Limit: &limit, Cursor: cursor}
			return sl.Result(c.api.ListPOSTransactionsWithResponse(ctx, storeID, params, sl.WithStoreKey(key.Reveal())))
		})
		if err != nil {
			return domain.SalesPage{}, err
		}
		out.Total = v.TotalCount
		for _, t := range v.Transactions {
			if len(out.Items) == max {
				out.Truncated = true
				return out, nil
			}
			out.Items = append(out.Items, domain.Sale{TransactionID: t.TransactionID, At: t.Timestamp, Units: t.Units})
		}
		if v.NextCursor == nil {
			return out, nil
		}
		if seen[*v.NextCursor] {
			return domain.SalesPage{}, c.fail(ctx, "GET", "/v1/stores/{store_id}/pos", storeID,
				&fault{field: "pos.next_cursor", rule: "repeats a cursor already returned", err: fmt.Errorf("%w: %w", sl.ErrMalformedResponse, sl.ErrRepeatedCursor)})
		}
		seen[*v.NextCursor] = true
		cursor = v.NextCursor
	}
}

// SKU returns a SKU's master data, read with the key of storeID (any valid
// key may read the catalogue).
func (c *Client) SKU(ctx context.Context, storeID, sku string) (domain.SKU, error) {
	it := masterItem{kind: "sku", route: "/v1/skus/{sku}", storeID: storeID, id: sku}
	return reuse(ctx, c, it, func(ctx context.Context) (domain.SKU, error) { return c.fetchSKU(ctx, storeID, sku) })
}

func (c *Client) fetchSKU(ctx context.Context, storeID, sku string) (domain.SKU, error) {
	v, err := call(ctx, c, "GET", "/v1/skus/{sku}", storeID, func(ctx context.Context, key keyring.Key) (*sl.SKU, error) {
		return sl.Result(c.api.GetSKUWithResponse(ctx, sku, sl.WithStoreKey(key.Reveal())))
	})
	if err != nil {
		return domain.SKU{}, err
	}
	if err := sameRecord("sku.sku", sku, v.SKU); err != nil {
		return domain.SKU{}, c.fail(ctx, "GET", "/v1/skus/{sku}", storeID, err)
	}
	out := domain.SKU{Code: v.SKU, Name: v.Name, Category: v.Category, SupplierID: v.SupplierID,
		Unit: string(v.Unit), CasePack: v.CasePack, Chilled: v.Chilled}
	if v.ShelfLifeDays != nil {
		out.ShelfLifeDays = *v.ShelfLifeDays
	}
	return out, nil
}

// Supplier returns a supplier's delivery terms, read with the key of storeID.
func (c *Client) Supplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, error) {
	it := masterItem{kind: "supplier", route: "/v1/suppliers/{supplier_id}", storeID: storeID, id: supplierID}
	return reuse(ctx, c, it, func(ctx context.Context) (domain.Supplier, error) { return c.fetchSupplier(ctx, storeID, supplierID) })
}

func (c *Client) fetchSupplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, error) {
	v, err := call(ctx, c, "GET", "/v1/suppliers/{supplier_id}", storeID, func(ctx context.Context, key keyring.Key) (*sl.Supplier, error) {
		return sl.Result(c.api.GetSupplierWithResponse(ctx, supplierID, sl.WithStoreKey(key.Reveal())))
	})
	if err != nil {
		return domain.Supplier{}, err
	}
	if err := sameRecord("supplier.supplier_id", supplierID, v.SupplierID); err != nil {
		return domain.Supplier{}, c.fail(ctx, "GET", "/v1/suppliers/{supplier_id}", storeID, err)
	}
	out := domain.Supplier{ID: v.SupplierID, Name: v.Name, LeadTimeDays: int(v.LeadTimeDays)}
	if v.MinimumOrderUnits != nil {
		out.MinimumOrderUnit = *v.MinimumOrderUnits
	}
	if v.OrderCutoffLocal != nil {
		m, err := parseClock(*v.OrderCutoffLocal)
		if err != nil {
			return domain.Supplier{}, c.fail(ctx, "GET", "/v1/suppliers/{supplier_id}", storeID, malformed("supplier.order_cutoff_local", "not an HH:MM time"))
		}
		out.OrderCutoff = &m
	}
	return out, nil
}

// Order returns one replenishment order of a store.
func (c *Client) Order(ctx context.Context, storeID, orderID string) (domain.Order, error) {
	v, err := call(ctx, c, "GET", "/v1/stores/{store_id}/replenishment/{order_id}", storeID, func(ctx context.Context, key keyring.Key) (*sl.Order, error) {
		return sl.Result(c.api.GetReplenishmentOrderWithResponse(ctx, storeID, orderID, sl.WithStoreKey(key.Reveal())))
	})
	if err != nil {
		return domain.Order{}, err
	}
	if !v.Status.Valid() {
		return domain.Order{}, classify("GET", "/v1/stores/{store_id}/replenishment/{order_id}", undeclaredStatus(v), c.cooldown)
	}
	return convertOrder(v), nil
}

// CreateOrder raises a replenishment order. It is never retried blindly: a
// timeout or a broken answer is reported as WRITE_OUTCOME_UNKNOWN.
func (c *Client) CreateOrder(ctx context.Context, storeID string, req domain.OrderRequest) (domain.Order, error) {
	v, err := call(ctx, c, "POST", "/v1/stores/{store_id}/replenishment", storeID, func(ctx context.Context, key keyring.Key) (*sl.Order, error) {
		body := sl.OrderRequest{SKU: req.SKU, QuantityUnits: req.QuantityUnits, Reason: req.Reason}
		return sl.Result(c.api.CreateReplenishmentOrderWithResponse(ctx, storeID, body, sl.WithStoreKey(key.Reveal())))
	})
	if err != nil {
		return domain.Order{}, err
	}
	o := convertOrder(v)
	if !v.Status.Valid() {
		// StoreLink took the order and named it: that stands. Only its
		// status is unreadable, so it is left out rather than passed on
		// outside the set every answer's schema allows.
		o.Status = ""
	}
	return o, nil
}

// undeclaredStatus is the contract error of an order status outside the
// contract's set. Like every fault it names the field and the rule, not the
// value StoreLink sent.
func undeclaredStatus(*sl.Order) error {
	return malformed("order.status", "not one of the contract's order statuses")
}

func convertOrder(v *sl.Order) domain.Order {
	return domain.Order{ID: v.OrderID, StoreID: v.StoreID, SKU: v.SKU, QuantityUnits: v.QuantityUnits,
		Reason: v.Reason, Status: domain.OrderStatus(v.Status), SubmittedAt: v.SubmittedAt, ExpectedArrival: v.ExpectedArrival}
}

// convertStore checks what the projection relies on. Its errors name the
// field and the rule, never the value StoreLink sent.
func convertStore(v *sl.Store) (domain.Store, error) {
	if v.Timezone == "" {
		return domain.Store{}, malformed("store.timezone", "missing or empty")
	}
	if _, err := domain.Location(v.Timezone); err != nil {
		return domain.Store{}, malformed("store.timezone", "not an IANA time zone")
	}
	out := domain.Store{ID: v.StoreID, Name: v.Name, Timezone: v.Timezone}
	days := map[time.Weekday]sl.DayHours{
		time.Monday: v.OpeningHours.Monday, time.Tuesday: v.OpeningHours.Tuesday,
		time.Wednesday: v.OpeningHours.Wednesday, time.Thursday: v.OpeningHours.Thursday,
		time.Friday: v.OpeningHours.Friday, time.Saturday: v.OpeningHours.Saturday,
		time.Sunday: v.OpeningHours.Sunday,
	}
	for wd, d := range days {
		if d.Closed {
			out.Hours[wd] = domain.DayHours{Closed: true}
			continue
		}
		day := "store.opening_hours." + strings.ToLower(wd.String())
		if d.Opens == nil || d.Closes == nil {
			return domain.Store{}, malformed(day, "open but without opens and closes")
		}
		o, err1 := parseClock(*d.Opens)
		cl, err2 := parseClock(*d.Closes)
		switch {
		case err1 != nil:
			return domain.Store{}, malformed(day+".opens", "not an HH:MM time")
		case err2 != nil:
			return domain.Store{}, malformed(day+".closes", "not an HH:MM time")
		case o >= cl:
			return domain.Store{}, malformed(day, "opens at or after it closes")
		}
		out.Hours[wd] = domain.DayHours{Opens: o, Closes: cl}
	}
	return out, nil
}

// parseClock reads "HH:MM" as minutes after midnight.
func parseClock(s string) (int, error) {
	h, m, ok := strings.Cut(s, ":")
	hh, err1 := strconv.Atoi(h)
	mm, err2 := strconv.Atoi(m)
	if !ok || err1 != nil || err2 != nil || len(h) != 2 || len(m) != 2 || hh < 0 || hh > 23 || mm < 0 || mm > 59 {
		return 0, fmt.Errorf("not an HH:MM time: %q", s)
	}
	return hh*60 + mm, nil
}
