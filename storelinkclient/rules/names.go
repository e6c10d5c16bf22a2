package rules

import (
	"reflect"
	"strings"

	sl "github.com/korral/storelink/storelinkclient"
)

// prop is the JSON name of the field goName of the generated type T. The
// rules use it instead of literals, so a contract rename that keeps the Go
// name is followed after make generate.
func prop[T any](goName string) string {
	t := reflect.TypeFor[T]()
	f, ok := t.FieldByName(goName)
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !ok || name == "" || name == "-" {
		panic("rules: the generated type " + t.Name() + " has no JSON field " + goName)
	}
	return name
}

// ptr is a JSON Pointer of one property, escaped (RFC 6901).
func ptr(name string) string {
	return "/" + strings.ReplaceAll(strings.ReplaceAll(name, "~", "~0"), "/", "~1")
}

// The JSON names the rules read, by generated type.
var (
	nStores         = prop[sl.StoreList]("Stores")
	nSummaryStoreID = prop[sl.StoreSummary]("StoreID")
	nSummaryTZ      = prop[sl.StoreSummary]("Timezone")

	nStoreID = prop[sl.Store]("StoreID")
	nStoreTZ = prop[sl.Store]("Timezone")
	nHours   = prop[sl.Store]("OpeningHours")
	nClosed  = prop[sl.DayHours]("Closed")
	nOpens   = prop[sl.DayHours]("Opens")
	nCloses  = prop[sl.DayHours]("Closes")

	nInventoryStoreID = prop[sl.Inventory]("StoreID")
	nInventorySKU     = prop[sl.Inventory]("SKU")
	nOnHand           = prop[sl.Inventory]("OnHandUnits")
	nCountedAt        = prop[sl.Inventory]("CountedAt")

	nPOSStoreID    = prop[sl.POSPage]("StoreID")
	nPOSSKU        = prop[sl.POSPage]("SKU")
	nSince         = prop[sl.POSPage]("Since")
	nTotalCount    = prop[sl.POSPage]("TotalCount")
	nTransactions  = prop[sl.POSPage]("Transactions")
	nNextCursor    = prop[sl.POSPage]("NextCursor")
	nUnits         = prop[sl.POSTransaction]("Units")
	nTimestamp     = prop[sl.POSTransaction]("Timestamp")
	nSKUCode       = prop[sl.SKU]("SKU")
	nCasePack      = prop[sl.SKU]("CasePack")
	nShelfLifeDays = prop[sl.SKU]("ShelfLifeDays")

	nSupplierID        = prop[sl.Supplier]("SupplierID")
	nLeadTimeDays      = prop[sl.Supplier]("LeadTimeDays")
	nMinimumOrderUnits = prop[sl.Supplier]("MinimumOrderUnits")
	nOrderCutoffLocal  = prop[sl.Supplier]("OrderCutoffLocal")

	nOrderStoreID  = prop[sl.Order]("StoreID")
	nOrderID       = prop[sl.Order]("OrderID")
	nOrderSKU      = prop[sl.Order]("SKU")
	nOrderStatus   = prop[sl.Order]("Status")
	nOrderQuantity = prop[sl.Order]("QuantityUnits")

	// The pointers of an on-hand count, written once: every warm risk
	// check reads one.
	pInventoryStoreID, pInventorySKU = ptr(nInventoryStoreID), ptr(nInventorySKU)
	pOnHand, pCountedAt              = ptr(nOnHand), ptr(nCountedAt)

	// The pointers of a POS page, written once: a warm walk checks
	// thousands of lines.
	pTransactions, pUnits, pTimestamp = ptr(nTransactions), ptr(nUnits), ptr(nTimestamp)
	pPOSStoreID, pPOSSKU, pSince      = ptr(nPOSStoreID), ptr(nPOSSKU), ptr(nSince)
	pTotalCount, pNextCursor          = ptr(nTotalCount), ptr(nNextCursor)

	// nDays are WeeklyHours' days, Monday first.
	nDays = [7]string{prop[sl.WeeklyHours]("Monday"), prop[sl.WeeklyHours]("Tuesday"), prop[sl.WeeklyHours]("Wednesday"),
		prop[sl.WeeklyHours]("Thursday"), prop[sl.WeeklyHours]("Friday"), prop[sl.WeeklyHours]("Saturday"),
		prop[sl.WeeklyHours]("Sunday")}
)
