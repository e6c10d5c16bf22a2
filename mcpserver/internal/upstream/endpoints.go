package upstream

import (
	"context"
	"slices"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/keyring"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// Store returns one store with its opening hours.
func (c *Client) Store(ctx context.Context, storeID string) (domain.Store, error) {
	return reuse(ctx, c, storeItem(storeID), func(ctx context.Context) (domain.Store, error) { return c.fetchStore(ctx, storeID) })
}

func storeItem(storeID string) masterItem {
	return masterItem{kind: "store", route: "/v1/stores/{store_id}", storeID: storeID, id: storeID}
}

// CachedStore returns the store as Store would from the master-data cache,
// or false when the cache holds no live copy read with the store's key. It
// sends no request.
func (c *Client) CachedStore(ctx context.Context, storeID string) (domain.Store, bool) {
	return cached[domain.Store](ctx, c, storeItem(storeID))
}

func (c *Client) fetchStore(ctx context.Context, storeID string) (domain.Store, error) {
	ctx = about(ctx, subject{kind: "store"})
	var unknown domain.Unknown
	var absent sl.Absent
	v, err := call(ctx, c, "GET", "/v1/stores/{store_id}", storeID, func(ctx context.Context, key keyring.Key) (*sl.Store, error) {
		unknown, absent = nil, sl.Absent{}
		resp, err := c.api.GetStoreWithResponse(ctx, storeID, c.keyEditors.editor(key))
		return checked(ctx, c, "GET", "/v1/stores/{store_id}", storeID, resp, err, &absent, &unknown)
	})
	if err != nil {
		return domain.Store{}, err
	}
	found := c.qualifiersOnly(ctx, "/v1/stores/{store_id}", storeID, rules.CheckStore(v, rules.Query{StoreID: storeID, Absent: absent}), &unknown)
	st, convErr := convertStore(v, found, unknown)
	if convErr != nil {
		return domain.Store{}, c.fail(ctx, "GET", "/v1/stores/{store_id}", storeID, convErr)
	}
	return st, nil
}

// Inventory returns the last on-hand count of a SKU at a store.
func (c *Client) Inventory(ctx context.Context, storeID, sku string) (domain.Inventory, error) {
	ctx = about(ctx, subject{sku: sku})
	const route = "/v1/stores/{store_id}/inventory"
	var unknown domain.Unknown
	var absent sl.Absent
	v, err := call(ctx, c, "GET", route, storeID, func(ctx context.Context, key keyring.Key) (*sl.Inventory, error) {
		unknown, absent = nil, sl.Absent{}
		resp, err := c.api.GetInventoryWithResponse(ctx, storeID, &sl.GetInventoryParams{SKU: sku}, c.keyEditors.editor(key))
		return checked(ctx, c, "GET", route, storeID, resp, err, &absent, &unknown)
	})
	if err != nil {
		return domain.Inventory{}, err
	}
	found := c.qualifiersOnly(ctx, route, storeID, rules.CheckInventory(v, rules.Query{StoreID: storeID, SKU: sku, Now: c.now(), Absent: absent}), &unknown)
	if err := broken("inventory", found); err != nil {
		return domain.Inventory{}, c.fail(ctx, "GET", route, storeID, err)
	}
	out := domain.Inventory{OnHand: v.OnHandUnits, CountedAt: v.CountedAt, Unknown: unknown}
	if unknown.Has("inventory.counted_at") {
		out.CountedAt = time.Time{}
	}
	return out, nil
}

// MaxPOSPageSize is the contract's largest point-of-sale page
// (listPOSTransactions' limit); walks read at this size to save round trips.
const MaxPOSPageSize = 1000

// Sales walks the point-of-sale pages of a SKU at a store since a time,
// newest first, keeping at most max transactions and a bounded number of
// pages; Truncated reports that more exist.
func (c *Client) Sales(ctx context.Context, storeID, sku string, since time.Time, max int) (domain.SalesPage, error) {
	ctx = about(ctx, subject{sku: sku})
	var out domain.SalesPage
	var cursor *string
	// State for the rules that span pages: the oldest line so far and the
	// cursors already used.
	walk := &rules.Walk{}
	limit := c.pageSize
	for page := 0; ; page++ {
		if page == c.maxPages {
			out.Truncated = true
			return out, nil
		}
		var unknown domain.Unknown
		var absent sl.Absent
		v, err := call(ctx, c, "GET", "/v1/stores/{store_id}/pos", storeID, func(ctx context.Context, key keyring.Key) (*sl.POSPage, error) {
			unknown, absent = nil, sl.Absent{}
			params := &sl.ListPOSTransactionsParams{SKU: sku, Since: since, Limit: &limit, Cursor: cursor}
			if loc, ok := ctx.Value(zoneKey{}).(*time.Location); ok {
				// A StoreLink of local times is asked in them (ADR 0032).
				params.Since = since.In(loc)
			}
			resp, err := c.api.ListPOSTransactionsWithResponse(ctx, storeID, params, c.keyEditors.editor(key))
			return checked(ctx, c, "GET", "/v1/stores/{store_id}/pos", storeID, resp, err, &absent, &unknown)
		})
		if err != nil {
			return domain.SalesPage{}, err
		}
		q := rules.Query{StoreID: storeID, SKU: sku, Since: since, Limit: limit, Now: c.now(), Walk: walk, Absent: absent}
		if cursor != nil {
			q.Cursor = *cursor
		}
		found := c.qualifiersOnly(ctx, "/v1/stores/{store_id}/pos", storeID, rules.CheckPOSPage(v, q), &unknown)
		if err := broken("pos", found); err != nil {
			return domain.SalesPage{}, c.fail(ctx, "GET", "/v1/stores/{store_id}/pos", storeID, err)
		}
		out.Unknown = domain.Merge(out.Unknown, unknown)
		out.Total = v.TotalCount
		if out.Unknown.Has("pos.total_count") {
			// Unknown: the walk counts what it read instead.
			out.Total = -1
		}
		if n := len(v.Transactions); out.Items == nil {
			// The first page's lines in one allocation; later pages grow it.
			if max >= 0 && max < n {
				n = max
			}
			if n > 0 {
				out.Items = make([]domain.Sale, 0, n)
			}
		}
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
		cursor = v.NextCursor
	}
}

// SKU returns a SKU's master data, read with storeID's key (any valid key
// may read the catalogue).
func (c *Client) SKU(ctx context.Context, storeID, sku string) (domain.SKU, error) {
	return reuse(ctx, c, skuItem(storeID, sku), func(ctx context.Context) (domain.SKU, error) { return c.fetchSKU(ctx, storeID, sku) })
}

func skuItem(storeID, sku string) masterItem {
	return masterItem{kind: "sku", route: "/v1/skus/{sku}", storeID: storeID, id: sku}
}

// CachedSKU is SKU from the master-data cache alone (CachedStore).
func (c *Client) CachedSKU(ctx context.Context, storeID, sku string) (domain.SKU, bool) {
	return cached[domain.SKU](ctx, c, skuItem(storeID, sku))
}

func (c *Client) fetchSKU(ctx context.Context, storeID, sku string) (domain.SKU, error) {
	ctx = about(ctx, subject{kind: "catalog", sku: sku})
	var unknown domain.Unknown
	var absent sl.Absent
	v, err := call(ctx, c, "GET", "/v1/skus/{sku}", storeID, func(ctx context.Context, key keyring.Key) (*sl.SKU, error) {
		unknown, absent = nil, sl.Absent{}
		resp, err := c.api.GetSKUWithResponse(ctx, sku, c.keyEditors.editor(key))
		return checked(ctx, c, "GET", "/v1/skus/{sku}", storeID, resp, err, &absent, &unknown)
	})
	if err != nil {
		return domain.SKU{}, err
	}
	found := c.qualifiersOnly(ctx, "/v1/skus/{sku}", storeID, rules.CheckSKU(v, rules.Query{SKU: sku, Absent: absent}), &unknown)
	if err := broken("sku", found); err != nil {
		return domain.SKU{}, c.fail(ctx, "GET", "/v1/skus/{sku}", storeID, err)
	}
	out := domain.SKU{Code: v.SKU, Name: v.Name, Category: v.Category, SupplierID: v.SupplierID,
		Unit: string(v.Unit), CasePack: v.CasePack, Chilled: v.Chilled, Unknown: unknown}
	if v.ShelfLifeDays != nil && !unknown.Has("sku.shelf_life_days") {
		out.ShelfLifeDays = *v.ShelfLifeDays
	}
	if unknown.Has("sku.chilled") {
		out.Chilled = false
	}
	return out, nil
}

// Supplier returns a supplier's delivery terms, read with the key of storeID.
func (c *Client) Supplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, error) {
	return reuse(ctx, c, supplierItem(storeID, supplierID), func(ctx context.Context) (domain.Supplier, error) {
		return c.fetchSupplier(ctx, storeID, supplierID)
	})
}

func supplierItem(storeID, supplierID string) masterItem {
	return masterItem{kind: "supplier", route: "/v1/suppliers/{supplier_id}", storeID: storeID, id: supplierID}
}

// CachedSupplier is Supplier from the master-data cache alone (CachedStore).
func (c *Client) CachedSupplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, bool) {
	return cached[domain.Supplier](ctx, c, supplierItem(storeID, supplierID))
}

func (c *Client) fetchSupplier(ctx context.Context, storeID, supplierID string) (domain.Supplier, error) {
	ctx = about(ctx, subject{kind: "supplier", id: supplierID})
	var unknown domain.Unknown
	var absent sl.Absent
	v, err := call(ctx, c, "GET", "/v1/suppliers/{supplier_id}", storeID, func(ctx context.Context, key keyring.Key) (*sl.Supplier, error) {
		unknown, absent = nil, sl.Absent{}
		resp, err := c.api.GetSupplierWithResponse(ctx, supplierID, c.keyEditors.editor(key))
		return checked(ctx, c, "GET", "/v1/suppliers/{supplier_id}", storeID, resp, err, &absent, &unknown)
	})
	if err != nil {
		return domain.Supplier{}, err
	}
	found := c.qualifiersOnly(ctx, "/v1/suppliers/{supplier_id}", storeID, rules.CheckSupplier(v, rules.Query{SupplierID: supplierID, Absent: absent}), &unknown)
	if err := broken("supplier", found); err != nil {
		return domain.Supplier{}, c.fail(ctx, "GET", "/v1/suppliers/{supplier_id}", storeID, err)
	}
	out := domain.Supplier{ID: v.SupplierID, Name: v.Name, LeadTimeDays: int(v.LeadTimeDays), Unknown: unknown}
	if unknown.Has("supplier.lead_time_days") {
		out.LeadTimeDays = -1
	}
	if v.MinimumOrderUnits != nil {
		out.MinimumOrderUnit = *v.MinimumOrderUnits
	}
	if v.OrderCutoffLocal != nil && !unknown.Has("supplier.order_cutoff_local") {
		m, _ := rules.ParseClock(*v.OrderCutoffLocal) // supplier.cutoff.format held
		out.OrderCutoff = &m
	}
	return out, nil
}

// Order returns one replenishment order of a store.
func (c *Client) Order(ctx context.Context, storeID, orderID string) (domain.Order, error) {
	ctx = about(ctx, subject{kind: "order", id: orderID})
	const route = "/v1/stores/{store_id}/replenishment/{order_id}"
	var unknown domain.Unknown
	var absent sl.Absent
	v, err := call(ctx, c, "GET", route, storeID, func(ctx context.Context, key keyring.Key) (*sl.Order, error) {
		unknown, absent = nil, sl.Absent{}
		resp, err := c.api.GetReplenishmentOrderWithResponse(ctx, storeID, orderID, c.keyEditors.editor(key))
		return checked(ctx, c, "GET", route, storeID, resp, err, &absent, &unknown)
	})
	if err != nil {
		return domain.Order{}, err
	}
	found := c.qualifiersOnly(ctx, route, storeID, rules.CheckOrder(v, rules.Query{StoreID: storeID, OrderID: orderID, Absent: absent}), &unknown)
	if err := broken("order", found); err != nil {
		return domain.Order{}, c.fail(ctx, "GET", route, storeID, err)
	}
	return convertOrder(v, unknown), nil
}

// CreateOrder raises a replenishment order. It is never retried blindly: a
// timeout or a broken answer is WRITE_OUTCOME_UNKNOWN.
func (c *Client) CreateOrder(ctx context.Context, storeID string, req domain.OrderRequest) (domain.Order, error) {
	ctx = about(ctx, subject{sku: req.SKU})
	var unknown domain.Unknown
	var absent sl.Absent
	v, err := call(ctx, c, "POST", "/v1/stores/{store_id}/replenishment", storeID, func(ctx context.Context, key keyring.Key) (*sl.Order, error) {
		unknown, absent = nil, sl.Absent{}
		body := sl.OrderRequest{SKU: req.SKU, QuantityUnits: req.QuantityUnits, Reason: req.Reason}
		resp, err := c.api.CreateReplenishmentOrderWithResponse(ctx, storeID, body, c.keyEditors.editor(key))
		return checked(ctx, c, "POST", "/v1/stores/{store_id}/replenishment", storeID, resp, err, &absent, &unknown)
	})
	if err != nil {
		return domain.Order{}, err
	}
	// An order for another store, SKU or quantity than asked means this
	// order's outcome is unknown. An unreadable status does not: StoreLink
	// took and named the order, so the status is just left out.
	raised := &sl.OrderRequest{SKU: req.SKU, QuantityUnits: req.QuantityUnits, Reason: req.Reason}
	found := rules.CheckOrder(v, rules.Query{StoreID: storeID, Raised: raised, Absent: absent})
	found = slices.DeleteFunc(found, func(f rules.Finding) bool { return f.Rule == rules.OrderStatus })
	found = c.qualifiersOnly(ctx, "/v1/stores/{store_id}/replenishment", storeID, found, &unknown)
	if err := broken("order", found); err != nil {
		return domain.Order{}, c.fail(ctx, "POST", "/v1/stores/{store_id}/replenishment", storeID, err)
	}
	o := convertOrder(v, unknown)
	if !v.Status.Valid() {
		o.Status = ""
	}
	return o, nil
}

func convertOrder(v *sl.Order, unknown domain.Unknown) domain.Order {
	o := domain.Order{ID: v.OrderID, StoreID: v.StoreID, SKU: v.SKU, QuantityUnits: v.QuantityUnits,
		Reason: v.Reason, Status: domain.OrderStatus(v.Status), SubmittedAt: v.SubmittedAt, ExpectedArrival: v.ExpectedArrival,
		Unknown: unknown}
	// An unknown qualifier is left empty, never read as what it holds.
	if unknown.Has("order.reason") {
		o.Reason = ""
	}
	if unknown.Has("order.submitted_at") {
		o.SubmittedAt = time.Time{}
	}
	if unknown.Has("order.expected_arrival") {
		o.ExpectedArrival = time.Time{}
	}
	return o
}

// convertStore converts a store, refusing it for the decision fields'
// breaks in found (left after qualifiersOnly). Unknown hours and name stay
// empty. Errors name field and rule, never StoreLink's value.
func convertStore(v *sl.Store, found []rules.Finding, unknown domain.Unknown) (domain.Store, error) {
	if err := broken("store", found); err != nil {
		return domain.Store{}, err
	}
	if _, err := domain.Location(v.Timezone); err != nil {
		// store.timezone.iana held, so only local zone data can lack the zone.
		return domain.Store{}, malformed("store.timezone", "not a time zone this server knows")
	}
	out := domain.Store{ID: v.StoreID, Name: v.Name, Timezone: v.Timezone, Unknown: unknown}
	if unknown.Has("store.name") {
		out.Name = ""
	}
	if unknown.Has("store.opening_hours") {
		return out, nil
	}
	for _, d := range rules.Week(v.OpeningHours) {
		if d.Hours.Closed {
			out.Hours[d.Weekday] = domain.DayHours{Closed: true}
			continue
		}
		// The rules do not check a missing day or a day without closed set as open
		// (ADR 0028); rather than guess, the week's hours are unknown (ADR 0030).
		if d.Hours.Opens == nil || d.Hours.Closes == nil {
			out.Hours = [7]domain.DayHours{}
			out.Unknown.Add("store.opening_hours")
			return out, nil
		}
		// store.hours.open and store.hours.format held: both times parse.
		o, _ := rules.ParseClock(*d.Hours.Opens)
		cl, _ := rules.ParseClock(*d.Hours.Closes)
		out.Hours[d.Weekday] = domain.DayHours{Opens: o, Closes: cl}
	}
	return out, nil
}
