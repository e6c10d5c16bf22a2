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

// Identifiers the negative probes use. They are well formed where the probe
// needs them to be, and far outside the ranges StoreLink hands out. The
// contract reserves none of them, so the probes that need them to name
// nothing are labelled assumptions (see assumeUnknown); the store id is
// instead picked from outside the chain's own store list.
const (
	// firstAbsentStore is where the search for a store id the store list
	// does not hold starts, counting down.
	firstAbsentStore = 999999
	unknownSKU       = "99999999999999"
	unknownSupplier  = "ZZ-CONTRACT-CHECK-UNKNOWN"
	unknownOrder     = "ZZ-CONTRACT-CHECK-UNKNOWN"
	malformedSKU     = "not-a-sku"
	// unknownKey is a key no StoreLink issues: it proves an unknown key is
	// refused with 401 rather than, say, treated like no key at all.
	unknownKey = "storelink-contract-unknown-key"
	// placeholderSupplier and placeholderOrder fill paths whose probe is
	// decided before the id matters (a missing key, another store's key).
	placeholderSupplier = "SUP-CONTRACT-CHECK"
	placeholderOrder    = "RO-CONTRACT-CHECK"
)

// assumeUnknown is what a probe of a made-up id assumes.
func assumeUnknown(what, id string) string {
	return fmt.Sprintf("that %s %s names nothing, which the contract does not promise (no id is reserved)", what, id)
}

// assumeState is what the read-back of a raised order assumes.
const assumeState = "that StoreLink keeps the order it raised and reads it back as raised; a server without state (a mock generated from the contract) does not"

// Bounds of the POS pagination walk: small pages so that even a quiet SKU
// shows a cursor, and few of them so the walk stays cheap.
const (
	posPageLimit = 10
	posMaxPages  = 3
	posWindow    = 7 * 24 * time.Hour
)

// orderReason is the reason written on the one order a check may raise, so
// whoever sees it knows where it came from.
const orderReason = "StoreLink contract check (storelink-contract --allow-writes); not a real need, safe to cancel."

// keyChoice says which key a probe sends. Probes name keys by role, and the
// runner looks the key up only when it builds the request, so nothing but
// the request header ever holds one.
type keyChoice int

const (
	keyNone    keyChoice = iota // no key header at all
	keyOwn                      // the key of the store in the path (or of Config.Store)
	keyOther                    // the key of another store in the keyring
	keyUnknown                  // a key StoreLink cannot know
)

// request is what a probe sends. store names the store whose key keyOwn
// means, and the store keyOther must differ from.
type request struct {
	method string
	path   string
	query  url.Values
	body   any
	key    keyChoice
	store  string
	// raised is the order a read-back expects (order.readback); walk the
	// POS walk a page belongs to. Neither is sent.
	raised *sl.OrderRequest
	walk   *rules.Walk
	// asGiven marks a request whose id came from StoreLink or the user
	// and may break the contract's pattern: the request is sent as it
	// is, without validating it first (the id's shape is judged where
	// StoreLink answers with it).
	asGiven bool
	// expect, when set, replaces the probe's expected statuses; unknowable
	// says why a refusal among them is for a reason the probe could not
	// know.
	expect     []int
	unknowable string
	// assume, when set, replaces the probe's assumption: what a request
	// built from learned ids stands on.
	assume string
}

func (r request) target() string {
	if len(r.query) == 0 {
		return r.path
	}
	return r.path + "?" + r.query.Encode()
}

// probe is one request the check sends and what the contract says must come
// back.
type probe struct {
	op     string
	name   string
	expect []int
	// positive probes send a request the contract accepts; the check
	// validates the request too, so a malformed probe is the checker's bug
	// and not StoreLink's drift.
	positive bool
	// skip, when set, is why the probe is not sent.
	skip string
	// build returns the request, or why it cannot be sent given what the
	// earlier probes found.
	build func(*state) (request, string)
	// learn takes what later probes need from a response with an expected
	// status, and returns probes to run next.
	learn func(*state, []byte) []*probe
	// assume, when set, is what the probe assumes beyond the contract; its
	// wrong-status findings, and its findings of the rules in assumes, are
	// labelled assumption, and Config.NoAssumptions skips it.
	assume  string
	assumes []string
	// serves lists the operations that need what this probe learns: with
	// --operation selecting one of them, the probe is sent even when its
	// own operation is not selected, and its result left out of the
	// report.
	serves []string
}

// state is what probes learn from earlier responses.
type state struct {
	supplierID string
	// minOrder and casePack are the supplier's minimum order and the
	// SKU's case pack, 0 until read; minRead is set once the supplier's
	// answer was read (a supplier without a minimum leaves minOrder 0).
	minOrder int64
	minRead  bool
	casePack int64
	// listed holds the store ids of the chain's store list; nil until the
	// list is read.
	listed map[string]bool
	// walk is the POS walk of the valid-key pages.
	walk *rules.Walk
	// sku is the SKU StoreLink's inventory or POS answer named
	// (learnSKU).
	sku string
	// zones are the stores' timezones, read when the contract declares
	// store-local times (localtime.go); nil for a store whose zone could
	// not be read.
	zones map[string]*time.Location
	// createdID and raised are the order the write probe raised.
	createdID string
	raised    *sl.OrderRequest
}

// orderQty is the quantity the write probe orders: the smallest whole
// number of cases at or above the supplier's minimum, which the contract
// says StoreLink raises (201).
func (st *state) orderQty() int64 {
	qty := max(st.minOrder, 1)
	if st.casePack > 1 {
		qty = (qty + st.casePack - 1) / st.casePack * st.casePack
	}
	return min(qty, 100000)
}

func fixed(r request) func(*state) (request, string) {
	return func(*state) (request, string) { return r, "" }
}

func get(path string, query url.Values, key keyChoice, store string) request {
	return request{method: http.MethodGet, path: path, query: query, key: key, store: store}
}

// plan lists the probes of a check, in the order they are sent. It sends
// nothing; the write probes are in it only when writes are allowed. The
// contract's x-korral-key-scope of each operation decides what another
// store's key must get: 403 where a key opens only its own store, the answer
// itself where any valid key reads.
func plan(cfg Config, sp *spec) []*probe {
	store, sku := cfg.Store, cfg.SKU
	other := otherStore(cfg.Keyring, store)
	noOther := ""
	if other == "" {
		noOther = "the keyring holds one store; add a second to check that a key does not open another store"
	}
	since := cfg.Now().UTC().Add(-posWindow).Format(time.RFC3339)
	q := func(kv ...string) url.Values {
		v := url.Values{}
		for i := 0; i+1 < len(kv); i += 2 {
			v.Set(kv[i], kv[i+1])
		}
		return v
	}
	storePath := "/v1/stores/" + store
	inventory := q("sku", sku)
	pos := q("sku", sku, "since", since)

	var ps []*probe
	add := func(p *probe) {
		if p.assume != "" && cfg.NoAssumptions && p.skip == "" {
			p.skip = "assumes " + p.assume + " (left out by --no-assumptions)"
		}
		ps = append(ps, p)
	}
	// otherKey is the probe of another store's key on an operation, as its
	// key scope says.
	otherKey := func(op string, build func(*state) (request, string)) *probe {
		p := &probe{op: op, name: "another store's key", expect: []int{403}, skip: noOther, build: build}
		if sp.ops[op].keyScope == scopeChain {
			p.expect, p.positive = []int{200}, true
		}
		return p
	}

	// listStores. The first probe doubles as the check that StoreLink is
	// reachable at all; it also learns which store ids the chain has.
	add(&probe{op: opListStores, name: "valid key", expect: []int{200}, positive: true,
		build: fixed(get("/v1/stores", nil, keyOwn, store)),
		learn: func(st *state, body []byte) []*probe {
			learnStores(st, body)
			return nil
		}})
	add(&probe{op: opListStores, name: "no key", expect: []int{401},
		build: fixed(get("/v1/stores", nil, keyNone, store))})
	add(&probe{op: opListStores, name: "unknown key", expect: []int{401}, assume: "that Korral IT never issued the key " + unknownKey,
		build: fixed(get("/v1/stores", nil, keyUnknown, store))})
	add(otherKey(opListStores, fixed(get("/v1/stores", nil, keyOther, store))))

	// getStore.
	add(&probe{op: opGetStore, name: "valid key", expect: []int{200}, positive: true,
		build: fixed(get(storePath, nil, keyOwn, store))})
	add(&probe{op: opGetStore, name: "no key", expect: []int{401},
		build: fixed(get(storePath, nil, keyNone, store))})
	add(otherKey(opGetStore, fixed(get(storePath, nil, keyOther, store))))
	// A store the chain's own list does not hold does not exist. A key
	// opens only its own store, so StoreLink may refuse the key (403)
	// before it looks the store up (404); the contract allows either.
	// Without a store list the keyring says which stores are known, and
	// the probe stands on an assumption.
	add(&probe{op: opGetStore, name: "store absent from the store list", expect: []int{403, 404},
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

	// getInventory.
	invPath := storePath + "/inventory"
	add(&probe{op: opGetInventory, name: "valid key", expect: []int{200}, positive: true,
		build: fixed(get(invPath, inventory, keyOwn, store)),
		learn: func(st *state, body []byte) []*probe {
			learnSKU(st, sku, body)
			return nil
		}})
	add(&probe{op: opGetInventory, name: "no key", expect: []int{401},
		build: fixed(get(invPath, inventory, keyNone, store))})
	add(otherKey(opGetInventory, fixed(get(invPath, inventory, keyOther, store))))
	add(&probe{op: opGetInventory, name: "unknown SKU " + unknownSKU, expect: []int{404}, assume: assumeUnknown("SKU", unknownSKU),
		build: fixed(get(invPath, q("sku", unknownSKU), keyOwn, store))})
	add(&probe{op: opGetInventory, name: "malformed SKU", expect: []int{400},
		build: fixed(get(invPath, q("sku", malformedSKU), keyOwn, store))})

	// listPOSTransactions, following the cursor for a few pages.
	posPath := storePath + "/pos"
	add(posPage(posPath, pos, store, 1, ""))
	add(&probe{op: opListPOS, name: "no key", expect: []int{401},
		build: fixed(get(posPath, pos, keyNone, store))})
	add(otherKey(opListPOS, fixed(get(posPath, pos, keyOther, store))))
	// The smallest page the contract allows: a page may hold at most
	// limit transactions (pos.limit), which the walk's pages of 10 do not
	// show against a StoreLink that fills small pages anyway.
	smallest := q("sku", sku, "since", since, "limit", "1")
	add(&probe{op: opListPOS, name: "valid key, limit=1", expect: []int{200}, positive: true,
		build: func(*state) (request, string) {
			r := get(posPath, smallest, keyOwn, store)
			r.walk = &rules.Walk{}
			return r, ""
		}})
	add(&probe{op: opListPOS, name: "limit=0", expect: []int{400},
		build: fixed(get(posPath, q("sku", sku, "since", since, "limit", "0"), keyOwn, store))})
	add(&probe{op: opListPOS, name: "malformed since", expect: []int{400},
		build: fixed(get(posPath, q("sku", sku, "since", "yesterday"), keyOwn, store))})

	// getSKU, which also names the supplier the supplier probe reads.
	// The SKU is the one StoreLink's inventory or POS answer named, unless
	// --sku was given (learnSKU).
	skuRead := func(key keyChoice) func(*state) (request, string) {
		return func(st *state) (request, string) { return skuRequest(st, cfg, key, store), "" }
	}
	add(&probe{op: opGetSKU, name: "valid key", expect: []int{200}, positive: true, serves: []string{opGetSupplier, opCreateOrder},
		build: skuRead(keyOwn),
		learn: func(st *state, body []byte) []*probe {
			learnFromSKU(st, cfg, body)
			return nil
		}})
	add(&probe{op: opGetSKU, name: "no key", expect: []int{401}, build: skuRead(keyNone)})
	add(otherKey(opGetSKU, skuRead(keyOther)))
	add(&probe{op: opGetSKU, name: "unknown SKU " + unknownSKU, expect: []int{404}, assume: assumeUnknown("SKU", unknownSKU),
		build: fixed(get("/v1/skus/"+unknownSKU, nil, keyOwn, store))})
	add(&probe{op: opGetSKU, name: "malformed SKU", expect: []int{400},
		build: fixed(get("/v1/skus/"+malformedSKU, nil, keyOwn, store))})

	// getSupplier.
	// The supplier is the one --supplier names, or the one the SKU
	// names, as given: an id that breaks the contract's pattern is
	// reported on the SKU's answer, and the supplier is still read.
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
	add(&probe{op: opGetSupplier, name: "valid key", expect: []int{200}, positive: true, serves: []string{opCreateOrder},
		build: supplier(keyOwn),
		learn: func(st *state, body []byte) []*probe {
			var v struct {
				MinimumOrderUnits *int64 `json:"minimum_order_units"`
			}
			if json.Unmarshal(body, &v) != nil {
				return nil
			}
			// A supplier read without the contract's minimum may have
			// one under another name (a rename): only a supplier whose
			// answer keeps the contract counts as read.
			var all map[string]json.RawMessage
			_ = json.Unmarshal(body, &all)
			if v.MinimumOrderUnits != nil && *v.MinimumOrderUnits > 0 && *v.MinimumOrderUnits <= 100000 {
				st.minOrder, st.minRead = *v.MinimumOrderUnits, true
			} else if v.MinimumOrderUnits == nil && onlyDeclared(all, sp.declared("Supplier")) {
				st.minRead = true
			}
			return nil
		}})
	// Without a key, the supplier the SKU named: a made-up id would let a
	// StoreLink that reads suppliers without a key answer 404, hiding it.
	add(&probe{op: opGetSupplier, name: "no key", expect: []int{401},
		build: func(st *state) (request, string) {
			path, asGiven := supplierPath(st, cfg)
			r := get(path, nil, keyNone, store)
			r.asGiven = asGiven
			return r, ""
		}})
	add(otherKey(opGetSupplier, supplier(keyOther)))
	add(&probe{op: opGetSupplier, name: "unknown supplier", expect: []int{404}, assume: assumeUnknown("supplier", unknownSupplier),
		build: fixed(get("/v1/suppliers/"+unknownSupplier, nil, keyOwn, store))})

	// getReplenishmentOrder: the order --order names, or, with writes
	// allowed, the one the write raises, so its probes follow the write.
	orders := orderProbes(cfg, otherKey)
	if !ordersAfterWrite(cfg) {
		for _, p := range orders {
			add(p)
		}
	}

	// createReplenishmentOrder: only with writes allowed, and only at the
	// named write store.
	if !cfg.AllowWrites {
		add(&probe{op: opCreateOrder, name: "raise an order", expect: []int{201},
			skip: "writes not allowed (pass --allow-writes and --write-store to raise one order and read it back)"})
		return ps
	}
	ws := cfg.WriteStore
	wsPath := "/v1/stores/" + ws + "/replenishment"
	otherWS := otherStore(cfg.Keyring, ws)
	post := func(key keyChoice, qty int64) request {
		// The body in the names of the contract in use (sp.wireBody); the
		// order it raises in the client's terms, for the rules.
		return request{method: http.MethodPost, path: wsPath, key: key, store: ws,
			body:   sp.wireBody(opCreateOrder, map[string]any{"sku": sku, "quantity_units": qty, "reason": orderReason}),
			raised: &sl.OrderRequest{SKU: sku, QuantityUnits: qty, Reason: orderReason}}
	}
	add(&probe{op: opCreateOrder, name: "no key", expect: []int{401},
		build: fixed(post(keyNone, 1))})
	p := otherKey(opCreateOrder, fixed(post(keyOther, 1)))
	p.skip = ""
	if otherWS == "" {
		p.skip = noOther
	}
	add(p)
	// The 400/422 split: a quantity the schema refuses is 400 whatever the
	// supplier, and one the schema takes but the supplier's minimum does
	// not is 422.
	add(&probe{op: opCreateOrder, name: "quantity_units=0", expect: []int{400},
		build: fixed(post(keyOwn, 0))})
	add(&probe{op: opCreateOrder, name: "quantity below the supplier's minimum", expect: []int{422},
		build: func(st *state) (request, string) {
			if st.minOrder < 2 {
				return request{}, "the SKU's supplier has no minimum order above 1 unit (or was not read)"
			}
			return post(keyOwn, st.minOrder-1), ""
		}})
	add(&probe{op: opCreateOrder, name: "raise one order", expect: []int{201},
		build: func(st *state) (request, string) {
			// The smallest whole number of cases the supplier accepts,
			// so the check orders as little as it can, and nothing the
			// contract lets StoreLink refuse.
			r := post(keyOwn, st.orderQty())
			if !st.minRead {
				// Without the supplier's minimum, StoreLink may refuse
				// the quantity for a reason the probe cannot know.
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
	if ordersAfterWrite(cfg) {
		for _, p := range orders {
			add(p)
		}
	}
	return ps
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

// readBack reads the order the check just raised. What it reads back is
// held to the order raised (rule order.readback), which needs a StoreLink
// that keeps state: the probe is labelled an assumption.
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
