package storelinkclient

import "net/http"

// The methods below let [Result] handle every generated response type; a
// new operation needs its three methods here.

var (
	_ Response[SKU]       = (*GetSKUResponse)(nil)
	_ Response[StoreList] = (*ListStoresResponse)(nil)
	_ Response[Store]     = (*GetStoreResponse)(nil)
	_ Response[Inventory] = (*GetInventoryResponse)(nil)
	_ Response[POSPage]   = (*ListPOSTransactionsResponse)(nil)
	_ Response[Order]     = (*CreateReplenishmentOrderResponse)(nil)
	_ Response[Order]     = (*GetReplenishmentOrderResponse)(nil)
	_ Response[Supplier]  = (*GetSupplierResponse)(nil)
)

func (r *GetSKUResponse) okBody() *SKU { return r.JSON200 }

func (r *GetSKUResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*GetSKUResponse) operation() (string, int) { return "getSKU", http.StatusOK }

func (r *ListStoresResponse) okBody() *StoreList { return r.JSON200 }

func (r *ListStoresResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*ListStoresResponse) operation() (string, int) { return "listStores", http.StatusOK }

func (r *GetStoreResponse) okBody() *Store { return r.JSON200 }

func (r *GetStoreResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*GetStoreResponse) operation() (string, int) { return "getStore", http.StatusOK }

func (r *GetInventoryResponse) okBody() *Inventory { return r.JSON200 }

func (r *GetInventoryResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*GetInventoryResponse) operation() (string, int) { return "getInventory", http.StatusOK }

func (r *ListPOSTransactionsResponse) okBody() *POSPage { return r.JSON200 }

func (r *ListPOSTransactionsResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*ListPOSTransactionsResponse) operation() (string, int) {
	return "listPOSTransactions", http.StatusOK
}

func (r *CreateReplenishmentOrderResponse) okBody() *Order { return r.JSON201 }

func (r *CreateReplenishmentOrderResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*CreateReplenishmentOrderResponse) operation() (string, int) {
	return "createReplenishmentOrder", http.StatusCreated
}

func (r *GetReplenishmentOrderResponse) okBody() *Order { return r.JSON200 }

func (r *GetReplenishmentOrderResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*GetReplenishmentOrderResponse) operation() (string, int) {
	return "getReplenishmentOrder", http.StatusOK
}

func (r *GetSupplierResponse) okBody() *Supplier { return r.JSON200 }

func (r *GetSupplierResponse) rawResponse() *http.Response {
	if r == nil {
		return nil
	}
	return r.HTTPResponse
}

func (*GetSupplierResponse) operation() (string, int) { return "getSupplier", http.StatusOK }
