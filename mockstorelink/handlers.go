package mockstorelink

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/korral/storelink/mockstorelink/internal/api"
)

// server answers the StoreLink operations from the world, behind the
// contract layer that has checked keys and parameters.
type server struct {
	world  *world
	orders *orderBook
	now    func() time.Time

	// Generating a month of history costs more than validating it; a
	// paginating client asks for the same history once per page.
	historyMu    sync.Mutex
	historyCache map[historyKey][]txn
	historyTxns  int // transactions held by historyCache
}

type historyKey struct {
	store, sku string
	anchor     int64
}

// historyCacheSize and historyCacheTxns bound the cache in histories and
// transactions; at either bound it starts over.
const (
	historyCacheSize = 256
	historyCacheTxns = 1 << 18
)

// history returns the shared, read-only history of a SKU at a store.
func (h *server) history(st *store, k *sku, anchor time.Time) []txn {
	key := historyKey{st.id, k.code, anchor.Unix()}
	h.historyMu.Lock()
	defer h.historyMu.Unlock()
	if txns, ok := h.historyCache[key]; ok {
		return txns
	}
	txns := h.world.history(st, k, anchor)
	if h.historyCache == nil || len(h.historyCache) >= historyCacheSize || h.historyTxns+len(txns) > historyCacheTxns {
		h.historyCache = make(map[historyKey][]txn)
		h.historyTxns = 0
	}
	h.historyCache[key] = txns
	h.historyTxns += len(txns)
	return txns
}

var _ api.StrictServerInterface = (*server)(nil)

// Pagination of point-of-sale transactions.
const (
	defaultPOSLimit = 200
	cursorLifetime  = 15 * time.Minute
)

func notFound(what, id string) api.Error { return errorBody("not_found", what+" "+id+" not found") }

// ListStores implements [api.StrictServerInterface].
func (h *server) ListStores(_ context.Context, _ api.ListStoresRequestObject) (api.ListStoresResponseObject, error) {
	ids := h.world.allStoreIDs()
	out := api.ListStores200JSONResponse{Stores: make([]api.StoreSummary, 0, len(ids))}
	for _, id := range ids {
		st, _ := h.world.store(id)
		out.Stores = append(out.Stores, api.StoreSummary{StoreID: st.id, Name: st.name, Timezone: st.loc.String()})
	}
	return out, nil
}

// GetStore implements [api.StrictServerInterface].
func (h *server) GetStore(_ context.Context, req api.GetStoreRequestObject) (api.GetStoreResponseObject, error) {
	st, ok := h.world.store(req.StoreID)
	if !ok {
		return api.GetStore404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("store", req.StoreID))}, nil
	}
	day := func(d time.Weekday) api.DayHours {
		hh := st.week[d]
		if hh.closed {
			return api.DayHours{Closed: true}
		}
		opens := fmt.Sprintf("%02d:%02d", hh.open/60, hh.open%60)
		closes := fmt.Sprintf("%02d:%02d", hh.close/60, hh.close%60)
		return api.DayHours{Opens: &opens, Closes: &closes}
	}
	return api.GetStore200JSONResponse{
		StoreID:  st.id,
		Name:     st.name,
		Timezone: st.loc.String(),
		OpeningHours: api.WeeklyHours{
			Monday: day(time.Monday), Tuesday: day(time.Tuesday), Wednesday: day(time.Wednesday),
			Thursday: day(time.Thursday), Friday: day(time.Friday), Saturday: day(time.Saturday),
			Sunday: day(time.Sunday),
		},
	}, nil
}

// quirkInventory answers 200 with an error body, exempt from the mock's
// response validation.
type quirkInventory struct{ body api.Error }

// VisitGetInventoryResponse writes the error body under a 200.
func (q quirkInventory) VisitGetInventoryResponse(w http.ResponseWriter) error {
	writeJSON(w, http.StatusOK, q.body)
	return nil
}

// GetInventory implements [api.StrictServerInterface].
func (h *server) GetInventory(ctx context.Context, req api.GetInventoryRequestObject) (api.GetInventoryResponseObject, error) {
	st, ok := h.world.store(req.StoreID)
	if !ok {
		return api.GetInventory404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("store", req.StoreID))}, nil
	}
	k, ok := h.world.sku(req.Params.SKU)
	if !ok {
		return api.GetInventory404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("sku", req.Params.SKU))}, nil
	}
	if k.code == SKUQuirk {
		stateFrom(ctx).bypassValidation = true
		return quirkInventory{errorBody("inventory_unavailable", "the stock service did not answer in time")}, nil
	}
	onHand, countedAt := h.world.inventory(st, k, h.now().Truncate(time.Minute))
	return api.GetInventory200JSONResponse{StoreID: st.id, SKU: k.code, OnHandUnits: onHand, CountedAt: countedAt}, nil
}

// cursor is the state of a paginated POS query. It pins the anchor time, so
// every page of one walk comes from the same history even with a real clock.
type cursor struct {
	anchor time.Time
	since  time.Time
	sku    string
	offset int
}

func (c cursor) encode() string {
	raw := fmt.Sprintf("v1|%d|%d|%s|%d", c.anchor.Unix(), c.since.UnixNano(), c.sku, c.offset)
	return base64.RawURLEncoding.EncodeToString([]byte(raw))
}

func decodeCursor(s string) (cursor, error) {
	raw, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil {
		return cursor{}, errors.New("cursor is not one this API issued")
	}
	parts := strings.Split(string(raw), "|")
	if len(parts) != 5 || parts[0] != "v1" {
		return cursor{}, errors.New("cursor is not one this API issued")
	}
	anchor, err1 := strconv.ParseInt(parts[1], 10, 64)
	since, err2 := strconv.ParseInt(parts[2], 10, 64)
	offset, err3 := strconv.Atoi(parts[4])
	if err := errors.Join(err1, err2, err3); err != nil || offset < 0 {
		return cursor{}, errors.New("cursor is not one this API issued")
	}
	return cursor{anchor: time.Unix(anchor, 0), since: time.Unix(0, since), sku: parts[3], offset: offset}, nil
}

// ListPOSTransactions implements [api.StrictServerInterface].
func (h *server) ListPOSTransactions(_ context.Context, req api.ListPOSTransactionsRequestObject) (api.ListPOSTransactionsResponseObject, error) {
	p := req.Params
	st, ok := h.world.store(req.StoreID)
	if !ok {
		return api.ListPOSTransactions404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("store", req.StoreID))}, nil
	}
	k, ok := h.world.sku(p.SKU)
	if !ok {
		return api.ListPOSTransactions404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("sku", p.SKU))}, nil
	}
	now := h.now()
	cur := cursor{anchor: now.Truncate(time.Minute), since: p.Since, sku: k.code}
	if p.Cursor != nil {
		c, err := decodeCursor(*p.Cursor)
		bad := func(code, msg string) (api.ListPOSTransactionsResponseObject, error) {
			return api.ListPOSTransactions400JSONResponse{BadRequestJSONResponse: api.BadRequestJSONResponse(errorBody(code, msg))}, nil
		}
		switch {
		case err != nil:
			return bad("invalid_cursor", err.Error())
		case c.sku != k.code || !c.since.Equal(p.Since):
			return bad("invalid_cursor", "the cursor belongs to a query with another sku or since")
		case now.Sub(c.anchor) > cursorLifetime:
			return bad("cursor_expired", "the cursor has expired; start again without it")
		}
		cur = c
	}
	limit := defaultPOSLimit
	if p.Limit != nil {
		limit = *p.Limit
	}

	all := h.history(st, k, cur.anchor)
	// Newest first: the transactions at or after since are a prefix.
	matching := all[:sort.Search(len(all), func(i int) bool { return all[i].at.Before(p.Since) })]
	from := min(cur.offset, len(matching))
	to := min(from+limit, len(matching))
	out := api.ListPOSTransactions200JSONResponse{
		StoreID:      st.id,
		SKU:          k.code,
		Since:        p.Since,
		Transactions: make([]api.POSTransaction, 0, to-from),
		TotalCount:   int64(len(matching)),
	}
	for _, t := range matching[from:to] {
		out.Transactions = append(out.Transactions, api.POSTransaction{TransactionID: t.id, Timestamp: t.at, Units: t.units})
	}
	if to < len(matching) {
		next := cur
		next.offset = to
		s := next.encode()
		out.NextCursor = &s
	}
	return out, nil
}

// CreateReplenishmentOrder implements [api.StrictServerInterface].
func (h *server) CreateReplenishmentOrder(_ context.Context, req api.CreateReplenishmentOrderRequestObject) (api.CreateReplenishmentOrderResponseObject, error) {
	st, ok := h.world.store(req.StoreID)
	if !ok {
		return api.CreateReplenishmentOrder404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("store", req.StoreID))}, nil
	}
	body := req.Body
	k, ok := h.world.sku(body.SKU)
	if !ok {
		return api.CreateReplenishmentOrder404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("sku", body.SKU))}, nil
	}
	sup, ok := h.world.supplier(k.supplier)
	if !ok {
		return nil, fmt.Errorf("sku %s names supplier %s, which the world does not have", k.code, k.supplier)
	}
	if sup.minimumOrder > 0 && body.QuantityUnits < sup.minimumOrder {
		return api.CreateReplenishmentOrder422JSONResponse{UnprocessableJSONResponse: api.UnprocessableJSONResponse(errorBody("below_minimum_order",
			fmt.Sprintf("the supplier's minimum order is %d units", sup.minimumOrder)))}, nil
	}
	o := h.orders.create(st, k.code, body.QuantityUnits, body.Reason, sup, h.now())
	return api.CreateReplenishmentOrder201JSONResponse(o), nil
}

// GetReplenishmentOrder implements [api.StrictServerInterface].
func (h *server) GetReplenishmentOrder(_ context.Context, req api.GetReplenishmentOrderRequestObject) (api.GetReplenishmentOrderResponseObject, error) {
	o, ok := h.orders.get(req.StoreID, req.OrderID, h.now())
	if !ok {
		return api.GetReplenishmentOrder404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("order", req.OrderID))}, nil
	}
	return api.GetReplenishmentOrder200JSONResponse(o), nil
}

// GetSKU implements [api.StrictServerInterface].
func (h *server) GetSKU(_ context.Context, req api.GetSKURequestObject) (api.GetSKUResponseObject, error) {
	k, ok := h.world.sku(req.SKU)
	if !ok {
		return api.GetSKU404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("sku", req.SKU))}, nil
	}
	out := api.GetSKU200JSONResponse{
		SKU:        k.code,
		Name:       k.name,
		Category:   k.category,
		SupplierID: k.supplier,
		Unit:       api.SKUUnit(k.unit),
		CasePack:   k.casePack,
		Chilled:    k.chilled,
	}
	if k.shelfLifeDays > 0 {
		days := k.shelfLifeDays
		out.ShelfLifeDays = &days
	}
	return out, nil
}

// GetSupplier implements [api.StrictServerInterface].
func (h *server) GetSupplier(_ context.Context, req api.GetSupplierRequestObject) (api.GetSupplierResponseObject, error) {
	sup, ok := h.world.supplier(req.SupplierID)
	if !ok {
		return api.GetSupplier404JSONResponse{NotFoundJSONResponse: api.NotFoundJSONResponse(notFound("supplier", req.SupplierID))}, nil
	}
	out := api.GetSupplier200JSONResponse{SupplierID: sup.id, Name: sup.name, LeadTimeDays: sup.leadTimeDays}
	if sup.cutoff != "" {
		cutoff := sup.cutoff
		out.OrderCutoffLocal = &cutoff
	}
	if sup.minimumOrder > 0 {
		minimum := sup.minimumOrder
		out.MinimumOrderUnits = &minimum
	}
	return out, nil
}
