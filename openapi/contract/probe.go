package contract

import (
	"net/http"
	"net/url"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

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
