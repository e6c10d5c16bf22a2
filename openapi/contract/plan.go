package contract

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// Operation ids of the contract.
const (
	opListStores   = "listStores"
	opGetStore     = "getStore"
	opGetInventory = "getInventory"
	opListPOS      = "listPOSTransactions"
	opCreateOrder  = "createReplenishmentOrder"
	opGetOrder     = "getReplenishmentOrder"
	opGetSKU       = "getSKU"
	opGetSupplier  = "getSupplier"
)

// Identifiers the negative probes use, far outside StoreLink's ranges. The
// contract reserves none, so probes relying on them are assumptions.
const (
	// firstAbsentStore starts the downward search for an unknown store id.
	firstAbsentStore = 999999
	unknownSKU       = "99999999999999"
	unknownSupplier  = "ZZ-CONTRACT-CHECK-UNKNOWN"
	unknownOrder     = "ZZ-CONTRACT-CHECK-UNKNOWN"
	malformedSKU     = "not-a-sku"
	// unknownKey is a key no StoreLink issues.
	unknownKey = "storelink-contract-unknown-key"
	// placeholderSupplier and placeholderOrder fill paths where the id does
	// not matter.
	placeholderSupplier = "SUP-CONTRACT-CHECK"
	placeholderOrder    = "RO-CONTRACT-CHECK"
)

// assumeUnknown is what a probe of a made-up id assumes.
func assumeUnknown(what, id string) string {
	return fmt.Sprintf("that %s %s names nothing, which the contract does not promise (no id is reserved)", what, id)
}

// assumeState is what the read-back of a raised order assumes.
const assumeState = "that StoreLink keeps the order it raised and reads it back as raised; a server without state (a mock generated from the contract) does not"

// Bounds of the POS pagination walk: small pages, few of them.
const (
	posPageLimit = 10
	posMaxPages  = 3
	posWindow    = 7 * 24 * time.Hour
)

// orderReason is the reason written on the order a check raises.
const orderReason = "StoreLink contract check (storelink-contract --allow-writes); not a real need, safe to cancel."

// plan lists the probes of a check in send order; write probes only when
// writes are allowed. Each operation's x-korral-key-scope decides what
// another store's key must get.
func plan(cfg Config, sp *spec) []*probe {
	p := newPlanner(cfg, sp)
	p.storeProbes()
	p.inventoryProbes()
	p.posProbes()
	p.skuProbes()
	p.supplierProbes()
	// getReplenishmentOrder: the order --order names, or, with writes
	// allowed, the one the write raises, so its probes follow the write.
	orders := orderProbes(cfg, p.otherKey)
	if !ordersAfterWrite(cfg) {
		p.add(orders...)
	}
	p.writeProbes()
	if ordersAfterWrite(cfg) {
		p.add(orders...)
	}
	return p.ps
}

// planner collects the probes of a check, one operation at a time.
type planner struct {
	cfg        Config
	sp         *spec
	store, sku string
	since      string // the start of the POS window
	storePath  string // /v1/stores/{store}
	noOther    string // why another store's key cannot be probed; empty when it can
	ps         []*probe
}

func newPlanner(cfg Config, sp *spec) *planner {
	p := &planner{cfg: cfg, sp: sp, store: cfg.Store, sku: cfg.SKU,
		since: cfg.Now().UTC().Add(-posWindow).Format(time.RFC3339), storePath: "/v1/stores/" + cfg.Store}
	if otherStore(cfg.Keyring, cfg.Store) == "" {
		p.noOther = "the keyring holds one store; add a second to check that a key does not open another store"
	}
	return p
}

// add appends probes, skipping assumptions when they are left out.
func (p *planner) add(ps ...*probe) {
	for _, pr := range ps {
		if pr.assume != "" && p.cfg.NoAssumptions && pr.skip == "" {
			pr.skip = "assumes " + pr.assume + " (left out by --no-assumptions)"
		}
		p.ps = append(p.ps, pr)
	}
}

// otherKey is the probe of another store's key on an operation, as its
// key scope says.
func (p *planner) otherKey(op string, build func(*state) (request, string)) *probe {
	pr := &probe{op: op, name: "another store's key", expect: []int{403}, skip: p.noOther, build: build}
	if p.sp.ops[op].keyScope == scopeChain {
		pr.expect, pr.positive = []int{200}, true
	}
	return pr
}

// queryOf builds a query from key, value pairs.
func queryOf(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

// storeProbes probe listStores and getStore. The first probe also checks
// that StoreLink is reachable and learns the chain's store ids.
func (p *planner) storeProbes() {
	cfg, store, storePath := p.cfg, p.store, p.storePath
	p.add(&probe{op: opListStores, name: "valid key", expect: []int{200}, positive: true,
		build: fixed(get("/v1/stores", nil, keyOwn, store)),
		learn: func(st *state, body []byte) []*probe {
			learnStores(st, body)
			return nil
		}})
	p.add(&probe{op: opListStores, name: "no key", expect: []int{401},
		build: fixed(get("/v1/stores", nil, keyNone, store))})
	p.add(&probe{op: opListStores, name: "unknown key", expect: []int{401}, assume: "that Korral IT never issued the key " + unknownKey,
		build: fixed(get("/v1/stores", nil, keyUnknown, store))})
	p.add(p.otherKey(opListStores, fixed(get("/v1/stores", nil, keyOther, store))))

	p.add(&probe{op: opGetStore, name: "valid key", expect: []int{200}, positive: true,
		build: fixed(get(storePath, nil, keyOwn, store))})
	p.add(&probe{op: opGetStore, name: "no key", expect: []int{401},
		build: fixed(get(storePath, nil, keyNone, store))})
	p.add(p.otherKey(opGetStore, fixed(get(storePath, nil, keyOther, store))))
	// An unknown store may be 403 or 404. Without a store list the keyring
	// says which stores exist, and the probe is an assumption.
	p.add(&probe{op: opGetStore, name: "store absent from the store list", expect: []int{403, 404},
		build: func(st *state) (request, string) {
			known, fromKeyring := knownStores(st, cfg.Keyring)
			absent := absentStore(known, cfg.Keyring)
			if absent == "" {
				return request{}, "every store id is in the store list"
			}
			r := get("/v1/stores/"+absent, nil, keyOwn, store)
			if fromKeyring {
				if cfg.NoAssumptions {
					return request{}, "assumes " + assumeAbsentStore(absent) + " (left out by --no-assumptions)"
				}
				r.assume = assumeAbsentStore(absent)
			}
			return r, ""
		}})
}

// inventoryProbes probe getInventory.
func (p *planner) inventoryProbes() {
	store, sku := p.store, p.sku
	invPath := p.storePath + "/inventory"
	inventory := queryOf("sku", sku)
	p.add(&probe{op: opGetInventory, name: "valid key", expect: []int{200}, positive: true,
		build: fixed(get(invPath, inventory, keyOwn, store)),
		learn: func(st *state, body []byte) []*probe {
			learnSKU(st, sku, body)
			return nil
		}})
	p.add(&probe{op: opGetInventory, name: "no key", expect: []int{401},
		build: fixed(get(invPath, inventory, keyNone, store))})
	p.add(p.otherKey(opGetInventory, fixed(get(invPath, inventory, keyOther, store))))
	p.add(&probe{op: opGetInventory, name: "unknown SKU " + unknownSKU, expect: []int{404}, assume: assumeUnknown("SKU", unknownSKU),
		build: fixed(get(invPath, queryOf("sku", unknownSKU), keyOwn, store))})
	p.add(&probe{op: opGetInventory, name: "malformed SKU", expect: []int{400},
		build: fixed(get(invPath, queryOf("sku", malformedSKU), keyOwn, store))})
}

// posProbes probe listPOSTransactions, following the cursor for a few pages.
func (p *planner) posProbes() {
	store, sku, since := p.store, p.sku, p.since
	posPath := p.storePath + "/pos"
	pos := queryOf("sku", sku, "since", since)
	p.add(posPage(posPath, pos, store, 1, ""))
	p.add(&probe{op: opListPOS, name: "no key", expect: []int{401},
		build: fixed(get(posPath, pos, keyNone, store))})
	p.add(p.otherKey(opListPOS, fixed(get(posPath, pos, keyOther, store))))
	// The smallest page the contract allows, for rule pos.limit.
	smallest := queryOf("sku", sku, "since", since, "limit", "1")
	p.add(&probe{op: opListPOS, name: "valid key, limit=1", expect: []int{200}, positive: true,
		build: func(*state) (request, string) {
			r := get(posPath, smallest, keyOwn, store)
			r.walk = &rules.Walk{}
			return r, ""
		}})
	p.add(&probe{op: opListPOS, name: "limit=0", expect: []int{400},
		build: fixed(get(posPath, queryOf("sku", sku, "since", since, "limit", "0"), keyOwn, store))})
	p.add(&probe{op: opListPOS, name: "malformed since", expect: []int{400},
		build: fixed(get(posPath, queryOf("sku", sku, "since", "yesterday"), keyOwn, store))})
}

// skuProbes probe getSKU, which names the supplier the supplier probe reads.
func (p *planner) skuProbes() {
	cfg, store := p.cfg, p.store
	skuRead := func(key keyChoice) func(*state) (request, string) {
		return func(st *state) (request, string) { return skuRequest(st, cfg, key, store), "" }
	}
	p.add(&probe{op: opGetSKU, name: "valid key", expect: []int{200}, positive: true, serves: []string{opGetSupplier, opCreateOrder},
		build: skuRead(keyOwn),
		learn: func(st *state, body []byte) []*probe {
			learnFromSKU(st, cfg, body)
			return nil
		}})
	p.add(&probe{op: opGetSKU, name: "no key", expect: []int{401}, build: skuRead(keyNone)})
	p.add(p.otherKey(opGetSKU, skuRead(keyOther)))
	p.add(&probe{op: opGetSKU, name: "unknown SKU " + unknownSKU, expect: []int{404}, assume: assumeUnknown("SKU", unknownSKU),
		build: fixed(get("/v1/skus/"+unknownSKU, nil, keyOwn, store))})
	p.add(&probe{op: opGetSKU, name: "malformed SKU", expect: []int{400},
		build: fixed(get("/v1/skus/"+malformedSKU, nil, keyOwn, store))})
}

// supplierProbes probe getSupplier: the --supplier one or the SKU's, as
// given.
func (p *planner) supplierProbes() {
	cfg, store := p.cfg, p.store
	supplier := func(key keyChoice) func(*state) (request, string) {
		return func(st *state) (request, string) {
			if st.supplierFor(cfg) == "" {
				return request{}, "no supplier id: the SKU probe (getSKU) did not return a supplier_id that can be sent; name one with --supplier"
			}
			path, asGiven := supplierPath(st, cfg)
			r := get(path, nil, key, store)
			r.asGiven = asGiven
			return r, ""
		}
	}
	p.add(&probe{op: opGetSupplier, name: "valid key", expect: []int{200}, positive: true, serves: []string{opCreateOrder},
		build: supplier(keyOwn),
		learn: func(st *state, body []byte) []*probe {
			learnMinimum(st, body, p.sp.declared("Supplier"))
			return nil
		}})
	// A real supplier, so a keyless read cannot hide behind a 404.
	p.add(&probe{op: opGetSupplier, name: "no key", expect: []int{401},
		build: func(st *state) (request, string) {
			path, asGiven := supplierPath(st, cfg)
			r := get(path, nil, keyNone, store)
			r.asGiven = asGiven
			return r, ""
		}})
	p.add(p.otherKey(opGetSupplier, supplier(keyOther)))
	p.add(&probe{op: opGetSupplier, name: "unknown supplier", expect: []int{404}, assume: assumeUnknown("supplier", unknownSupplier),
		build: fixed(get("/v1/suppliers/"+unknownSupplier, nil, keyOwn, store))})
}

// learnMinimum reads the supplier's minimum order, only from an answer that
// keeps the contract.
func learnMinimum(st *state, body []byte, declared []string) {
	var v struct {
		MinimumOrderUnits *int64 `json:"minimum_order_units"`
	}
	if json.Unmarshal(body, &v) != nil {
		return
	}
	var all map[string]json.RawMessage
	_ = json.Unmarshal(body, &all)
	if v.MinimumOrderUnits != nil && *v.MinimumOrderUnits > 0 && *v.MinimumOrderUnits <= 100000 {
		st.minOrder, st.minRead = *v.MinimumOrderUnits, true
	} else if v.MinimumOrderUnits == nil && onlyDeclared(all, declared) {
		st.minRead = true
	}
}

// writeProbes probe createReplenishmentOrder: only with writes allowed,
// and only at the named write store.
func (p *planner) writeProbes() {
	cfg, sp, sku := p.cfg, p.sp, p.sku
	if !cfg.AllowWrites {
		p.add(&probe{op: opCreateOrder, name: "raise an order", expect: []int{201},
			skip: "writes not allowed (pass --allow-writes and --write-store to raise one order and read it back)"})
		return
	}
	ws := cfg.WriteStore
	wsPath := "/v1/stores/" + ws + "/replenishment"
	post := func(key keyChoice, qty int64) request {
		// The wire body in the contract's names; the order in the client's.
		return request{method: http.MethodPost, path: wsPath, key: key, store: ws,
			body:   sp.wireBody(opCreateOrder, map[string]any{"sku": sku, "quantity_units": qty, "reason": orderReason}),
			raised: &sl.OrderRequest{SKU: sku, QuantityUnits: qty, Reason: orderReason}}
	}
	p.add(&probe{op: opCreateOrder, name: "no key", expect: []int{401},
		build: fixed(post(keyNone, 1))})
	other := p.otherKey(opCreateOrder, fixed(post(keyOther, 1)))
	other.skip = ""
	if otherStore(cfg.Keyring, ws) == "" {
		other.skip = p.noOther
	}
	p.add(other)
	// Schema-invalid quantity is 400; below the supplier minimum is 422.
	p.add(&probe{op: opCreateOrder, name: "quantity_units=0", expect: []int{400},
		build: fixed(post(keyOwn, 0))})
	p.add(&probe{op: opCreateOrder, name: "quantity below the supplier's minimum", expect: []int{422},
		build: func(st *state) (request, string) {
			if st.minOrder < 2 {
				return request{}, "the SKU's supplier has no minimum order above 1 unit (or was not read)"
			}
			return post(keyOwn, st.minOrder-1), ""
		}})
	p.add(&probe{op: opCreateOrder, name: "raise one order", expect: []int{201},
		build: func(st *state) (request, string) {
			// The smallest whole number of cases the supplier accepts.
			r := post(keyOwn, st.orderQty())
			if !st.minRead {
				// Without the minimum, StoreLink may refuse for a reason unknown here.
				r.expect = []int{201, 422}
				r.unknowable = "the supplier's minimum order could not be read (see getSupplier), so the probe could not order a quantity the contract says StoreLink must take"
			}
			return r, ""
		},
		learn: func(st *state, body []byte) []*probe {
			var o struct {
				OrderID string `json:"order_id"`
			}
			if json.Unmarshal(body, &o) != nil || !usableID(o.OrderID) {
				return nil
			}
			st.createdID = o.OrderID
			st.raised = &sl.OrderRequest{SKU: sku, QuantityUnits: st.orderQty(), Reason: orderReason}
			rb := readBack(ws)
			if cfg.NoAssumptions {
				rb.skip = "assumes " + rb.assume + " (left out by --no-assumptions)"
			}
			return []*probe{rb}
		}})
}

// absentStore returns a store id that neither the chain's store list nor
// the keyring holds, counting down from firstAbsentStore.
func absentStore(listed map[string]bool, keyring map[string]string) string {
	for id := firstAbsentStore; id > firstAbsentStore-1000; id-- {
		s := strconv.Itoa(id)
		if _, inKeyring := keyring[s]; !listed[s] && !inKeyring {
			return s
		}
	}
	return ""
}

var supplierIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9-]{0,31}$`)

// posPage is the probe of one POS page; a page with a next_cursor queues the
// next one, up to posMaxPages.
func posPage(path string, query url.Values, store string, page int, cursor string) *probe {
	q := url.Values{}
	for k, v := range query {
		q[k] = v
	}
	q.Set("limit", fmt.Sprint(posPageLimit))
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	return &probe{op: opListPOS, name: fmt.Sprintf("valid key, page %d", page), expect: []int{200}, positive: true,
		build: func(st *state) (request, string) {
			if page == 1 || st.walk == nil {
				st.walk = &rules.Walk{}
			}
			r := get(path, q, keyOwn, store)
			r.walk = st.walk
			return r, ""
		},
		learn: func(st *state, body []byte) []*probe {
			learnSKU(st, query.Get("sku"), body)
			var v struct {
				NextCursor string `json:"next_cursor"`
			}
			if page >= posMaxPages || json.Unmarshal(body, &v) != nil || v.NextCursor == "" || len(v.NextCursor) > 256 {
				return nil
			}
			return []*probe{posPage(path, query, store, page+1, v.NextCursor)}
		}}
}

// readBack reads the order the check just raised (rule order.readback); it
// assumes StoreLink keeps state.
func readBack(store string) *probe {
	return &probe{op: opGetOrder, name: "read back the raised order", expect: []int{200}, positive: true,
		assume: assumeState, assumes: []string{rules.OrderReadBack},
		build: func(st *state) (request, string) {
			r := get("/v1/stores/"+store+"/replenishment/"+url.PathEscape(st.createdID), nil, keyOwn, store)
			r.raised = st.raised
			r.asGiven = !orderIDPattern.MatchString(st.createdID)
			return r, ""
		}}
}

// otherStore returns a keyring store other than store, the lowest one.
func otherStore(keyring map[string]string, store string) string {
	for _, s := range sortedStores(keyring) {
		if s != store {
			return s
		}
	}
	return ""
}

// onlyDeclared reports whether an object has no property but the
// declared ones.
func onlyDeclared(obj map[string]json.RawMessage, declared []string) bool {
	for k := range obj {
		if !slices.Contains(declared, k) {
			return false
		}
	}
	return obj != nil
}
