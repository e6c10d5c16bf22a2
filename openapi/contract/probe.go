package contract

import (
	"net/http"
	"net/url"
	"time"

	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// keyChoice says which key a probe sends, by role; only the request header
// holds the key.
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
	// asGiven marks a request with an id from StoreLink or the user; it is
	// sent without validation.
	asGiven bool
	// expect, when set, replaces the expected statuses; unknowable says
	// why a refusal cannot be checked.
	expect     []int
	unknowable string
	// assume, when set, replaces the probe's assumption.
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
	// positive probes send a request the contract accepts, validated too.
	positive bool
	// skip, when set, is why the probe is not sent.
	skip string
	// build returns the request, or why it cannot be sent.
	build func(*state) (request, string)
	// learn keeps what later probes need and returns probes to run next.
	learn func(*state, []byte) []*probe
	// assume, when set, is what the probe assumes beyond the contract;
	// Config.NoAssumptions skips it.
	assume  string
	assumes []string
	// serves lists the operations that need what this probe learns; it is
	// sent for them even when its own operation is not selected.
	serves []string
}

// state is what probes learn from earlier responses.
type state struct {
	supplierID string
	// minOrder and casePack are 0 until read; minRead is set once the
	// supplier's answer was read.
	minOrder int64
	minRead  bool
	casePack int64
	// listed holds the chain's store ids; nil until read.
	listed map[string]bool
	// walk is the POS walk of the valid-key pages.
	walk *rules.Walk
	// sku is the SKU StoreLink's answers named (learnSKU).
	sku string
	// zones are the stores' timezones, when the contract declares
	// store-local times.
	zones map[string]*time.Location
	// createdID and raised are the order the write probe raised.
	createdID string
	raised    *sl.OrderRequest
}

// orderQty is the smallest whole number of cases at or above the
// supplier's minimum.
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
