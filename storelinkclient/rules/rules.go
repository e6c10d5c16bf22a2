// Package rules holds the semantic rules of the StoreLink contract: what a
// successful answer must satisfy beyond its schema. The MCP server and
// storelink-contract apply them by stable id. It imports only the client's
// types; a [Finding] never quotes a value, and absent fields
// ([Query.Absent]) are left to the schema check.
package rules

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"time"

	// Do not depend on the machine's zone files.
	_ "time/tzdata"

	sl "github.com/korral/storelink/storelinkclient"
)

// Operation ids whose answers the rules check.
const (
	OpListStores   = "listStores"
	OpGetStore     = "getStore"
	OpGetInventory = "getInventory"
	OpListPOS      = "listPOSTransactions"
	OpCreateOrder  = "createReplenishmentOrder"
	OpGetOrder     = "getReplenishmentOrder"
	OpGetSKU       = "getSKU"
	OpGetSupplier  = "getSupplier"
)

// Rule ids; stable (x-korral-rules names them).
const (
	PathStoreID        = "path.store_id"
	PathSKU            = "path.sku"
	PathSupplierID     = "path.supplier_id"
	PathOrderID        = "path.order_id"
	StoreTimezone      = "store.timezone.iana"
	StoreHoursFormat   = "store.hours.format"
	StoreHoursOpen     = "store.hours.open"
	StoreHoursClosed   = "store.hours.closed"
	StoreHoursOrder    = "store.hours.order"
	InventoryRange     = "inventory.range"
	InventoryCountedAt = "inventory.counted_at"
	POSWindow          = "pos.window"
	POSOrder           = "pos.order"
	POSSince           = "pos.since"
	POSUnits           = "pos.units"
	POSTotalCount      = "pos.total_count"
	POSCursor          = "pos.cursor"
	POSLimit           = "pos.limit"
	StoresOrder        = "stores.order"
	SKURange           = "sku.range"
	SupplierRange      = "supplier.range"
	SupplierCutoff     = "supplier.cutoff.format"
	OrderStatus        = "order.status"
	OrderRange         = "order.range"
	OrderReadBack      = "order.readback"
)

// Rule is one semantic rule of the contract.
type Rule struct {
	// ID is the rule's stable id, e.g. "store.hours.order".
	ID string `json:"id"`
	// Text states the rule in one line.
	Text string `json:"text"`
	// Operations are the operation ids whose answers it checks.
	Operations []string `json:"operations"`
}

var registry = []Rule{
	{PathStoreID, "a body's store_id is the store of the request's path",
		[]string{OpGetStore, OpGetInventory, OpListPOS, OpCreateOrder, OpGetOrder}},
	{PathSKU, "a body's sku is the SKU the request named", []string{OpGetInventory, OpListPOS, OpGetSKU}},
	{PathSupplierID, "a supplier's supplier_id is the one of the request's path", []string{OpGetSupplier}},
	{PathOrderID, "an order's order_id is the one of the request's path", []string{OpGetOrder}},
	{StoresOrder, "the store list is ordered by store_id, as numbers", []string{OpListStores}},
	{StoreTimezone, "a store's timezone names a zone of the IANA time zone database", []string{OpListStores, OpGetStore}},
	{StoreHoursFormat, "opens and closes are store-local HH:MM times (24-hour)", []string{OpGetStore}},
	{StoreHoursOpen, "an open day (closed: false) has both opens and closes", []string{OpGetStore}},
	{StoreHoursClosed, "a closed day (closed: true) has neither opens nor closes", []string{OpGetStore}},
	{StoreHoursOrder, "an open day opens before it closes (no store trades past midnight)", []string{OpGetStore}},
	{InventoryRange, "on_hand_units is between -1000000 and 1000000", []string{OpGetInventory}},
	{InventoryCountedAt, "counted_at is not in the future", []string{OpGetInventory}},
	{POSWindow, "every transaction is at or after the query's since and not in the future", []string{OpListPOS}},
	{POSOrder, "transactions come newest first, within a page and from one page to the next", []string{OpListPOS}},
	{POSSince, "a page echoes the since of its query", []string{OpListPOS}},
	{POSUnits, "a transaction's units is between 1 and 100000", []string{OpListPOS}},
	{POSTotalCount, "total_count is at least the number of transactions on the page", []string{OpListPOS}},
	{POSCursor, "a next_cursor is never one the walk over the pages has already used", []string{OpListPOS}},
	{POSLimit, "a page holds at most the limit its query asked for (200 when it asked none)", []string{OpListPOS}},
	{SKURange, "case_pack is between 1 and 1000, and shelf_life_days, when given, between 1 and 3650", []string{OpGetSKU}},
	{SupplierRange, "lead_time_days is between 0 and 60, and minimum_order_units, when given, between 1 and 100000", []string{OpGetSupplier}},
	{SupplierCutoff, "order_cutoff_local, when given, is a store-local HH:MM time (24-hour)", []string{OpGetSupplier}},
	{OrderStatus, "an order's status is one of the contract's order statuses", []string{OpCreateOrder, OpGetOrder}},
	{OrderRange, "an order's quantity_units is between 1 and 100000", []string{OpCreateOrder, OpGetOrder}},
	{OrderReadBack, "an order has the SKU and quantity_units it was raised with", []string{OpCreateOrder, OpGetOrder}},
}

// Rules lists every rule, in a stable order.
func Rules() []Rule {
	out := make([]Rule, len(registry))
	for i, r := range registry {
		out[i] = r
		out[i].Operations = slices.Clone(r.Operations)
	}
	return out
}

// Lookup returns the rule with the id.
func Lookup(id string) (Rule, bool) {
	for _, r := range Rules() {
		if r.ID == id {
			return r, true
		}
	}
	return Rule{}, false
}

// Range is a bound a rule holds a number to; the schemas state it too.
type Range struct {
	Rule string
	// Schema and Property name the number in the contract, e.g. "SKU" and
	// "case_pack".
	Schema, Property string
	Min, Max         int64
}

var ranges = []Range{
	{InventoryRange, "Inventory", nOnHand, -1000000, 1000000},
	{POSUnits, "POSTransaction", nUnits, 1, 100000},
	{SKURange, "SKU", nCasePack, 1, 1000},
	{SKURange, "SKU", nShelfLifeDays, 1, 3650},
	{SupplierRange, "Supplier", nLeadTimeDays, 0, 60},
	{SupplierRange, "Supplier", nMinimumOrderUnits, 1, 100000},
	{OrderRange, "Order", nOrderQuantity, 1, 100000},
}

// Ranges lists the numeric bounds the rules hold answers to.
func Ranges() []Range { return slices.Clone(ranges) }

func bound(schema, property string) Range {
	for _, r := range ranges {
		if r.Schema == schema && r.Property == property {
			return r
		}
	}
	panic("rules: no range for " + schema + "." + property)
}

// Patterns the rules share with the contract's schemas.
const (
	// ClockPattern is a store-local HH:MM time, 24-hour.
	ClockPattern = `^([01][0-9]|2[0-3]):[0-5][0-9]$`
	// TimezonePattern is the shape of an IANA zone name, such as
	// "Europe/Prague"; [StoreTimezone] also asks the zone database.
	TimezonePattern = `^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+)*$`
)

var (
	clockRE    = regexp.MustCompile(ClockPattern)
	timezoneRE = regexp.MustCompile(TimezonePattern)
)

// DefaultPOSLimit is the contract's default page size of a POS query.
const DefaultPOSLimit = 200

// ClockSkew is how far in the future a timestamp may lie before it breaks a
// rule.
const ClockSkew = 5 * time.Minute

// ParseClock reads a store-local "HH:MM" as minutes after midnight.
func ParseClock(s string) (minutes int, ok bool) {
	if !clockRE.MatchString(s) {
		return 0, false
	}
	h, _ := strconv.Atoi(s[:2])
	m, _ := strconv.Atoi(s[3:])
	return h*60 + m, true
}

// ValidTimezone reports whether name is a zone of the IANA time zone
// database; "Local" and "" are not.
func ValidTimezone(name string) bool {
	if name == "Local" || !timezoneRE.MatchString(name) {
		return false
	}
	_, err := time.LoadLocation(name)
	return err == nil
}

// Query is what an answer was asked for and which fields it left out. A
// zero field is not checked (no Now, no future rule).
type Query struct {
	// StoreID, SKU, SupplierID and OrderID are the ids of the request's path
	// and query.
	StoreID, SKU, SupplierID, OrderID string
	// Since is the since of a POS query.
	Since time.Time
	// Cursor is the cursor a POS request sent, "" on the first page.
	Cursor string
	// Limit is the limit a POS request sent; 0 means [DefaultPOSLimit].
	Limit int
	// Now is the reader's clock, for the rules that refuse the future.
	Now time.Time
	// Raised is the order as raised, for order.readback.
	Raised *sl.OrderRequest
	// Walk is the POS walk this page belongs to; nil checks it alone.
	Walk *Walk
	// Absent are the fields StoreLink left out (storelinkclient.BodyFields);
	// no rule checks them. A nil pointer field is absent regardless.
	// [Check] sets it from the body.
	Absent sl.Absent
}

// sent reports whether the answer has the field at the JSON Pointer.
func (q Query) sent(pointer string) bool { return !q.Absent.Has(pointer) }

// sentLine reports whether transaction i of a POS page has the property
// prop; it builds a pointer only when lacking is set.
func (q Query) sentLine(lacking bool, i int, prop string) bool {
	return !lacking || q.sent(line(i)+prop)
}

func line(i int) string { return pTransactions + "/" + strconv.Itoa(i) }

// Walk is what a walk over a query's POS pages has seen. The zero value is
// before the first page; pass each page to [CheckPOSPage] once, in order.
type Walk struct {
	pages   int
	oldest  time.Time
	cursors map[string]bool
}

func (w *Walk) record(p *sl.POSPage, q Query) {
	w.pages++
	// The oldest line is the last that has a timestamp.
	lacking := q.Absent.Within(pTransactions)
	for i := len(p.Transactions) - 1; i >= 0; i-- {
		if q.sentLine(lacking, i, pTimestamp) {
			w.oldest = p.Transactions[i].Timestamp
			break
		}
	}
	if p.NextCursor != nil {
		if w.cursors == nil {
			// Made by the first page with a next page: most walks are one page.
			w.cursors = map[string]bool{}
		}
		w.cursors[*p.NextCursor] = true
	}
}

// Finding is one break of a rule by an answer.
type Finding struct {
	// Rule is the rule's id.
	Rule string `json:"rule"`
	// Field is a JSON Pointer into the body; "" is the whole body.
	Field string `json:"field"`
	// Problem says what is wrong, without quoting the answer.
	Problem string `json:"problem"`
}

func (f Finding) String() string { return f.Field + ": " + f.Problem + " (rule " + f.Rule + ")" }

// findings collects at most one finding per rule.
type findings []Finding

func (fs *findings) add(rule, field, problem string) {
	for _, f := range *fs {
		if f.Rule == rule {
			return
		}
	}
	*fs = append(*fs, Finding{Rule: rule, Field: field, Problem: problem})
}

// echo checks an id the answer repeats from the request, when the answer
// has it.
func (fs *findings) echo(q Query, rule, field, got, want, what string) {
	if want != "" && q.sent(field) && got != want {
		fs.add(rule, field, "not the "+what+" of the request")
	}
}

// within holds a number to its bound; the caller checks it was sent.
func (fs *findings) within(schema, property, field string, v int64) {
	if r, out := outside(schema, property, v); out {
		fs.add(r.Rule, field, fmt.Sprintf("outside %d to %d", r.Min, r.Max))
	}
}

func outside(schema, property string, v int64) (Range, bool) {
	r := bound(schema, property)
	return r, v < r.Min || v > r.Max
}

func (fs *findings) timezone(q Query, tz, field string) {
	switch {
	case !q.sent(field):
	case tz == "":
		fs.add(StoreTimezone, field, "empty")
	case !ValidTimezone(tz):
		fs.add(StoreTimezone, field, "not an IANA time zone")
	}
}

// future reports a time later than the reader's clock allows.
func future(t time.Time, q Query) bool {
	return !q.Now.IsZero() && t.After(q.Now.Add(ClockSkew))
}

func (fs *findings) result() []Finding {
	if len(*fs) == 0 {
		return nil
	}
	return *fs
}
