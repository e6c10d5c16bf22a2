package contract

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// generator derives cases from the contract.
type generator struct {
	cfg Config
	sp  *spec
	st  *state
	rng *rand.Rand
}

// param is one parameter or body field with its schema.
type param struct {
	in, name string
	required bool
	// opaque is x-korral-opaque: only StoreLink issues the parameter's
	// values, so a value made up to keep the schema is not valid either.
	opaque bool
	schema *openapi3.Schema
}

// extOpaque marks a parameter whose values only StoreLink issues.
const extOpaque = "x-korral-opaque"

// baseValues are the values of a positive request of each operation, the
// starting point every case varies one thing of.
func (g *generator) base(op operation) (path map[string]string, query map[string]string, body map[string]any) {
	store := g.cfg.Store
	if op.method != http.MethodGet {
		store = g.cfg.WriteStore
	}
	supplier := g.st.supplierID
	if !supplierIDPattern.MatchString(supplier) {
		supplier = g.example("SupplierID")
	}
	order := g.cfg.OrderID
	if order == "" {
		order = g.example("OrderID")
	}
	path = map[string]string{"store_id": store, "sku": g.cfg.SKU, "supplier_id": supplier, "order_id": order}
	query = map[string]string{}
	for _, p := range g.params(op) {
		if p.in != openapi3.ParameterInQuery {
			continue
		}
		switch p.name {
		case "sku":
			query["sku"] = g.cfg.SKU
		case "since":
			query["since"] = g.cfg.Now().UTC().Add(-posWindow).Format(time.RFC3339)
		case "limit":
			query["limit"] = strconv.Itoa(posPageLimit)
		}
	}
	if op.op.RequestBody != nil {
		body = map[string]any{"sku": g.cfg.SKU, "quantity_units": g.st.orderQty(), "reason": orderReason}
	}
	return path, query, body
}

func (g *generator) example(schema string) string {
	if ref := g.sp.doc.Components.Schemas[schema]; ref != nil && ref.Value != nil {
		s, _ := ref.Value.Example.(string)
		return s
	}
	return ""
}

// params lists the operation's parameters (path item's first) and, for a
// JSON body, its top-level fields.
func (g *generator) params(op operation) []param {
	var out []param
	item := g.sp.doc.Paths.Value(op.path)
	for _, refs := range []openapi3.Parameters{item.Parameters, op.op.Parameters} {
		for _, ref := range refs {
			if ref == nil || ref.Value == nil || ref.Value.Schema == nil || ref.Value.Schema.Value == nil {
				continue
			}
			p := ref.Value
			opaque, _ := p.Extensions[extOpaque].(bool)
			out = append(out, param{in: p.In, name: p.Name, required: p.Required, opaque: opaque, schema: p.Schema.Value})
		}
	}
	if rb := op.op.RequestBody; rb != nil && rb.Value != nil {
		if mt := rb.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
			s := mt.Schema.Value
			for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
				if ref := s.Properties[name]; ref != nil && ref.Value != nil {
					out = append(out, param{in: "body", name: name, required: slices.Contains(s.Required, name), schema: ref.Value})
				}
			}
		}
	}
	return out
}

// values returns the boundary and negative values of one schema; whether
// each keeps the schema is decided later by validation.
func (g *generator) values(p param) []labelled {
	s := p.schema
	var out []labelled
	typed := func(v int64) any {
		if p.in == "body" {
			return v
		}
		return strconv.FormatInt(v, 10)
	}
	switch {
	case s.Type.Is(openapi3.TypeInteger):
		if s.Min != nil {
			lo := int64(*s.Min)
			out = append(out, labelled{typed(lo), "minimum"}, labelled{typed(lo - 1), "minimum - 1"},
				labelled{typed(lo - 1 - g.rng.Int64N(1_000_000)), "far below the minimum"})
		}
		if s.Max != nil {
			hi := int64(*s.Max)
			out = append(out, labelled{typed(hi), "maximum"}, labelled{typed(hi + 1), "maximum + 1"},
				labelled{typed(hi + 1 + g.rng.Int64N(1_000_000)), "far above the maximum"})
		}
		if s.Min != nil && s.Max != nil {
			out = append(out, labelled{typed(int64(*s.Min) + g.rng.Int64N(int64(*s.Max-*s.Min)+1)), "in range"})
		}
		if p.in == "body" {
			out = append(out, labelled{"12", "a string, not an integer"}, labelled{1.5, "a fraction"}, labelled{nil, "null"})
		} else {
			out = append(out, labelled{"abc", "not a number"}, labelled{"1.5", "a fraction"})
		}
	case s.Type.Is(openapi3.TypeString) && s.Format == "date-time":
		now := g.cfg.Now().UTC()
		out = append(out, labelled{"yesterday", "not a date-time"},
			labelled{now.Format(time.DateOnly), "a date without a time"},
			labelled{now.Format("2006-01-02T15:04:05"), "a date-time without an offset"})
	case s.Type.Is(openapi3.TypeString):
		if s.Pattern != "" {
			if v, ok := patternString(s.Pattern, patShortest, g.rng); ok {
				out = append(out, labelled{v, "shortest the pattern allows"})
			}
			if v, ok := patternString(s.Pattern, patLongest, g.rng); ok {
				out = append(out, labelled{v, "longest the pattern allows"})
			}
			if v, ok := patternString(s.Pattern, patRandom, g.rng); ok {
				out = append(out, labelled{v, "random within the pattern"})
			}
			out = append(out, violating(s.Pattern, g.rng)...)
		} else {
			if s.MinLength > 0 {
				out = append(out, labelled{strings.Repeat("a", int(s.MinLength)), "minLength"},
					labelled{strings.Repeat("a", int(s.MinLength)-1), "minLength - 1"})
			}
			if s.MaxLength != nil {
				out = append(out, labelled{strings.Repeat("a", int(*s.MaxLength)), "maxLength"},
					labelled{strings.Repeat("a", int(*s.MaxLength)+1), "maxLength + 1"})
			}
		}
		if p.in == "body" {
			out = append(out, labelled{int64(g.rng.IntN(10000)), "a number, not a string"}, labelled{nil, "null"})
		}
	}
	return out
}

// plan lists every case of the run, unshuffled. Writes (anything but
// GET) go only to the write store, and only with writes allowed.
func (g *generator) plan(ctx context.Context) []*Case {
	var out []*Case
	seen := map[string]bool{}
	add := func(c *Case) {
		if fp := c.fingerprint(); !seen[fp] {
			seen[fp] = true
			out = append(out, c)
		}
	}
	for _, id := range slices.Sorted(maps.Keys(g.sp.ops)) {
		op := g.sp.ops[id]
		if len(g.cfg.Operations) > 0 && !slices.Contains(g.cfg.Operations, id) {
			continue
		}
		if op.method != http.MethodGet && !g.cfg.AllowWrites {
			continue
		}
		p := g.opPlan(id, op)
		p.dataCases(ctx, add)
		p.bodyShapeCases(ctx, add)
		p.authCases(add)
		p.contentTypeCases(add)
		p.chainCases(add)
	}
	return append(out, g.methods()...)
}

// opPlan holds one operation's positive request, which every case of the
// operation varies one thing of.
type opPlan struct {
	g     *generator
	id    string
	op    operation
	write bool
	path  map[string]string
	query map[string]string
	body  map[string]any
}

func (g *generator) opPlan(id string, op operation) *opPlan {
	p := &opPlan{g: g, id: id, op: op, write: op.method != http.MethodGet}
	p.path, p.query, p.body = g.base(op)
	return p
}

// mk is the operation's positive request as a case of the given phase.
func (p *opPlan) mk(phase, name string) *Case {
	c := &Case{Phase: phase, Operation: p.id, Name: name, Method: p.op.method, Path: fillPath(p.op.path, p.path),
		Query: maps.Clone(p.query), Key: roleOwn, Store: p.path["store_id"]}
	if p.op.keyScope == scopeChain {
		c.Store = p.g.cfg.Store
	}
	if p.body != nil {
		c.Body, c.ContentType = strp(mustJSON(p.body)), "application/json"
	}
	return c
}

// dataCases vary one parameter or body field at a time: its boundary and
// negative values, and leaving out a required one.
func (p *opPlan) dataCases(ctx context.Context, add func(*Case)) {
	for _, prm := range p.g.params(p.op) {
		if p.write && prm.in == openapi3.ParameterInPath {
			continue // a write's path names the write store, nothing else
		}
		for _, v := range p.g.values(prm) {
			c := p.valueCase(prm, v)
			// A made-up value of an opaque parameter is refused however
			// well it keeps the schema: only its negative cases are sent.
			if c != nil && p.g.classify(ctx, c) && !(prm.opaque && c.Expect == expectValid) {
				add(c)
			}
		}
		if c := p.missingCase(prm); c != nil && p.g.classify(ctx, c) {
			add(c)
		}
	}
}

// valueCase sends one value of one parameter; nil when the value cannot
// be sent (an empty path segment is another path).
func (p *opPlan) valueCase(prm param, v labelled) *Case {
	c := p.mk(PhaseData, fmt.Sprintf("%s %s: %s", prm.in, prm.name, v.label))
	c.Varies = prm.in + "." + prm.name
	switch prm.in {
	case openapi3.ParameterInPath:
		sv, _ := v.value.(string)
		if sv == "" {
			return nil
		}
		pp := maps.Clone(p.path)
		pp[prm.name] = sv
		c.Path = fillPath(p.op.path, pp)
	case openapi3.ParameterInQuery:
		sv, _ := v.value.(string)
		c.Query[prm.name] = sv
	case "body":
		b := maps.Clone(p.body)
		b[prm.name] = v.value
		c.Body = strp(mustJSON(b))
	}
	return c
}

// missingCase leaves out a required query parameter or body field; nil
// for any other parameter.
func (p *opPlan) missingCase(prm param) *Case {
	switch {
	case prm.in == openapi3.ParameterInQuery && prm.required:
		c := p.mk(PhaseData, fmt.Sprintf("query %s: missing", prm.name))
		delete(c.Query, prm.name)
		return c
	case prm.in == "body" && prm.required:
		b := maps.Clone(p.body)
		delete(b, prm.name)
		c := p.mk(PhaseData, fmt.Sprintf("body %s: missing", prm.name))
		c.Body = strp(mustJSON(b))
		return c
	}
	return nil
}

// bodyShapeCases send bodies of the wrong shape: an extra field, an
// array, malformed JSON, nothing.
func (p *opPlan) bodyShapeCases(ctx context.Context, add func(*Case)) {
	if p.body == nil {
		return
	}
	extra := maps.Clone(p.body)
	extra["note"] = "not in the contract"
	for _, v := range []labelled{{mustJSON(extra), "a field the schema does not have"}, {"[]", "an array, not an object"},
		{"{", "malformed JSON"}, {"", "empty"}} {
		c := p.mk(PhaseData, "body: "+v.label)
		c.Body = strp(v.value.(string))
		if p.g.classify(ctx, c) {
			add(c)
		}
	}
}

// authCases send no key, an unknown key and another store's key.
func (p *opPlan) authCases(add func(*Case)) {
	c := p.mk(PhaseAuth, "no key")
	c.Key, c.Expect = roleNone, expectUnauthenticated
	add(c)
	c = p.mk(PhaseAuth, "unknown key")
	c.Key, c.Expect, c.Assumption = roleUnknown, expectUnauthenticated, assumeUnknownKey
	if !p.g.cfg.NoAssumptions {
		add(c)
	}
	if otherStore(p.g.cfg.Keyring, c.Store) != "" {
		c = p.mk(PhaseAuth, "another store's key")
		c.Key, c.Expect = roleOther, expectForbidden
		if p.op.keyScope == scopeChain {
			c.Expect = expectValid
		}
		add(c)
	}
}

// contentTypeCases send the write's body under content types other than JSON.
func (p *opPlan) contentTypeCases(add func(*Case)) {
	if p.body == nil {
		return
	}
	for _, ct := range []labelled{{"text/plain", "text/plain"}, {"application/xml", "application/xml"}, {"", "no Content-Type"}} {
		c := p.mk(PhaseContentType, "Content-Type: "+ct.label)
		c.ContentType, c.Expect = ct.value.(string), expectContentType
		add(c)
	}
}

// chainCases follow the links of the operation's responses.
func (p *opPlan) chainCases(add func(*Case)) {
	if p.g.cfg.NoAssumptions {
		return
	}
	for _, lc := range p.g.links(p.op) {
		c := p.mk(PhaseChain, fmt.Sprintf("then %s by link %s", lc.Operation, lc.Link))
		c.Expect, c.Then = expectValid, lc
		add(c)
	}
}

// links lists the links of an operation's successful responses whose
// target is an operation of the contract.
func (g *generator) links(op operation) []*LinkedCase {
	var out []*LinkedCase
	for _, code := range op.declaredStatuses() {
		status, err := strconv.Atoi(code)
		if err != nil || status < 200 || status > 299 {
			continue
		}
		resp := op.op.Responses.Value(code)
		if resp == nil || resp.Value == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(resp.Value.Links)) {
			ref := resp.Value.Links[name]
			if ref == nil || ref.Value == nil {
				continue
			}
			to, ok := g.sp.ops[ref.Value.OperationID]
			if !ok {
				continue
			}
			lc := &LinkedCase{Link: name, Operation: to.id, Method: to.method, PathTemplate: to.path, Status: status,
				Parameters: map[string]string{}, Assumption: assumeState}
			for k, v := range ref.Value.Parameters {
				s, _ := v.(string)
				lc.Parameters[k] = s
			}
			out = append(out, lc)
		}
	}
	return out
}

// methods lists the cases of methods a path does not have. Methods other
// than GET are sent only with writes allowed, to the write store's paths.
func (g *generator) methods() []*Case {
	var out []*Case
	for _, path := range slices.Sorted(maps.Keys(g.sp.doc.Paths.Map())) {
		item := g.sp.doc.Paths.Value(path)
		has := item.Operations()
		for _, m := range []string{http.MethodGet, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete} {
			if has[m] != nil {
				continue
			}
			selected := len(g.cfg.Operations) == 0
			for _, op := range has {
				selected = selected || slices.Contains(g.cfg.Operations, op.OperationID)
			}
			if !selected {
				continue
			}
			store := g.cfg.Store
			if m != http.MethodGet {
				if !g.cfg.AllowWrites || !strings.HasPrefix(path, "/v1/stores/{store_id}") {
					continue
				}
				store = g.cfg.WriteStore
			}
			order := cmp.Or(g.cfg.OrderID, g.example("OrderID"))
			c := &Case{Phase: PhaseMethod, Name: m + " (not in the contract)", Method: m, Key: roleOwn, Store: store,
				Path:   fillPath(path, map[string]string{"store_id": store, "sku": g.cfg.SKU, "supplier_id": g.example("SupplierID"), "order_id": order}),
				Expect: expectMethod}
			out = append(out, c)
		}
	}
	return out
}

func fillPath(template string, values map[string]string) string {
	for k, v := range values {
		template = strings.ReplaceAll(template, "{"+k+"}", url.PathEscape(v))
	}
	return template
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // only maps of strings and numbers are marshalled
	}
	return string(b)
}

// classify decides a data case's expectation by validating its request
