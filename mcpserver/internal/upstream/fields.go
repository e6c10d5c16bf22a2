package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Rule ids of the schema breaks (ADR 0017).
const (
	RuleRequired   = "schema.required"
	RuleAdditional = "schema.additional_properties"
	RuleRenamed    = "schema.renamed"
	// RuleType: another JSON type, or a time that is not RFC 3339.
	RuleType = "schema.type"
)

// strictRoutes carry decision fields (supplier minimum and cut-off, case
// pack, the order): an undeclared property there is refused (ADR 0017).
// Elsewhere it is logged and counted.
var strictRoutes = map[string]bool{
	"/v1/suppliers/{supplier_id}":                    true,
	"/v1/skus/{sku}":                                 true,
	"/v1/stores/{store_id}/replenishment":            true,
	"/v1/stores/{store_id}/replenishment/{order_id}": true,
}

// maxLoggedFields bounds the unknown property names one log line carries.
const maxLoggedFields = 10

// checked is storelinkclient.Result plus the contract's properties. It
// refuses, as one fault, every missing required field, rename candidate and
// (on a strict route) unknown property; elsewhere unknown properties are
// logged and counted. A missing qualifier is added to unknown instead
// (ADR 0030) unless unknown is nil. Absent fields go to *absent (ADR 0028).
// Last, it holds the answer to the contract's limits (overLimits).
func checked[T any, R sl.Response[T]](ctx context.Context, c *Client, method, route, storeID string, resp R, err error, absent *sl.Absent, unknown *domain.Unknown) (*T, error) {
	// One walk of the body finds every problem and the absent fields.
	v, fields, err := sl.ResultWithFields(resp, err)
	problems := fields.Problems
	*absent = fields.Absent
	root := resources[route]
	if unknown != nil {
		if sv, sp, dropped, ok := salvage[T](ctx, method, root, err); ok {
			// Only qualifiers were unreadable: read without them.
			v, problems, err = sv, sp, nil
			c.log.WarnContext(ctx, "upstream.qualifier_unreadable", "call_id", callid.From(ctx), "route", route,
				"store_id", storeID, "fields", bounded(appendRule(dropped, RuleType), maxLoggedFields), "count", len(dropped))
		}
	}
	var missing *sl.MissingFieldError
	if err != nil {
		if missing = asMissing(err); missing == nil {
			return nil, err
		}
	}
	qualifier := func(field string) (domain.Source, bool) {
		if unknown == nil {
			return domain.Source{}, false
		}
		return domain.IsQualifier(root + "." + field)
	}
	// A property that may stand for a decision field is refused.
	onlyQualifiers := map[string]bool{}
	for _, p := range problems {
		if p.Kind == sl.FieldRenamed {
			_, q := qualifier(p.Renamed)
			was, seen := onlyQualifiers[p.Field]
			onlyQualifiers[p.Field] = q && (was || !seen)
		}
	}
	strict := strictRoutes[route]
	var refused []sl.FieldProblem
	var unknownProps []string
	for _, p := range problems {
		if s, ok := qualifier(p.Field); ok && p.Kind == sl.FieldMissing {
			unknown.Add(s.Name)
			continue
		}
		if s, ok := qualifier(p.Renamed); ok && p.Kind == sl.FieldRenamed && onlyQualifiers[p.Field] {
			unknown.Add(s.Name)
			unknownProps = append(unknownProps, bodyName(p.Field))
			continue
		}
		if p.Kind == sl.FieldUnknown && !strict {
			unknownProps = append(unknownProps, bodyName(p.Field))
			continue
		}
		refused = append(refused, p)
	}
	if len(unknownProps) > 0 {
		// Logged even when refused: a refusal names only decision fields.
		unknownProps = slices.Compact(unknownProps)
		if len(refused) == 0 {
			// The counter counts answers taken.
			c.meters.unknownFields.Add(context.WithoutCancel(ctx), 1, metric.WithAttributes(
				attribute.String("storelink.operation", method+" "+route)))
		}
		c.log.WarnContext(ctx, "upstream.unknown_fields", "call_id", callid.From(ctx), "method", method, "route", route,
			"store_id", storeID, "fields", bounded(unknownProps, maxLoggedFields), "count", len(unknownProps))
	}
	if len(refused) > 0 {
		cause := error(sl.ErrMalformedResponse)
		if err != nil {
			cause = err
		}
		return nil, schemaFault(root, refused, cause)
	}
	if err != nil {
		for _, f := range append([]string{missing.Field}, missing.Fields...) {
			if _, ok := qualifier(f); !ok {
				return nil, err
			}
		}
		// Every missing field is a qualifier here.
		v = new(T)
		if jerr := json.Unmarshal(resp.GetBody(), v); jerr != nil {
			return nil, err
		}
	}
	// The contract's limits, before any value reaches an answer, a log
	// line or the audit (ADR 0037).
	if err := c.overLimits(ctx, method, route, storeID, v, unknown); err != nil {
		return nil, err
	}
	return v, nil
}

// qualifiersOnly moves findings about a qualifier (ADR 0030) to unknown,
// logging each; the findings left are the decision fields' breaks.
func (c *Client) qualifiersOnly(ctx context.Context, route, storeID string, found []rules.Finding, unknown *domain.Unknown) []rules.Finding {
	root := resources[route]
	var keep []rules.Finding
	var each []string
	for _, f := range found {
		path := pointerPath(root, f.Field)
		if s, ok := domain.IsQualifier(path); ok {
			unknown.Add(s.Name)
			each = append(each, path+" ("+f.Rule+")")
			continue
		}
		keep = append(keep, f)
	}
	if len(each) > 0 {
		c.log.WarnContext(ctx, "upstream.qualifier_unreadable", "call_id", callid.From(ctx), "route", route,
			"store_id", storeID, "fields", bounded(each, maxLoggedFields), "count", len(each))
	}
	return keep
}

// schemaFault is the fault of an answer breaking the contract: rename
// candidates, then missing fields, then unknown properties.
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

// bodyName is a property path from the answer, shown as is when short and
// made of letters, digits, '_', '-' and '.'; "(a field)" otherwise.
func bodyName(path string) string {
	if path == "" || len(path) > 64 || strings.ContainsFunc(path, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.')
	}) {
		return "(a field)"
	}
	return path
}

// appendRule is each field with a rule id: "field (rule)".
func appendRule(fields []string, rule string) []string {
	out := make([]string, len(fields))
	for i, f := range fields {
		out[i] = f + " (" + rule + ")"
	}
	return out
}

// bounded keeps at most n names, and says how many more there were.
func bounded(names []string, n int) []string {
	if len(names) <= n {
		return names
	}
	return append(slices.Clone(names[:n]), "and "+strconv.Itoa(len(names)-n)+" more")
}

// asMissing is err's *sl.MissingFieldError, or nil. A function of its own,
// so the variable errors.As fills is made only for an error.
func asMissing(err error) *sl.MissingFieldError {
	var missing *sl.MissingFieldError
	if errors.As(err, &missing) {
		return missing
	}
	return nil
}
