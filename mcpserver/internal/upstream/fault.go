package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// maxCause bounds the cause of a contract error, field and rule together, as
// the agent reads it and the log keeps it.
const maxCause = 160

// fault names what in a StoreLink answer broke the contract: where (a field
// path such as store.timezone, or body, status, a header) and the rule it
// broke; for a semantic rule of the contract (storelinkclient/rules) also
// the rule's id, which storelink-contract reports under the same name. It
// never holds text of the answer: StoreLink's words and values are
// untrusted, and may be huge or say anything. Unwrap keeps the error it
// stands for, so errors.Is still sees ErrMalformedResponse.
type fault struct {
	field string
	rule  string
	id    string
	err   error
}

func (f *fault) Error() string {
	s := f.field + ": " + f.rule
	if f.id != "" {
		s += " (rule " + f.id + ")"
	}
	if len(s) > maxCause {
		// Field and rule are ASCII, written here or checked by fieldPath.
		s = s[:maxCause-3] + "..."
	}
	return s
}

func (f *fault) Unwrap() error { return f.err }

// malformed is a fault of a body that decoded but breaks a rule of the
// contract the decoder does not check.
func malformed(field, rule string) error {
	return &fault{field: field, rule: rule, err: sl.ErrMalformedResponse}
}

// broken turns the first break of a semantic rule into the fault of the
// answer, rooted at the resource the route answers with; nil when the
// answer keeps every rule.
func broken(root string, found []rules.Finding) error {
	if len(found) == 0 {
		return nil
	}
	f := found[0]
	err := sl.ErrMalformedResponse
	if f.Rule == rules.POSCursor {
		err = fmt.Errorf("%w: %w", sl.ErrMalformedResponse, sl.ErrRepeatedCursor)
	}
	return &fault{field: pointerPath(root, f.Field), rule: f.Problem, id: f.Rule, err: err}
}

// pointerPath is a rule's JSON Pointer as a field path under root:
// /opening_hours/monday/opens is store.opening_hours.monday.opens.
func pointerPath(root, pointer string) string {
	return fieldPath(root, strings.ReplaceAll(strings.TrimPrefix(pointer, "/"), "/", "."))
}

// resources names the object each route answers with, the root of a
// fault's field path.
var resources = map[string]string{
	"/v1/stores":                                     "stores",
	"/v1/stores/{store_id}":                          "store",
	"/v1/stores/{store_id}/inventory":                "inventory",
	"/v1/stores/{store_id}/pos":                      "pos",
	"/v1/stores/{store_id}/replenishment":            "order",
	"/v1/stores/{store_id}/replenishment/{order_id}": "order",
	"/v1/skus/{sku}":                                 "sku",
	"/v1/suppliers/{supplier_id}":                    "supplier",
}

// describe names the contract break behind err, if err is one: a body that
// does not decode or breaks a rule, an answer too large, an error body on a
// success status, a status the contract does not allow, or a redirect.
func describe(route string, err error) (*fault, bool) {
	root := resources[route]
	if root == "" {
		root = "body"
	}
	var (
		f        *fault
		redirect *sl.RedirectError
		apiErr   *sl.APIError
		mismatch *json.UnmarshalTypeError
		syntax   *json.SyntaxError
		badTime  *time.ParseError
		badInt   *strconv.NumError
		missing  *sl.MissingFieldError
	)
	switch {
	case errors.As(err, &f):
		return f, true
	case errors.As(err, &missing):
		return &fault{field: fieldPath(root, missing.Field), rule: "required but missing", err: err}, true
	case errors.As(err, &redirect):
		rule := "a redirect"
		if redirect.StatusCode != 0 {
			rule = strconv.Itoa(redirect.StatusCode) + " redirect"
		}
		if redirect.Host != "" {
			rule += " to " + redirect.Host
		}
		if redirect.Followed {
			return &fault{field: "status", rule: rule + ", followed by the HTTP client", err: err}, true
		}
		return &fault{field: "status", rule: rule + ", not followed", err: err}, true
	case errors.Is(err, sl.ErrResponseTooLarge):
		return &fault{field: "body", rule: "larger than the response limit", err: err}, true
	case errors.As(err, &apiErr) && apiErr.ErrorInSuccess:
		return &fault{field: "body", rule: "an error body on a success status", err: err}, true
	case errors.As(err, &apiErr) && apiErr.Code == "" && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500 && apiErr.StatusCode != http.StatusTooManyRequests:
		return &fault{field: "status", rule: strconv.Itoa(apiErr.StatusCode) + " without StoreLink's error body", err: err}, true
	case errors.As(err, &apiErr) && undeclared(apiErr.StatusCode):
		return &fault{field: "status", rule: strconv.Itoa(apiErr.StatusCode) + " is not a status the contract allows", err: err}, true
	case !errors.Is(err, sl.ErrMalformedResponse):
		return nil, false
	case errors.As(err, &mismatch):
		return &fault{field: fieldPath(root, mismatch.Field), rule: "want " + jsonType(mismatch.Type), err: err}, true
	case errors.As(err, &syntax):
		return &fault{field: "body", rule: "not valid JSON", err: err}, true
	case errors.As(err, &badTime), strings.Contains(err.Error(), "Time.UnmarshalJSON:"):
		// encoding/json does not say which field held the time.
		return &fault{field: root, rule: "a timestamp is not RFC 3339", err: err}, true
	case errors.As(err, &badInt):
		// The only number the generated decoder parses itself.
		return &fault{field: "header Retry-After", rule: "not a whole number of seconds", err: err}, true
	case strings.Contains(err.Error(), "is not JSON"):
		return &fault{field: "body", rule: "not JSON (by its Content-Type)", err: err}, true
	case wrongSuccess.MatchString(err.Error()):
		// storelinkclient's own words, not StoreLink's.
		m := wrongSuccess.FindStringSubmatch(err.Error())
		return &fault{field: "status", rule: m[1] + " where the contract says " + m[2], err: err}, true
	default:
		return &fault{field: "body", rule: "does not match the contract", err: err}, true
	}
}

// wrongSuccess matches how storelinkclient.Result reports a success status
// other than the documented one.
var wrongSuccess = regexp.MustCompile(`status (\d{3}), want (\d{3})`)

// undeclared reports a status no StoreLink operation declares.
func undeclared(s int) bool {
	switch {
	case s >= 500, s == http.StatusBadRequest, s == http.StatusUnauthorized, s == http.StatusForbidden,
		s == http.StatusNotFound, s == http.StatusUnprocessableEntity, s == http.StatusTooManyRequests:
		return false
	}
	return true
}

// fieldPath joins the resource and encoding/json's dotted path. The path is
// made of the contract's property names, but it is checked anyway: it is
// shown to the agent.
func fieldPath(root, field string) string {
	if field == "" {
		return root
	}
	if len(field) > 80 || strings.ContainsFunc(field, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_' || r == '.')
	}) {
		return root + ".(a field)"
	}
	return root + "." + field
}

// jsonType says which JSON type a Go type decodes from.
func jsonType(t reflect.Type) string {
	if t == nil {
		return "another type"
	}
	if t == reflect.TypeFor[time.Time]() {
		return "an RFC 3339 string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "an array"
	case reflect.Struct, reflect.Map:
		return "an object"
	case reflect.Pointer:
		return jsonType(t.Elem())
	default:
		return "another type"
	}
}

// fail is classify for a request of a store, plus the log line an operator
// needs when StoreLink's answer broke the contract: which field and which
// rule, under the call id (the request's own line, with its status, is
// under the same id).
func (c *Client) fail(ctx context.Context, method, route, storeID string, err error) *apperr.Error {
	ae := classify(method, route, err, c.cooldown)
	if f, ok := describe(route, err); ok {
		attrs := []any{"call_id", callid.From(ctx), "method", method, "route", route,
			"store_id", storeID, "field", f.field, "rule", f.rule, "error_code", string(ae.Code)}
		if f.id != "" {
			attrs = append(attrs, "rule_id", f.id)
		}
		c.log.WarnContext(ctx, "upstream.contract_error", attrs...)
	}
	return ae
}

// brokeContract is the agent's account of a contract break on where.
func brokeContract(where string, f *fault) string {
	return fmt.Sprintf("StoreLink's answer to %s broke the contract: %s", where, f)
}
