package zoo

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mockstorelink"
)

// Spec is a named member: its departures, to put in front of a mock.
type Spec struct {
	Name string
	// Kind is the departure it stands for, in the brief's words.
	Kind       string
	Departures []Departure
}

// Build returns the member in front of mock.
func (s Spec) Build(mock *mockstorelink.Server) *Member { return New(s.Name, mock, s.Departures...) }

// Members lists the variants, one per kind of departure.
func Members() []Spec {
	return []Spec{
		{Name: "no-opening-hours", Kind: "a missing qualifier field", Departures: []Departure{DropField(OpGetStore, "/opening_hours")}},
		{Name: "no-store-list", Kind: "a missing endpoint", Departures: []Departure{DropEndpoint(OpListStores)}},
		{Name: "lead-time-hours", Kind: "another unit", Departures: []Departure{ScaleField(OpGetSupplier, "/lead_time_days", "lead_time_hours", 24)}},
		{Name: "request-quantity", Kind: "other request-body names, with validation errors that name the field", Departures: []Departure{
			RequestRename(OpCreateOrder, "quantity_units", "quantity", FastAPI),
			RenameField([]string{OpCreateOrder, OpGetOrder}, "/quantity_units", "quantity"),
		}},
		{Name: "problem-errors", Kind: "another error envelope (RFC 9457)", Departures: []Departure{ErrorEnvelope(Problem)}},
		{Name: "jsonapi-errors", Kind: "another error envelope (JSON:API)", Departures: []Departure{ErrorEnvelope(JSONAPI)}},
		{Name: "ord-ids", Kind: "ids of another shape", Departures: []Departure{OrderIDs("ord_")}},
		{Name: "cursor-no-total", Kind: "another pagination (a cursor, no total)", Departures: []Departure{DropField(OpListPOS, "/total_count")}},
		{Name: "local-times", Kind: "timestamps without an offset", Departures: []Departure{LocalTimestamps()}},
		{Name: "validates-nothing", Kind: "a StoreLink that validates nothing", Departures: []Departure{ValidatesNothing()}},
	}
}

// Lookup returns the spec named name.
func Lookup(name string) (Spec, bool) {
	for _, s := range Members() {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// DropField leaves the field at ptr ("*" for every array element) out of
// op's successful answers.
func DropField(op, ptr string) Departure {
	return Departure{ID: "drop " + op + " " + ptr, Response: func(_ *Member, x *Exchange) {
		if x.Op != op || x.Status >= 300 {
			return
		}
		x.Body = editJSON(x.Body, func(v any) any {
			at(v, pointer(ptr), func(obj map[string]any, key string) { delete(obj, key) })
			return v
		})
	}}
}

// RenameField gives the field at ptr another name in the answers of ops.
func RenameField(ops []string, ptr, name string) Departure {
	return Departure{ID: fmt.Sprintf("rename %v %s to %s", ops, ptr, name), Response: func(_ *Member, x *Exchange) {
		if !slices.Contains(ops, x.Op) || x.Status >= 300 {
			return
		}
		x.Body = editJSON(x.Body, func(v any) any {
			at(v, pointer(ptr), func(obj map[string]any, key string) {
				if val, ok := obj[key]; ok {
					delete(obj, key)
					obj[name] = val
				}
			})
			return v
		})
	}}
}

// ScaleField renames the number at ptr in op's answers and multiplies it by
// factor.
func ScaleField(op, ptr, name string, factor int64) Departure {
	return Departure{ID: fmt.Sprintf("%s %s as %s (x%d)", op, ptr, name, factor), Response: func(_ *Member, x *Exchange) {
		if x.Op != op || x.Status >= 300 {
			return
		}
		x.Body = editJSON(x.Body, func(v any) any {
			at(v, pointer(ptr), func(obj map[string]any, key string) {
				n, ok := obj[key].(json.Number)
				if !ok {
					return
				}
				i, err := n.Int64()
				if err != nil {
					return
				}
				delete(obj, key)
				obj[name] = i * factor
			})
			return v
		})
	}}
}

// DropEndpoint answers op with 404, as a StoreLink without it does.
func DropEndpoint(op string) Departure {
	return Departure{ID: "no " + op, Request: func(_ *Member, x *Exchange) *Exchange {
		if x.Op != op {
			return nil
		}
		return jsonAnswer(x, http.StatusNotFound, contractError("not_found", "Not Found"))
	}}
}

// contractError is the contract's error body; ErrorEnvelope rewrites it.
func contractError(code, message string) map[string]any {
	return map[string]any{"error": map[string]any{"code": code, "message": message}}
}

// Style is an error body style.
type Style string

// The styles real services use.
const (
	// FastAPI: {"detail": "text"}, and validation errors as
	// {"detail": [{"loc": ["body", "field"], "msg", "type"}]}.
	FastAPI Style = "fastapi"
	// Problem: RFC 9457 problem details, application/problem+json, with
	// validation errors in invalid-params.
	Problem Style = "problem"
	// JSONAPI: {"errors": [{"status", "title", "detail", "source": {"pointer"}}]}.
	JSONAPI Style = "jsonapi"
)

// ErrorEnvelope rewrites every contract error body into style.
func ErrorEnvelope(style Style) Departure {
	return Departure{ID: "errors as " + string(style), Response: func(_ *Member, x *Exchange) {
		if x.Status < 400 {
			return
		}
		var body struct {
			Error *struct {
				Code    string `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if json.Unmarshal(x.Body, &body) != nil || body.Error == nil {
			return
		}
		var v any
		switch style {
		case FastAPI:
			v = map[string]any{"detail": body.Error.Message}
		case Problem:
			x.Header.Set("Content-Type", "application/problem+json")
			v = map[string]any{"type": "about:blank", "title": http.StatusText(x.Status), "status": x.Status, "detail": body.Error.Message}
		case JSONAPI:
			x.Header.Set("Content-Type", "application/vnd.api+json")
			v = map[string]any{"errors": []any{map[string]any{"status": fmt.Sprint(x.Status), "code": body.Error.Code,
				"title": http.StatusText(x.Status), "detail": body.Error.Message}}}
		}
		b, _ := json.Marshal(v)
		x.Body = append(b, '\n')
	}}
}

// validationError is a 422 naming the body field that is missing, in style.
func validationError(x *Exchange, style Style, field string) *Exchange {
	switch style {
	case Problem:
		a := jsonAnswer(x, http.StatusUnprocessableEntity, map[string]any{"type": "about:blank", "title": "Unprocessable Entity",
			"status": 422, "invalid-params": []any{map[string]any{"name": field, "reason": "is required"}}})
		a.Header.Set("Content-Type", "application/problem+json")
		return a
	case JSONAPI:
		return jsonAnswer(x, http.StatusUnprocessableEntity, map[string]any{"errors": []any{map[string]any{"status": "422",
			"title": "Invalid Attribute", "detail": field + " is required", "source": map[string]any{"pointer": "/" + field}}}})
	}
	return jsonAnswer(x, http.StatusUnprocessableEntity, map[string]any{"detail": []any{map[string]any{
		"loc": []any{"body", field}, "msg": "Field required", "type": "missing"}}})
}

// RequestRename makes op's request body carry name instead of field: a
// body without name is refused in style, one with it is passed on renamed.
// A request whose key does not open its store is passed on untouched.
func RequestRename(op, field, name string, style Style) Departure {
	return Departure{ID: fmt.Sprintf("%s body %s as %s", op, field, name), Request: func(m *Member, x *Exchange) *Exchange {
		if x.Op != op {
			return nil
		}
		var body map[string]any
		if json.Unmarshal(x.Body, &body) != nil {
			return nil
		}
		v, ok := body[name]
		if !ok {
			if !m.keyOpens(x.Request) {
				return nil
			}
			return validationError(x, style, name)
		}
		delete(body, name)
		delete(body, field)
		body[field] = v
		x.Body, _ = json.Marshal(body)
		return nil
	}}
}

// keyOpens reports whether the request's store key is the mock's key of
// the store its path names.
func (m *Member) keyOpens(r *http.Request) bool {
	seg := strings.Split(strings.Trim(r.URL.Path, "/"), "/")
	if len(seg) < 3 || seg[1] != "stores" {
		return false
	}
	key := r.Header.Get("X-Korral-Store-Key")
	return key != "" && m.Mock.DefaultKeyring()[seg[2]] == key
}

// OrderIDs gives orders ids of another shape: prefix and ten hex digits.
// The member maps them to the mock's and back.
func OrderIDs(prefix string) Departure {
	return Departure{ID: "order ids as " + prefix + "…",
		Request: func(m *Member, x *Exchange) *Exchange {
			if x.Op != OpGetOrder {
				return nil
			}
			seg := strings.Split(x.Request.URL.Path, "/")
			id := seg[len(seg)-1]
			m.mu.Lock()
			inner, ok := m.rev[id]
			m.mu.Unlock()
			if !ok {
				return jsonAnswer(x, http.StatusNotFound, contractError("not_found", "order "+id+" not found"))
			}
			seg[len(seg)-1] = inner
			r := x.Request.Clone(x.Request.Context())
			r.URL.Path = strings.Join(seg, "/")
			r.URL.RawPath = ""
			x.Request = r
			return nil
		},
		Response: func(m *Member, x *Exchange) {
			if (x.Op != OpCreateOrder && x.Op != OpGetOrder) || x.Status >= 300 {
				return
			}
			x.Body = editJSON(x.Body, func(v any) any {
				at(v, []string{"order_id"}, func(obj map[string]any, key string) {
					if id, ok := obj[key].(string); ok {
						obj[key] = m.outerID(prefix, id)
					}
				})
				return v
			})
		}}
}

// outerID is the member's id of the mock's order id, made on first sight.
func (m *Member) outerID(prefix, inner string) string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if id, ok := m.ids[inner]; ok {
		return id
	}
	m.seq++
	id := fmt.Sprintf("%s%010x", prefix, 0x9f7dcc5d27+m.seq*7919)
	m.ids[inner], m.rev[id] = id, inner
	return id
}

// LocalTimestamps sends every time of an answer as store-local time
// without an offset.
func LocalTimestamps() Departure {
	var walk func(v any) any
	walk = func(v any) any {
		switch t := v.(type) {
		case map[string]any:
			for k, e := range t {
				t[k] = walk(e)
			}
		case []any:
			for i, e := range t {
				t[i] = walk(e)
			}
		case string:
			if ts, err := time.Parse(time.RFC3339Nano, t); err == nil && strings.Contains(t, "T") {
				return ts.Format("2006-01-02T15:04:05")
			}
		}
		return v
	}
	return Departure{ID: "timestamps without an offset", Response: func(_ *Member, x *Exchange) {
		if x.Status < 300 {
			x.Body = editJSON(x.Body, walk)
		}
	}}
}

// ValidatesNothing answers 201 to any invalid order body and keeps the
// order.
func ValidatesNothing() Departure {
	return Departure{ID: "no request validation", Response: func(m *Member, x *Exchange) {
		switch {
		case x.Op == OpCreateOrder && (x.Status == http.StatusBadRequest || x.Status == http.StatusUnprocessableEntity):
			var req map[string]any
			_ = json.Unmarshal(x.RequestBody, &req)
			seg := strings.Split(strings.Trim(x.Request.URL.Path, "/"), "/")
			now := time.Now().UTC().Truncate(time.Second)
			m.mu.Lock()
			m.seq++
			o := map[string]any{"order_id": fmt.Sprintf("RO-%s-9%05d", seg[2], m.seq), "store_id": seg[2], "sku": req["sku"],
				"quantity_units": req["quantity_units"], "reason": req["reason"], "status": "submitted",
				"submitted_at": now.Format(time.RFC3339), "expected_arrival": now.Add(48 * time.Hour).Format(time.RFC3339)}
			m.accepted = append(m.accepted, o)
			m.mu.Unlock()
			b, _ := json.Marshal(o)
			x.Status, x.Body = http.StatusCreated, append(b, '\n')
			x.Header.Set("Content-Type", "application/json")
		case x.Op == OpGetOrder && x.Status == http.StatusNotFound:
			seg := strings.Split(x.Request.URL.Path, "/")
			id := seg[len(seg)-1]
			m.mu.Lock()
			defer m.mu.Unlock()
			for _, o := range m.accepted {
				if o["order_id"] == id {
					b, _ := json.Marshal(o)
					x.Status, x.Body = http.StatusOK, append(b, '\n')
				}
			}
		}
	}}
}
