package domain

import (
	"slices"
	"strings"
)

// Role says what a field or an endpoint of StoreLink does for the tools'
// answers (ADR 0030).
type Role string

// The two roles.
const (
	// Decision: the figures or the order rest on it; when missing or
	// unreadable the tool refuses, naming it with its rule id.
	Decision Role = "decision"
	// Qualifier: when missing or unreadable the tool answers without it,
	// with a caveat saying what is unknown.
	Qualifier Role = "qualifier"
)

// Source is one StoreLink field or endpoint that the tools read.
type Source struct {
	// Name is the field's path under its resource, without array indexes
	// (store.opening_hours), or an endpoint as METHOD and route.
	Name string
	Role Role
	// Means is, for a decision, what the answer decides with it; for a
	// qualifier, what the answer does not claim while it is unknown. It is
	// the caveat's text, so keep it short (ADR 0012).
	Means string
}

// Sources is the table of decision and qualifier fields and endpoints
// (ADR 0030; a test keeps the ADR in line). A field it does not name is a
// decision.
var Sources = []Source{
	{"GET /v1/stores", Qualifier, "the stores listed are the keyring's; StoreLink's own store list is not read"},
	{"store.store_id", Decision, "the answer is about the store asked for"},
	{"store.name", Qualifier, "named by id"},
	{"store.timezone", Decision, "the store-local days and today's sales"},
	{"store.opening_hours", Qualifier, "no before-close answer, no open or close time; rate per clock hour"},
	{"inventory.store_id", Decision, "the count is the asked store's"},
	{"inventory.sku", Decision, "the count is the asked SKU's"},
	{"inventory.on_hand_units", Decision, "the stock the projection starts from"},
	{"inventory.counted_at", Qualifier, "count age unknown, taken as stale"},
	{"pos.store_id", Decision, "the sales are the asked store's"},
	{"pos.sku", Decision, "the sales are the asked SKU's"},
	{"pos.since", Qualifier, "window start not echoed"},
	{"pos.total_count", Qualifier, "total is the lines read"},
	{"pos.transactions", Decision, "the sales the sell rate is learned from"},
	{"pos.transactions.transaction_id", Decision, "each sale is counted once"},
	{"pos.transactions.timestamp", Decision, "the day and hour of each sale"},
	{"pos.transactions.units", Decision, "the units of each sale"},
	{"pos.next_cursor", Decision, "every page of sales is read"},
	{"sku.sku", Decision, "the master data is the asked SKU's"},
	{"sku.name", Qualifier, "named by SKU code"},
	{"sku.category", Qualifier, "no product category"},
	{"sku.supplier_id", Decision, "the supplier whose minimum order applies"},
	{"sku.unit", Qualifier, "no unit of measure"},
	{"sku.case_pack", Decision, "whole cases of an order"},
	{"sku.chilled", Qualifier, "no chilled check of cover"},
	{"sku.shelf_life_days", Qualifier, "no shelf-life check of cover"},
	{"supplier.supplier_id", Decision, "the terms are the SKU's supplier's"},
	{"supplier.name", Qualifier, "named by id"},
	{"supplier.lead_time_days", Qualifier, "no delivery date or days of cover"},
	{"supplier.order_cutoff_local", Qualifier, "cut-off unknown, ordering counted from today"},
	{"supplier.minimum_order_units", Decision, "the smallest order StoreLink takes"},
	{"order.order_id", Decision, "the order's identity"},
	{"order.store_id", Decision, "the order is the asked store's"},
	{"order.sku", Decision, "the order is for the SKU asked"},
	{"order.quantity_units", Decision, "the quantity ordered"},
	{"order.status", Decision, "where the order is"},
	{"order.reason", Qualifier, "reason not echoed"},
	{"order.submitted_at", Qualifier, "no submitted time"},
	{"order.expected_arrival", Qualifier, "no arrival date"},
}

// SourceOf finds the entry for a field path (pos.transactions.0.units): the
// longest entry that is the path or its prefix, array indexes ignored. ok
// is false for a path the table does not name.
func SourceOf(path string) (Source, bool) {
	parts := strings.Split(path, ".")
	parts = slices.DeleteFunc(parts, func(p string) bool { return p != "" && strings.Trim(p, "0123456789") == "" })
	for n := len(parts); n > 0; n-- {
		name := strings.Join(parts[:n], ".")
		for _, s := range Sources {
			if s.Name == name {
				return s, true
			}
		}
	}
	return Source{}, false
}

// IsQualifier reports whether a field path falls under a qualifier of the
// table; a path it does not name is a decision.
func IsQualifier(path string) (Source, bool) {
	s, ok := SourceOf(path)
	return s, ok && s.Role == Qualifier
}

// Unknown lists the qualifiers of an answer StoreLink left out or sent
// unreadable, by their table names, each once.
type Unknown []string

// Has reports whether the qualifier named is unknown.
func (u Unknown) Has(name string) bool { return slices.Contains(u, name) }

// Add records a qualifier as unknown, once.
func (u *Unknown) Add(name string) {
	if !u.Has(name) {
		*u = append(*u, name)
	}
}

// Merge is every qualifier of the lists, each once, in the table's order.
func Merge(lists ...Unknown) Unknown {
	var out Unknown
	for _, s := range Sources {
		for _, l := range lists {
			if l.Has(s.Name) {
				out = append(out, s.Name)
				break
			}
		}
	}
	return out
}

// Caveats is the caveat for each unknown qualifier, in table order:
// "store.opening_hours: no before-close answer, ...".
func (u Unknown) Caveats() []string {
	var out []string
	for _, s := range Sources {
		if s.Role == Qualifier && u.Has(s.Name) {
			out = append(out, s.Name+": "+s.Means)
		}
	}
	return out
}

// Of is the unknown qualifiers under one of the resources (store,
// inventory, sku...), in table order.
func (u Unknown) Of(resources ...string) Unknown {
	var out Unknown
	for _, name := range Merge(u) {
		root, _, _ := strings.Cut(name, ".")
		if slices.Contains(resources, root) {
			out = append(out, name)
		}
	}
	return out
}
