package upstream

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/callid"
	sl "github.com/korral/storelink/storelinkclient"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Rule ids of the schema breaks the adapter names beside the semantic
// rules' ids (ADR 0017).
const (
	RuleRequired   = "schema.required"
	RuleAdditional = "schema.additional_properties"
	RuleRenamed    = "schema.renamed"
)

// strictRoutes answer with the fields a decision is made on: the
// supplier's minimum and cut-off, the SKU's case pack, the order. A
// property the contract does not declare there is refused, since it may be
// one of those fields under another name (ADR 0017). Elsewhere an unknown
// property is logged and counted, so that an additive StoreLink release
// does not stop every tool.
var strictRoutes = map[string]bool{
	"/v1/suppliers/{supplier_id}":                    true,
	"/v1/skus/{sku}":                                 true,
	"/v1/stores/{store_id}/replenishment":            true,
	"/v1/stores/{store_id}/replenishment/{order_id}": true,
}

// maxLoggedFields bounds the unknown property names one log line carries.
const maxLoggedFields = 10

// checked is storelinkclient.Result plus the contract's properties: every
// missing required field, every rename candidate (an unknown property
// beside an absent declared one, refused on every route: a field is being
// misread as absent) and, on a strict route, every unknown property, as
// one fault naming them all. On the other routes an answer whose only
// departure is unknown properties is taken, with one warn line (the names,
// never the values) and one count in storelink.upstream.unknown_fields.
// The same walk finds the fields the answer leaves out, which it puts in
// *absent for the semantic rules (rules.Query.Absent): a rule judges no
// field StoreLink did not send.
func checked[T any, R sl.Response[T]](ctx context.Context, c *Client, method, route, storeID string, resp R, err error, absent *sl.Absent) (*T, error) {
	// One walk of the body finds the missing fields Result refuses, the
	// rest of the problems, and the absent fields.
	v, fields, err := sl.ResultWithFields(resp, err)
	problems := fields.Problems
	*absent = fields.Absent
	var missing *sl.MissingFieldError
	if err != nil && !errors.As(err, &missing) {
		return nil, err
	}
	strict := strictRoutes[route]
	var refused []sl.FieldProblem
	var unknown []string
	for _, p := range problems {
		if p.Kind == sl.FieldUnknown && !strict {
			unknown = append(unknown, bodyName(p.Field))
			continue
		}
		refused = append(refused, p)
	}
	if len(refused) > 0 {
		cause := error(sl.ErrMalformedResponse)
		if err != nil {
			cause = err
		}
		return nil, schemaFault(resources[route], refused, cause)
	}
	if err != nil {
		// Result found a missing field the walk did not: not expected,
		// but the error stands.
		return nil, err
	}
	if len(unknown) > 0 {
		c.meters.unknownFields.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(
			attribute.String("storelink.operation", method+" "+route)))
		c.log.WarnContext(ctx, "upstream.unknown_fields", "call_id", callid.From(ctx), "method", method, "route", route,
			"store_id", storeID, "fields", bounded(unknown, maxLoggedFields), "count", len(unknown))
	}
	return v, nil
}

// schemaFault is the fault of an answer whose properties break the
// contract: rename candidates first (the declared field they may stand
// for is then not listed again as missing), then missing fields, then
// unknown properties, each under its rule id.
func schemaFault(root string, problems []sl.FieldProblem, err error) *fault {
	order := map[sl.ProblemKind]int{sl.FieldRenamed: 0, sl.FieldMissing: 1, sl.FieldUnknown: 2}
	problems = slices.DeleteFunc(slices.Clone(problems), func(p sl.FieldProblem) bool {
		return p.Kind == sl.FieldMissing && slices.ContainsFunc(problems, func(r sl.FieldProblem) bool {
			return r.Kind == sl.FieldRenamed && r.Renamed == p.Field
		})
	})
	slices.SortStableFunc(problems, func(a, b sl.FieldProblem) int { return order[a.Kind] - order[b.Kind] })
	var all []*fault
	for _, p := range problems {
		switch p.Kind {
		case sl.FieldMissing:
			all = append(all, &fault{field: fieldPath(root, p.Field), rule: "required but missing", id: RuleRequired, err: err})
		case sl.FieldRenamed:
			field, was := root+"."+bodyName(p.Field), fieldPath(root, p.Renamed)
			if n := len(all); n > 0 && all[n-1].id == RuleRenamed && all[n-1].field == field {
				// One property, several candidates: one break.
				last := all[n-1]
				last.was = append(last.was, was)
				last.rule = "not in the contract; " + orList(last.was) + " renamed?"
				continue
			}
			all = append(all, &fault{field: field, rule: "not in the contract; " + was + " renamed?", id: RuleRenamed, err: err, was: []string{was}})
		default:
			all = append(all, &fault{field: root + "." + bodyName(p.Field), rule: "not in the contract", id: RuleAdditional, err: err})
		}
	}
	first := all[0]
	first.more = all[1:]
	return first
}

// orList is "a", "a or b", "a, b or c", "a, b, c or 2 more".
func orList(names []string) string {
	switch {
	case len(names) == 1:
		return names[0]
	case len(names) <= maxFaults:
		return strings.Join(names[:len(names)-1], ", ") + " or " + names[len(names)-1]
	}
	return strings.Join(names[:maxFaults], ", ") + " or " + strconv.Itoa(len(names)-maxFaults) + " more"
}

// bodyName is a property path the answer chose, as the agent and the log
// may see it: the path, when it is made of letters, digits, '_', '-' and
// '.' and is short; "(a field)" otherwise. A name is StoreLink's text, not
// the contract's.
func bodyName(path string) string {
	if path == "" || len(path) > 64 || strings.ContainsFunc(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) {
		return "(a field)"
	}
	return path
}

// bounded keeps at most n names, and says how many more there were.
func bounded(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(slices.Clone(names[:n]), "and "+strconv.Itoa(len(names)-n)+" more")
}
