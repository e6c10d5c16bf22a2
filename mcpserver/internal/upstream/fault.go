package upstream

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/callid"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// maxCause bounds a contract error's cause, field and rule together.
const maxCause = 160

// fault names what in a StoreLink answer broke the contract: where (a field
// path, body, status or header), the rule, and for a semantic rule its id.
// It never holds text of the answer, which is untrusted. Unwrap keeps
// errors.Is seeing ErrMalformedResponse.
type fault struct {
	field string
	rule  string
	id    string
	err   error
	// more are the answer's further breaks, after this first one.
	more []*fault
	// was lists a rename candidate's absent properties.
	was []string
}

// maxFaults is how many breaks of one answer a cause names.
const maxFaults = 3

// Error names the first breaks, each bounded, and counts the rest:
// "supplier.min_order_qty: not in the contract; ... and 2 more".
func (f *fault) Error() string {
	s := f.one()
	for i, m := range f.more {
		if i == maxFaults-1 {
			s += " and " + strconv.Itoa(len(f.more)-i) + " more"
			break
		}
		s += "; " + m.one()
	}
	return s
}

// one is this break alone, at most maxCause bytes.
func (f *fault) one() string {
	s := f.field + ": " + f.rule
	if f.id != "" {
		s += " (rule " + f.id + ")"
	}
	if len(s) > maxCause {
		// Field and rule are ASCII (written here or checked).
		s = s[:maxCause-3] + "..."
	}
	return s
}

// all lists the answer's breaks, this first.
func (f *fault) all() []*fault { return append([]*fault{f}, f.more...) }

func (f *fault) Unwrap() error { return f.err }

// malformed is a fault of a decoded body that breaks a contract rule the
// decoder does not check.
func malformed(field, rule string) error {
	return &fault{field: field, rule: rule, err: sl.ErrMalformedResponse}
}

// broken turns semantic-rule breaks into the answer's fault, rooted at the
// route's resource; nil when every rule holds.
func broken(root string, found []rules.Finding) error {
	if len(found) == 0 {
		return nil
	}
	err := sl.ErrMalformedResponse
	if slices.ContainsFunc(found, func(f rules.Finding) bool { return f.Rule == rules.POSCursor }) {
		err = fmt.Errorf("%w: %w", sl.ErrMalformedResponse, sl.ErrRepeatedCursor)
	}
	var first *fault
	for _, f := range found {
		one := &fault{field: pointerPath(root, f.Field), rule: f.Problem, id: f.Rule, err: err}
		if first == nil {
			first = one
			continue
		}
		first.more = append(first.more, one)
	}
	return first
}

// pointerPath is a rule's JSON Pointer as a field path under root:
// /opening_hours/monday/opens is store.opening_hours.monday.opens.
func pointerPath(root, pointer string) string {
	return fieldPath(root, strings.ReplaceAll(strings.TrimPrefix(pointer, "/"), "/", "."))
}

// resources names the object each route answers with.
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

// describe names the contract break behind err, if any: undecodable or
// rule-breaking body, too large, error body on success, undeclared status,
// or redirect.
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
		// The client's own reads arrive checked; this is for other callers.
		fields := missing.Fields
		if len(fields) == 0 {
			fields = []string{missing.Field}
		}
		var problems []sl.FieldProblem
		for _, field := range fields {
			problems = append(problems, sl.FieldProblem{Field: field, Kind: sl.FieldMissing})
		}
		return schemaFault(root, problems, err), true
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
	case errors.As(err, &apiErr) && apiErr.Code == "" && apiErr.OtherJSON && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500 && apiErr.StatusCode != http.StatusTooManyRequests:
		return &fault{field: "body", rule: strconv.Itoa(apiErr.StatusCode) + " with JSON but without the contract's error object" + hasInstead(apiErr.BodyProperties), err: err}, true
	case errors.As(err, &apiErr) && apiErr.Code == "" && apiErr.StatusCode >= 400 && apiErr.StatusCode < 500 && apiErr.StatusCode != http.StatusTooManyRequests:
		return &fault{field: "status", rule: strconv.Itoa(apiErr.StatusCode) + " without StoreLink's error body", err: err}, true
	case errors.As(err, &apiErr) && undeclared(apiErr.StatusCode):
		return &fault{field: "status", rule: strconv.Itoa(apiErr.StatusCode) + " is not a status the contract allows", err: err}, true
	case !errors.Is(err, sl.ErrMalformedResponse):
		return nil, false
	case errors.As(err, &mismatch):
		return &fault{field: fieldPath(root, mismatch.Field), rule: "want " + jsonType(mismatch.Type), id: RuleType, err: err}, true
	case errors.As(err, &syntax):
		return &fault{field: "body", rule: "not valid JSON", err: err}, true
	case errors.As(err, &badTime), strings.Contains(err.Error(), "Time.UnmarshalJSON:"):
		// encoding/json does not say which field held the time.
		return &fault{field: root, rule: "a timestamp is not RFC 3339", id: RuleType, err: err}, true
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

// hasInstead names, bounded, the properties a foreign error body has
// instead: " (it has detail, trace)".
func hasInstead(props []string) string {
	if len(props) == 0 {
		return ""
	}
	names := make([]string, len(props))
	for i, p := range props {
		names[i] = bodyName(p)
	}
	return " (it has " + sl.Bounded(names, maxFaults) + ")"
}

// wrongSuccess matches storelinkclient.Result's error for an undocumented
// success status.
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

// fieldPath joins the resource and encoding/json's dotted path, checked
// because the agent sees it.
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

// fail is classify for a store's request, plus a log line naming the
// broken field and rule under the call id.
func (c *Client) fail(ctx context.Context, method, route, storeID string, err error) *apperr.Error {
	ae := classifyFor(method, route, subjectOf(ctx, storeID), err, c.cooldown)
	if f, ok := describe(route, err); ok {
		if ae.Code == apperr.UpstreamContractError && ae.Broken == nil {
			for _, m := range f.all() {
				ae.Broken = append(ae.Broken, m.one())
			}
		}
		attrs := []any{"call_id", callid.From(ctx), "method", method, "route", route,
			"store_id", storeID, "field", f.field, "rule", f.rule, "error_code", string(ae.Code)}
		if f.id != "" {
			attrs = append(attrs, "rule_id", f.id)
		}
		if len(f.more) > 0 {
			// Every break, bounded: field (rule id) each.
			var each []string
			for _, m := range f.all() {
				each = append(each, m.field+" ("+cmp.Or(m.id, "-")+")")
			}
			attrs = append(attrs, "fields", bounded(each, maxLoggedFields), "count", len(f.more)+1)
		}
		c.log.WarnContext(ctx, "upstream.contract_error", attrs...)
	}
	return ae
}

// brokeContract is the agent's account of a contract break on where.
func brokeContract(where string, f *fault) string {
	return fmt.Sprintf("StoreLink's answer to %s broke the contract: %s", where, f)
}
