package contract

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"

	sl "github.com/korral/storelink/storelinkclient"
)

// The check learns the ids its later probes need from StoreLink's answers;
// --sku, --supplier and --order override them.

// learnStores keeps the store ids of a store list answer.
func learnStores(st *state, body []byte) {
	var v sl.StoreList
	if json.Unmarshal(body, &v) != nil {
		return
	}
	st.listed = map[string]bool{}
	for _, s := range v.Stores {
		st.listed[s.StoreID] = true
	}
}

// knownStores is the set of store ids known to exist: the store list's, or
// else the keyring's (fromKeyring).
func knownStores(st *state, keyring map[string]string) (known map[string]bool, fromKeyring bool) {
	if st.listed != nil {
		return st.listed, false
	}
	known = map[string]bool{}
	for id := range keyring {
		known[id] = true
	}
	return known, true
}

// assumeAbsentStore is what the absent-store probe assumes when only the
// keyring says which stores exist.
func assumeAbsentStore(id string) string {
	return fmt.Sprintf("that store %s, which the keyring does not hold, is not a store of the chain: the store list was not read, so only the keyring's stores are known", id)
}

// maxLearnedSKUs bounds the walk over an answer for SKUs.
const maxLearnedSKUs = 100

// learnSKU keeps the SKU an inventory or POS answer names: the requested
// one when named, else the first "sku" property at any depth.
func learnSKU(st *state, requested string, body []byte) {
	if st.sku != "" {
		return
	}
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return
	}
	var found []string
	var walk func(v any)
	walk = func(v any) {
		if len(found) >= maxLearnedSKUs {
			return
		}
		switch t := v.(type) {
		case map[string]any:
			if s, ok := t["sku"].(string); ok && usableID(s) {
				found = append(found, s)
			}
			for k, x := range t {
				if k != "sku" {
					walk(x)
				}
			}
		case []any:
			for _, x := range t {
				walk(x)
			}
		}
	}
	walk(doc)
	for _, s := range found {
		if s == requested {
			st.sku = s
			return
		}
	}
	if len(found) > 0 {
		st.sku = found[0]
	}
}

// skuFor is the SKU the SKU probes read: --sku, else the learned one, else
// the one asked about.
func (st *state) skuFor(cfg Config) string {
	if !cfg.skuDefaulted {
		return cfg.SKU
	}
	return cmp.Or(st.sku, cfg.SKU)
}

// skuRequest is a request of the SKU's path; a learned SKU is sent as given.
func skuRequest(st *state, cfg Config, key keyChoice, store string) request {
	sku := st.skuFor(cfg)
	r := get("/v1/skus/"+url.PathEscape(sku), nil, key, store)
	r.asGiven = !skuPattern.MatchString(sku)
	return r
}

// learnFromSKU keeps a SKU answer's supplier and case pack.
func learnFromSKU(st *state, cfg Config, body []byte) {
	var v struct {
		SupplierID string `json:"supplier_id"`
		CasePack   int64  `json:"case_pack"`
	}
	if json.Unmarshal(body, &v) != nil {
		return
	}
	if cfg.SupplierID == "" {
		st.supplierID = v.SupplierID
	}
	if v.CasePack >= 1 && v.CasePack <= 1000 {
		st.casePack = v.CasePack
	}
}

// supplierFor is the supplier the supplier probes read: --supplier, or
// the one the SKU's answer named; "" when neither is usable.
func (st *state) supplierFor(cfg Config) string {
	id := cmp.Or(cfg.SupplierID, st.supplierID)
	if !usableID(id) {
		return ""
	}
	return id
}

// supplierPath is the path of a supplier probe, with a placeholder when no
// supplier is known.
func supplierPath(st *state, cfg Config) (path string, asGiven bool) {
	id := st.supplierFor(cfg)
	if id == "" {
		return "/v1/suppliers/" + placeholderSupplier, false
	}
	return "/v1/suppliers/" + url.PathEscape(id), !supplierIDPattern.MatchString(id)
}

// orderIDOf reads the order id from a write's answer where the contract's
// link points, else order_id or id; "" when none is usable.
func orderIDOf(sp *spec, body []byte) string {
	var doc any
	if json.Unmarshal(body, &doc) != nil {
		return ""
	}
	var pointers []string
	if sp != nil {
		if op, ok := sp.ops[opCreateOrder]; ok && op.op != nil && op.op.Responses != nil {
			for _, code := range op.declaredStatuses() {
				resp := op.op.Responses.Value(code)
				if resp == nil || resp.Value == nil {
					continue
				}
				for _, link := range resp.Value.Links {
					if link == nil || link.Value == nil {
						continue
					}
					for _, v := range link.Value.Parameters {
						if s, ok := v.(string); ok && strings.HasPrefix(s, "$response.body#") {
							pointers = append(pointers, strings.TrimPrefix(s, "$response.body#"))
						}
					}
				}
			}
		}
	}
	pointers = append(pointers, "/order_id", "/id")
	for _, ptr := range pointers {
		if v, ok := lookupPointer(doc, ptr); ok {
			if s, ok := v.(string); ok && usableID(s) {
				return s
			}
		}
	}
	return ""
}

// orderTarget is the order the order probes name: --order, else the
// written order, else a placeholder.
func orderTarget(st *state, cfg Config) (store, id string, asGiven bool) {
	switch {
	case cfg.OrderID != "":
		return cfg.Store, cfg.OrderID, !orderIDPattern.MatchString(cfg.OrderID)
	case st.createdID != "":
		return cfg.WriteStore, st.createdID, !orderIDPattern.MatchString(st.createdID)
	}
	return cfg.Store, placeholderOrder, false
}

// orderProbes are the probes of getReplenishmentOrder except the
// read-back; their order is chosen when sent (orderTarget).
func orderProbes(cfg Config, otherKey func(string, func(*state) (request, string)) *probe) []*probe {
	read := func(key keyChoice) func(*state) (request, string) {
		return func(st *state) (request, string) {
			store, id, asGiven := orderTarget(st, cfg)
			r := get("/v1/stores/"+store+"/replenishment/"+url.PathEscape(id), nil, key, store)
			r.asGiven = asGiven
			return r, ""
		}
	}
	valid := &probe{op: opGetOrder, name: "valid key", expect: []int{200}, positive: true,
		build: func(st *state) (request, string) {
			switch {
			case cfg.OrderID != "":
				return read(keyOwn)(st)
			case st.createdID != "":
				return request{}, "the order this check raised is read instead (read back the raised order)"
			case len(cfg.Operations) > 0 && !slices.Contains(cfg.Operations, opCreateOrder):
				return request{}, "no order id: the order read reads the order the write raises; select createReplenishmentOrder too, or pass --order with one of the store's orders"
			}
			return request{}, "no order id: the write raised no order whose id could be read (pass --order to read one of the store's orders)"
		}}
	if cfg.OrderID == "" && !cfg.AllowWrites {
		valid.skip = "no order id given: pass --order with one of the store's orders, or --allow-writes to read the order the check raises"
	}
	unknown := "/v1/stores/" + cfg.Store + "/replenishment/" + unknownOrder
	return []*probe{
		valid,
		{op: opGetOrder, name: "no key", expect: []int{401}, build: read(keyNone)},
		otherKey(opGetOrder, read(keyOther)),
		{op: opGetOrder, name: "unknown order", expect: []int{404}, assume: assumeUnknown("order", unknownOrder),
			build: fixed(get(unknown, nil, keyOwn, cfg.Store))},
	}
}

// ordersAfterWrite reports whether the order probes wait for the write:
// with writes allowed and no --order, they read the order it raises.
func ordersAfterWrite(cfg Config) bool {
	return cfg.AllowWrites && cfg.OrderID == ""
}
