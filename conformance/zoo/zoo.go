// Package zoo builds StoreLink variants that differ from the contract the
// way other teams' StoreLinks do. A [Member] is the mock behind a list of
// [Departure]s, each rewriting one thing on the wire. To add a variant, add
// an entry to [Members]. It must not import the contract checker or the MCP
// server.
package zoo

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/korral/storelink/mockstorelink"
)

// Operation ids, as the contract names them.
const (
	OpListStores  = "listStores"
	OpGetStore    = "getStore"
	OpInventory   = "getInventory"
	OpListPOS     = "listPOSTransactions"
	OpCreateOrder = "createReplenishmentOrder"
	OpGetOrder    = "getReplenishmentOrder"
	OpGetSKU      = "getSKU"
	OpGetSupplier = "getSupplier"
)

// Exchange is one request and its answer as a departure sees them.
type Exchange struct {
	Op      string
	Request *http.Request
	// Body is the request body (requests) or the answer's (responses).
	Body []byte
	// RequestBody is the request body as the mock got it (responses).
	RequestBody []byte
	Status      int
	Header      http.Header
}

// Departure is one way a member differs from the contract.
type Departure struct {
	// ID names it in tests and reports, e.g. "no-opening-hours".
	ID string
	// Request may rewrite the request or answer it outright (non-nil).
	Request func(m *Member, x *Exchange) (answer *Exchange)
	// Response rewrites the mock's answer on its way out.
	Response func(m *Member, x *Exchange)
}

// Member is one StoreLink variant. It is an http.Handler, safe for
// concurrent use.
type Member struct {
	Name       string
	Departures []Departure
	Mock       *mockstorelink.Server

	mu  sync.Mutex
	ids map[string]string // the mock's order id -> the member's
	rev map[string]string // the member's order id -> the mock's
	// accepted holds orders taken without asking the mock.
	accepted []map[string]any
	seq      int
}

// New returns the member named name with the given departures in front of
// mock.
func New(name string, mock *mockstorelink.Server, deps ...Departure) *Member {
	return &Member{Name: name, Departures: deps, Mock: mock, ids: map[string]string{}, rev: map[string]string{}}
}

// ServeHTTP runs the request through the departures, the mock, and the
// departures again in reverse order.
func (m *Member) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	x := &Exchange{Op: operation(r.Method, r.URL.Path), Request: r, Body: body}
	var answer *Exchange
	for _, d := range m.Departures {
		if d.Request == nil {
			continue
		}
		if answer = d.Request(m, x); answer != nil {
			break
		}
	}
	if answer == nil {
		inner := x.Request.Clone(x.Request.Context())
		inner.Body = io.NopCloser(bytes.NewReader(x.Body))
		inner.ContentLength = int64(len(x.Body))
		rec := httptest.NewRecorder()
		m.Mock.ServeHTTP(rec, inner)
		answer = &Exchange{Op: x.Op, Request: x.Request, Body: rec.Body.Bytes(), RequestBody: x.Body, Status: rec.Code, Header: rec.Header()}
	}
	// Every answer leaves through the response departures.
	for i := len(m.Departures) - 1; i >= 0; i-- {
		if d := m.Departures[i]; d.Response != nil {
			d.Response(m, answer)
		}
	}
	for k, v := range answer.Header {
		if k != "Content-Length" {
			w.Header()[k] = v
		}
	}
	w.WriteHeader(answer.Status)
	_, _ = w.Write(answer.Body)
}

// operation names the contract operation of a method and path.
func operation(method, path string) string {
	seg := strings.Split(strings.Trim(path, "/"), "/")
	if len(seg) < 2 || seg[0] != "v1" {
		return ""
	}
	switch {
	case seg[1] == "stores" && len(seg) == 2 && method == http.MethodGet:
		return OpListStores
	case seg[1] == "skus" && len(seg) == 3:
		return OpGetSKU
	case seg[1] == "suppliers" && len(seg) == 3:
		return OpGetSupplier
	case seg[1] != "stores":
		return ""
	case len(seg) == 3:
		return OpGetStore
	case len(seg) == 4 && seg[3] == "inventory":
		return OpInventory
	case len(seg) == 4 && seg[3] == "pos":
		return OpListPOS
	case len(seg) == 4 && seg[3] == "replenishment" && method == http.MethodPost:
		return OpCreateOrder
	case len(seg) == 5 && seg[3] == "replenishment":
		return OpGetOrder
	}
	return ""
}

// Orders is what the member holds, in its shape, oldest first.
func (m *Member) Orders() []map[string]any {
	var out []map[string]any
	for _, o := range m.Mock.Orders() {
		b, _ := json.Marshal(o)
		x := &Exchange{Op: OpGetOrder, Body: b, Status: http.StatusOK, Header: http.Header{}}
		for i := len(m.Departures) - 1; i >= 0; i-- {
			if d := m.Departures[i]; d.Response != nil {
				d.Response(m, x)
			}
		}
		var v map[string]any
		if json.Unmarshal(x.Body, &v) == nil {
			out = append(out, v)
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return append(out, m.accepted...)
}

// editJSON decodes b, lets fn change it, and encodes it again; b is
// returned unchanged when it is not JSON.
func editJSON(b []byte, fn func(v any) any) []byte {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return b
	}
	out, err := json.Marshal(fn(v))
	if err != nil {
		return b
	}
	return append(out, '\n')
}

// at walks path ("*" for every array element) and calls fn on each object
// holding the last segment.
func at(v any, path []string, fn func(obj map[string]any, key string)) {
	if len(path) == 0 {
		return
	}
	if path[0] == "*" {
		if arr, ok := v.([]any); ok {
			for _, e := range arr {
				at(e, path[1:], fn)
			}
		}
		return
	}
	obj, ok := v.(map[string]any)
	if !ok {
		return
	}
	if len(path) == 1 {
		fn(obj, path[0])
		return
	}
	at(obj[path[0]], path[1:], fn)
}

func pointer(p string) []string { return strings.Split(strings.TrimPrefix(p, "/"), "/") }

// jsonAnswer is an answer with a JSON body.
func jsonAnswer(x *Exchange, status int, v any) *Exchange {
	b, _ := json.Marshal(v)
	h := http.Header{}
	h.Set("Content-Type", "application/json")
	return &Exchange{Op: x.Op, Request: x.Request, Body: append(b, '\n'), RequestBody: x.Body, Status: status, Header: h}
}
