package contract

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"math/rand/v2"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	sl "github.com/korral/storelink/storelinkclient"
	"github.com/korral/storelink/storelinkclient/rules"
)

// Phases of generated cases.
const (
	// PhaseData: boundary and negative values of every constrained
	// parameter and body field.
	PhaseData = "data"
	// PhaseAuth: no key, an unknown key and another store's key on every
	// operation (Schemathesis calls it ignored_auth).
	PhaseAuth = "auth"
	// PhaseMethod: methods the contract does not have for a path.
	PhaseMethod = "method"
	// PhaseContentType: the write with a body that is not declared JSON.
	PhaseContentType = "content-type"
	// PhaseChain: an operation, then the operation its response links to.
	PhaseChain = "chain"
)

// FindingGenerated: a generated case got an answer of the wrong class;
// Rule names which of the GeneratedRules it breaks.
const FindingGenerated = "generated"

// Rule ids of the findings of generated cases. They are stable: pipelines
// and replay files name them.
const (
	RuleNegativeAccepted    = "gen.negative.accepted"
	RuleNegativeStatus      = "gen.negative.status"
	RuleValidRefused        = "gen.valid.refused"
	RuleServerError         = "gen.server_error"
	RuleAuthIgnored         = "gen.auth.ignored"
	RuleAuthStatus          = "gen.auth.status"
	RuleMethodAccepted      = "gen.method.accepted"
	RuleContentTypeAccepted = "gen.content_type.accepted"
	RuleLinkStatus          = "gen.link.status"
)

// GeneratedRule is one rule of generated cases, with what it says.
type GeneratedRule struct {
	ID, Text string
}

// GeneratedRules lists the rules of generated cases, in the order the
// documentation lists them.
var GeneratedRules = []GeneratedRule{
	{RuleNegativeAccepted, "a request that breaks the contract's schema is refused, never answered with 2xx"},
	{RuleNegativeStatus, "a request that breaks the contract's schema is refused with 400"},
	{RuleValidRefused, "a request that keeps the contract's schema is never refused with 400"},
	{RuleServerError, "no generated request is answered with 5xx"},
	{RuleAuthIgnored, "a request without a key, with an unknown key, or with another store's key on a store's path, gets no data"},
	{RuleAuthStatus, "a missing or unknown key is 401 and another store's key on a store's path 403"},
	{RuleMethodAccepted, "a method the contract does not have for a path is refused with 4xx (405 preferred)"},
	{RuleContentTypeAccepted, "a write whose body is not declared application/json is refused with 4xx"},
	{RuleLinkStatus, "the operation a response links to (OpenAPI links) answers 200 for the ids the response names"},
}

// Expectations of a generated case: what kind of request it is decides
// which answers the contract allows.
const (
	expectValid           = "valid"           // keeps the schema, with a key that may read it
	expectInvalid         = "invalid"         // breaks the schema: 400
	expectUnauthenticated = "unauthenticated" // no or an unknown key: 401
	expectForbidden       = "forbidden"       // another store's key on a store's path: 403
	expectMethod          = "method"          // a method the path does not have: 4xx
	expectContentType     = "content-type"    // a body that is not declared JSON: 4xx
	expectLinked          = "linked"          // the second request of a chain: 200
)

// Key roles a case names; never the key itself.
const (
	roleOwn     = "own"
	roleOther   = "other"
	roleUnknown = "unknown"
	roleNone    = "none"
)

// DefaultGenerateMaxRequests is the request budget of a check with
// generated cases: the fixed probes, about 150 generated cases and room to
// shrink what fails.
const DefaultGenerateMaxRequests = 600

// maxShrinkSteps bounds the requests spent shrinking one failing case.
const maxShrinkSteps = 8

// assumeUnknownKey is what an unknown-key case assumes.
const assumeUnknownKey = "that Korral IT never issued the key " + unknownKey

// Case is one generated request, as the replay file keeps it: everything
// needed to send it again except the key, which is named by role and store
// and looked up in the keyring when the case is sent.
type Case struct {
	// ID numbers the case within its run, in the order it was sent.
	ID string `json:"id"`
	// Phase is one of the Phase* constants.
	Phase string `json:"phase"`
	// Operation is the contract's operationId; empty for a method the
	// contract does not have.
	Operation string `json:"operation_id,omitempty"`
	// Name says what the case varies, e.g. "query limit: maximum + 1".
	Name   string `json:"name"`
	Method string `json:"method"`
	// Path is the path sent, escaped.
	Path  string            `json:"path"`
	Query map[string]string `json:"query,omitempty"`
	// Body is the request body exactly as sent, when there is one.
	Body *string `json:"body,omitempty"`
	// ContentType is the Content-Type sent; empty sends none.
	ContentType string `json:"content_type,omitempty"`
	// Key is whose key is sent: own (the key of Store), other (another
	// store's), unknown (a made-up key) or none.
	Key string `json:"key"`
	// Store is the store whose key "own" means and "other" differs from.
	Store string `json:"store"`
	// Expect is the kind of request, which decides the answers the
	// contract allows: valid, invalid, unauthenticated, forbidden, method,
	// content-type.
	Expect string `json:"expect"`
	// Assumption is what the case assumes beyond the contract.
	Assumption string `json:"assumption,omitempty"`
	// Then is the linked request of a chain.
	Then *LinkedCase `json:"then,omitempty"`
	// Rules are the rule ids (or finding kinds) the case failed with
	// when it was written to a replay file.
	Rules []string `json:"failed_rules,omitempty"`

	// Varies names what a data case varies ("query.limit", "body.reason",
	// "path.store_id"): the value the shrinker moves.
	Varies string `json:"varies,omitempty"`
}

// LinkedCase is the second request of a chain: an OpenAPI link of the
// first request's response, resolved against that response when sent.
type LinkedCase struct {
	// Link is the link's name in the contract.
	Link      string `json:"link"`
	Operation string `json:"operation_id"`
	Method    string `json:"method"`
	// PathTemplate is the operation's path, e.g.
	// /v1/stores/{store_id}/replenishment/{order_id}.
	PathTemplate string `json:"path_template"`
	// Parameters are the link's runtime expressions by parameter, e.g.
	// order_id: $response.body#/order_id.
	Parameters map[string]string `json:"parameters"`
	// Status is the status of the first response the link belongs to.
	Status     int    `json:"status"`
	Assumption string `json:"assumption,omitempty"`
}

func (c *Case) target() string {
	if len(c.Query) == 0 {
		return c.Path
	}
	v := url.Values{}
	for k, s := range c.Query {
		v.Set(k, s)
	}
	return c.Path + "?" + v.Encode()
}

func (c *Case) body() []byte {
	if c.Body == nil {
		return nil
	}
	return []byte(*c.Body)
}

func (c *Case) clone() *Case {
	d := *c
	d.Query = maps.Clone(c.Query)
	if c.Body != nil {
		b := *c.Body
		d.Body = &b
	}
	return &d
}

// fingerprint is what makes two cases the same request.
func (c *Case) fingerprint() string {
	return c.Method + " " + c.target() + " " + string(c.body()) + " " + c.ContentType + " " + c.Key + " " + c.Store
}

func keyRole(role string) keyChoice {
	switch role {
	case roleOwn:
		return keyOwn
	case roleOther:
		return keyOther
	case roleUnknown:
		return keyUnknown
	}
	return keyNone
}

func strp(s string) *string { return &s }

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

// values returns the boundary and negative values of one schema: its
// minimum and maximum and one step outside each, a seeded random value far
// outside, strings at and beyond the pattern's and the length's bounds,
// and values of the wrong type. Whether each keeps the schema is decided
// later, by validating the request against the contract.
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
	ids := slices.Sorted(maps.Keys(g.sp.ops))
	for _, id := range ids {
		op := g.sp.ops[id]
		if len(g.cfg.Operations) > 0 && !slices.Contains(g.cfg.Operations, id) {
			continue
		}
		write := op.method != http.MethodGet
		if write && !g.cfg.AllowWrites {
			continue
		}
		path, query, body := g.base(op)
		mk := func(phase, name string) *Case {
			c := &Case{Phase: phase, Operation: id, Name: name, Method: op.method, Path: fillPath(op.path, path),
				Query: maps.Clone(query), Key: roleOwn, Store: path["store_id"]}
			if op.keyScope == scopeChain {
				c.Store = g.cfg.Store
			}
			if body != nil {
				c.Body, c.ContentType = strp(mustJSON(body)), "application/json"
			}
			return c
		}
		// Data.
		for _, p := range g.params(op) {
			if write && p.in == openapi3.ParameterInPath {
				continue // a write's path names the write store, nothing else
			}
			for _, v := range g.values(p) {
				c := mk(PhaseData, fmt.Sprintf("%s %s: %s", p.in, p.name, v.label))
				c.Varies = p.in + "." + p.name
				switch p.in {
				case openapi3.ParameterInPath:
					sv, _ := v.value.(string)
					if sv == "" {
						continue // an empty segment is another path
					}
					pp := maps.Clone(path)
					pp[p.name] = sv
					c.Path = fillPath(op.path, pp)
				case openapi3.ParameterInQuery:
					sv, _ := v.value.(string)
					c.Query[p.name] = sv
				case "body":
					b := maps.Clone(body)
					b[p.name] = v.value
					c.Body = strp(mustJSON(b))
				}
				// A made-up value of an opaque parameter is refused however
				// well it keeps the schema: only its negative cases are sent.
				if g.classify(ctx, c) && !(p.opaque && c.Expect == expectValid) {
					add(c)
				}
			}
			if p.in == openapi3.ParameterInQuery && p.required {
				c := mk(PhaseData, fmt.Sprintf("query %s: missing", p.name))
				delete(c.Query, p.name)
				if g.classify(ctx, c) {
					add(c)
				}
			}
			if p.in == "body" && p.required {
				b := maps.Clone(body)
				delete(b, p.name)
				c := mk(PhaseData, fmt.Sprintf("body %s: missing", p.name))
				c.Body = strp(mustJSON(b))
				if g.classify(ctx, c) {
					add(c)
				}
			}
		}
		if body != nil {
			extra := maps.Clone(body)
			extra["note"] = "not in the contract"
			for _, v := range []labelled{{mustJSON(extra), "a field the schema does not have"}, {"[]", "an array, not an object"},
				{"{", "malformed JSON"}, {"", "empty"}} {
				c := mk(PhaseData, "body: "+v.label)
				c.Body = strp(v.value.(string))
				if g.classify(ctx, c) {
					add(c)
				}
			}
		}
		// Auth.
		c := mk(PhaseAuth, "no key")
		c.Key, c.Expect = roleNone, expectUnauthenticated
		add(c)
		c = mk(PhaseAuth, "unknown key")
		c.Key, c.Expect, c.Assumption = roleUnknown, expectUnauthenticated, assumeUnknownKey
		if !g.cfg.NoAssumptions {
			add(c)
		}
		if otherStore(g.cfg.Keyring, c.Store) != "" {
			c = mk(PhaseAuth, "another store's key")
			c.Key, c.Expect = roleOther, expectForbidden
			if op.keyScope == scopeChain {
				c.Expect = expectValid
			}
			add(c)
		}
		// Content type of the write.
		if body != nil {
			for _, ct := range []labelled{{"text/plain", "text/plain"}, {"application/xml", "application/xml"}, {"", "no Content-Type"}} {
				c := mk(PhaseContentType, "Content-Type: "+ct.label)
				c.ContentType, c.Expect = ct.value.(string), expectContentType
				add(c)
			}
		}
		// Chains from the links of the operation's responses.
		if !g.cfg.NoAssumptions {
			for _, lc := range g.links(op) {
				c := mk(PhaseChain, fmt.Sprintf("then %s by link %s", lc.Operation, lc.Link))
				c.Expect, c.Then = expectValid, lc
				add(c)
			}
		}
	}
	out = append(out, g.methods()...)
	return out
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

// methods lists the cases of methods a path does not have. A GET is a
// read and always sent; any other method could change something on a
// StoreLink that wrongly accepts it, so it is sent only with writes
// allowed, and only to the write store's paths.
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
// against the contract, key present: valid or invalid. It reports false
// for a case that does not reach its operation, which is not sent.
func (g *generator) classify(ctx context.Context, c *Case) bool {
	valid, ok := g.sp.validCase(ctx, c)
	if !ok {
		return false
	}
	c.Expect = expectInvalid
	if valid {
		c.Expect = expectValid
		if c.Method != http.MethodGet {
			// A valid write raises an order: the only one a run raises
			// on purpose is the chain's.
			return false
		}
	}
	return true
}

// validCase validates a case's request against the contract, with a key
// present. ok is false when the request does not route to its operation.
func (s *spec) validCase(ctx context.Context, c *Case) (valid, ok bool) {
	var rd io.Reader = http.NoBody
	if c.Body != nil {
		rd = bytes.NewReader(c.body())
	}
	hr, err := http.NewRequest(c.Method, "http://storelink.invalid"+c.target(), rd)
	if err != nil {
		return false, false
	}
	if c.ContentType != "" {
		hr.Header.Set("Content-Type", c.ContentType)
	}
	hr.Header.Set(s.keyHeader, "redacted")
	route, params, err := s.router.FindRoute(hr)
	if err != nil || route.Operation.OperationID != c.Operation {
		return false, false
	}
	in := &openapi3filter.RequestValidationInput{Request: hr, PathParams: params, Route: route, Options: requestOptions}
	return openapi3filter.ValidateRequest(ctx, in) == nil, true
}

// expected renders what a case expects, for reports.
func expected(c *Case) ([]int, string) {
	switch c.Expect {
	case expectInvalid:
		return []int{400}, ""
	case expectUnauthenticated:
		return []int{401}, ""
	case expectForbidden:
		return []int{403}, ""
	case expectMethod:
		return []int{405}, "4xx"
	case expectContentType:
		return []int{400}, "4xx"
	case expectLinked:
		return []int{200}, ""
	}
	return []int{}, "any declared status but 400 and 5xx"
}

// judgeCase judges the answer to a case: the class of its status (rules
// gen.*), then, for an operation of the contract, the declared response's
// schema and, for a success, the operation's semantic rules.
func (s *spec) judgeCase(ctx context.Context, c *Case, now time.Time, raised *sl.OrderRequest, status int, header http.Header, body []byte) []Finding {
	var fs []Finding
	gen := func(rule, msg string) {
		fs = append(fs, Finding{Kind: FindingGenerated, Rule: rule, Message: msg})
	}
	ok2xx := status >= 200 && status < 300
	is4xx := status >= 400 && status < 500
	if status >= 500 {
		gen(RuleServerError, fmt.Sprintf("%d for a generated %s request", status, c.Expect))
	}
	switch c.Expect {
	case expectValid:
		if status == http.StatusBadRequest {
			gen(RuleValidRefused, "400 for a request that keeps the contract's schema")
		}
	case expectInvalid:
		switch {
		case ok2xx:
			gen(RuleNegativeAccepted, fmt.Sprintf("%d for a request that breaks the contract's schema", status))
		case status < 500 && status != http.StatusBadRequest && !(status == http.StatusForbidden && c.Varies == "path.store_id"):
			// A malformed store id is also not the key's store: the
			// contract does not order the two refusals, so 403 is
			// allowed there too.
			gen(RuleNegativeStatus, fmt.Sprintf("%d for a request that breaks the contract's schema, where 400 is due", status))
		}
	case expectUnauthenticated, expectForbidden:
		want := http.StatusUnauthorized
		if c.Expect == expectForbidden {
			want = http.StatusForbidden
		}
		switch {
		case ok2xx:
			gen(RuleAuthIgnored, fmt.Sprintf("%d with %s key", status, keyWords(c.Key)))
		case status < 500 && status != want:
			gen(RuleAuthStatus, fmt.Sprintf("%d with %s key, where %d is due", status, keyWords(c.Key), want))
		}
	case expectMethod:
		if !is4xx && status < 500 {
			gen(RuleMethodAccepted, fmt.Sprintf("%d for %s, which the contract does not have for this path", status, c.Method))
		}
	case expectContentType:
		if !is4xx && status < 500 {
			gen(RuleContentTypeAccepted, fmt.Sprintf("%d for a body sent as %q", status, cmp.Or(c.ContentType, "no Content-Type")))
		}
	case expectLinked:
		if status != http.StatusOK {
			gen(RuleLinkStatus, fmt.Sprintf("%d for the %s the previous response named, where 200 is due", status, c.Operation))
		}
	}
	if op, known := s.ops[c.Operation]; known {
		fs = append(fs, s.validateAnswer(ctx, op, c, now, raised, status, header, body)...)
	}
	if c.Assumption != "" {
		for i := range fs {
			f := &fs[i]
			f.Assumption = f.Kind == FindingGenerated || (f.Kind == FindingRule && f.Rule == rules.OrderReadBack)
		}
	}
	fs = capFindings(fs)
	return fs
}

// validateAnswer holds an answer to the operation's declared responses
// and, for a success, its semantic rules.
func (s *spec) validateAnswer(ctx context.Context, op operation, c *Case, now time.Time, raised *sl.OrderRequest, status int, header http.Header, body []byte) []Finding {
	if !op.declares(status) {
		return []Finding{{Kind: FindingUndeclaredStatus, Schema: op.responseLocation(0),
			Message: fmt.Sprintf("status %d is not declared for %s (declared: %s)", status, op.id, strings.Join(op.declaredStatuses(), ", "))}}
	}
	req := caseRequest(c)
	req.raised = raised
	// The stand-in is routed as a valid request would be: what the case
	// varies does not change which response the contract declares.
	in, err := s.input(op.id, req, nil)
	if err != nil {
		return nil
	}
	err = openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: status, Header: header,
		Body: ioNop(body), Options: responseOptions,
	})
	fs := s.findings(err, op, status, body)
	if _, isErr := errorEnvelope(body); isErr && status >= 200 && status < 300 {
		fs = append([]Finding{{Kind: FindingErrorIn200, Path: "/error", Message: fmt.Sprintf("%d with error body: a successful status never carries an error", status)}}, fs...)
	} else if status >= 200 && status < 300 && (c.Expect == expectValid || c.Expect == expectLinked) {
		fs = append(fs, semantic(op, in, req, c.body(), now, body)...)
	}
	return fs
}

// caseRequest is the request struct of a case, for the judge's helpers.
func caseRequest(c *Case) request {
	q := url.Values{}
	for k, v := range c.Query {
		q.Set(k, v)
	}
	return request{method: c.Method, path: c.Path, query: q, key: keyRole(c.Key), store: c.Store}
}

func keyWords(role string) string {
	switch role {
	case roleNone:
		return "no"
	case roleUnknown:
		return "an unknown"
	case roleOther:
		return "another store's"
	}
	return "its own"
}

// signature names a failure for the shrinker: the rule or kind of its
// first finding.
func signature(fs []Finding) string {
	if len(fs) == 0 {
		return ""
	}
	return cmp.Or(fs[0].Rule, fs[0].Kind)
}

func failedRules(fs []Finding) []string {
	var out []string
	for _, f := range fs {
		if id := cmp.Or(f.Rule, f.Kind); !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// candidates are the smaller cases the shrinker tries, best first: each
// optional query parameter dropped, then the varied value moved halfway
// toward the schema's boundary (a number) or cut to half its length (a
// string). Each keeps the case's class, which the caller checks.
func (g *generator) candidates(c *Case) []*Case {
	var out []*Case
	op := g.sp.ops[c.Operation]
	for _, p := range g.params(op) {
		if p.in == openapi3.ParameterInQuery && !p.required && c.Varies != "query."+p.name {
			if _, has := c.Query[p.name]; has {
				d := c.clone()
				delete(d.Query, p.name)
				d.Name += " (without " + p.name + ")"
				out = append(out, d)
			}
		}
	}
	in, name, _ := strings.Cut(c.Varies, ".")
	var p *param
	for _, q := range g.params(op) {
		if q.in == in && q.name == name {
			p = &q
		}
	}
	if p == nil {
		return out
	}
	cur, ok := c.value(in, name)
	if !ok {
		return out
	}
	if n, err := strconv.ParseInt(cur, 10, 64); err == nil && p.schema.Type.Is(openapi3.TypeInteger) {
		bound := n
		switch {
		case p.schema.Min != nil && n < int64(*p.schema.Min):
			bound = int64(*p.schema.Min) - 1
		case p.schema.Max != nil && n > int64(*p.schema.Max):
			bound = int64(*p.schema.Max) + 1
		}
		if mid := n + (bound-n)/2; mid != n {
			out = append(out, c.with(in, name, strconv.FormatInt(mid, 10), true))
		} else if bound != n {
			out = append(out, c.with(in, name, strconv.FormatInt(bound, 10), true))
		}
	} else if p.schema.Type.Is(openapi3.TypeString) && len(cur) > 1 {
		out = append(out, c.with(in, name, cur[:len(cur)/2], false))
	}
	return out
}

// value reads the varied value of a case.
func (c *Case) value(in, name string) (string, bool) {
	switch in {
	case openapi3.ParameterInQuery:
		v, ok := c.Query[name]
		return v, ok
	case "body":
		var b map[string]any
		if c.Body == nil || json.Unmarshal(c.body(), &b) != nil {
			return "", false
		}
		switch v := b[name].(type) {
		case string:
			return v, true
		case float64:
			if v == math.Trunc(v) {
				return strconv.FormatInt(int64(v), 10), true
			}
		}
	case openapi3.ParameterInPath:
		// The shrinker does not rebuild paths from segments it cannot
		// tell apart; path cases are small already.
	}
	return "", false
}

// with returns a copy of the case with the varied value replaced.
func (c *Case) with(in, name, v string, number bool) *Case {
	d := c.clone()
	switch in {
	case openapi3.ParameterInQuery:
		d.Query[name] = v
	case "body":
		var b map[string]any
		_ = json.Unmarshal(c.body(), &b)
		if n, err := strconv.ParseInt(v, 10, 64); err == nil && number {
			b[name] = n
		} else {
			b[name] = v
		}
		d.Body = strp(mustJSON(b))
	}
	d.Name += " (shrunk)"
	return d
}
