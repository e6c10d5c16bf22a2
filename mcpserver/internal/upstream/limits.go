package upstream

import (
	"context"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	"github.com/korral/storelink/mcpserver/internal/callid"
	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
)

//go:generate env GOWORK=off go run -C ../../../openapi ./internal/genlimits ../mcpserver/internal/upstream/limits.gen.go

// Rule ids of the contract's limits on what StoreLink sends (ADR 0037).
const (
	RuleMaxLength = "schema.max_length"
	RuleMinLength = "schema.min_length"
	RuleMaxItems  = "schema.max_items"
	RuleMinItems  = "schema.min_items"
)

// operationLimits are the limits of one operation's success answer, as
// limits.gen.go lists them.
type operationLimits struct {
	method, route, schema string
	limits                []limit
}

// limit bounds the value at path (a JSON Pointer, "*" for every item): a
// string's length in characters, or with items an array's item count. A
// zero min is none. from says where a string's max comes from when the
// contract states no maxLength: "pattern" or "enum".
type limit struct {
	path     string
	items    bool
	min, max int
	from     string
}

// node is a limit plan over a Go type: the value at one place of the
// answer, its own limit (nil when only values below it are bounded), and
// the places below it that are bounded.
type node struct {
	// name is the JSON name of a struct field; "" for an array's items.
	name  string
	field int
	lim   *limit
	kids  []*node
	// elem is the plan of each item of an array.
	elem *node
}

// plans holds one plan per operation (GET and /v1/skus/{sku}), compiled
// against the operation's Go type on first use; a nil plan has no limit.
var plans struct {
	mu sync.RWMutex
	of map[planKey]*node
}

// planKey is an operation; a struct, so a look-up builds no string.
type planKey struct{ method, route string }

// planFor is the plan of an operation's answer of type t.
func planFor(method, route string, t reflect.Type) *node {
	key := planKey{method: method, route: route}
	plans.mu.RLock()
	p, ok := plans.of[key]
	plans.mu.RUnlock()
	if ok {
		return p
	}
	for i := range contractLimits {
		if o := &contractLimits[i]; o.method == method && o.route == route {
			p = compile(t, o.limits)
		}
	}
	plans.mu.Lock()
	defer plans.mu.Unlock()
	if q, ok := plans.of[key]; ok {
		return q
	}
	if plans.of == nil {
		plans.of = map[planKey]*node{}
	}
	plans.of[key] = p
	return p
}

// compile builds the plan of t for limits. A limit whose path names no
// field of t (a generated client older than the contract) is left out;
// TestEveryLimitHasAField keeps the two in step.
func compile(t reflect.Type, limits []limit) *node {
	root := &node{field: -1}
	for i := range limits {
		l := &limits[i]
		n, at := root, t
		ok := true
		for _, part := range strings.Split(strings.TrimPrefix(l.path, "/"), "/") {
			if n, at, ok = step(n, at, part); !ok {
				break
			}
		}
		if ok {
			n.lim = l
		}
	}
	if len(root.kids) == 0 {
		return nil
	}
	return root
}

// step is the child of n for one part of a path, made when new, and its type.
func step(n *node, t reflect.Type, part string) (*node, reflect.Type, bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if part == "*" {
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return nil, nil, false
		}
		if n.elem == nil {
			n.elem = &node{field: -1}
		}
		return n.elem, t.Elem(), true
	}
	if t.Kind() != reflect.Struct {
		return nil, nil, false
	}
	for i := range t.NumField() {
		f := t.Field(i)
		if name, _, _ := strings.Cut(f.Tag.Get("json"), ","); name != part || !f.IsExported() {
			continue
		}
		for _, k := range n.kids {
			if k.field == i {
				return k, f.Type, true
			}
		}
		k := &node{name: part, field: i}
		n.kids = append(n.kids, k)
		return k, f.Type, true
	}
	return nil, nil, false
}

// limitBreak is one value over (or under) its limit: where, what it holds
// (characters or items, never the value), and the value itself, settable,
// so a qualifier can be left empty.
type limitBreak struct {
	at   *node
	path string
	got  int
	v    reflect.Value
}

// walker is one pass over a decoded answer. path holds, per level, a
// field's JSON name or (name "") an item's index; it is spelt out only for
// a break.
type walker struct {
	path   []pathStep
	breaks []limitBreak
}

type pathStep struct {
	name  string
	index int
}

// where is the walker's place as a dotted path: transactions.3.units.
func (w *walker) where() string {
	parts := make([]string, len(w.path))
	for i, s := range w.path {
		parts[i] = s.name
		if s.name == "" {
			parts[i] = strconv.Itoa(s.index)
		}
	}
	return strings.Join(parts, ".")
}

// walk checks v (the value at n) and what is below it. An array over its
// limit is not walked further.
func (w *walker) walk(v reflect.Value, n *node) {
	at := v
	for v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	if n.lim != nil {
		if got, ok := within(v, n.lim); !ok {
			w.breaks = append(w.breaks, limitBreak{at: n, path: w.where(), got: got, v: at})
			return
		}
	}
	for _, k := range n.kids {
		w.path = append(w.path, pathStep{name: k.name})
		w.walk(v.Field(k.field), k)
		w.path = w.path[:len(w.path)-1]
	}
	if n.elem != nil && (v.Kind() == reflect.Slice || v.Kind() == reflect.Array) {
		for i := range v.Len() {
			w.path = append(w.path, pathStep{index: i})
			w.walk(v.Index(i), n.elem)
			w.path = w.path[:len(w.path)-1]
		}
	}
}

// within reports whether v keeps l, and what it holds when not. The
// characters are counted only when the bytes alone cannot tell.
func within(v reflect.Value, l *limit) (int, bool) {
	if l.items {
		if v.Kind() != reflect.Slice && v.Kind() != reflect.Array {
			return 0, true
		}
		n := v.Len()
		return n, n <= l.max && n >= l.min
	}
	if v.Kind() != reflect.String {
		return 0, true
	}
	s := v.String()
	if len(s) <= l.max && len(s) >= l.min && (l.min <= 1 || len(s) >= 4*l.min) {
		return len(s), true
	}
	n := utf8.RuneCountInString(s)
	return n, n <= l.max && n >= l.min
}

// rule is a break's rule text and id: what the value holds against what
// the contract allows, never the value.
func (b limitBreak) rule() (text, id string) {
	l := b.at.lim
	unit, minID, maxID := "character", RuleMinLength, RuleMaxLength
	if l.items {
		unit, minID, maxID = "item", RuleMinItems, RuleMaxItems
	}
	got := counted(b.got, unit)
	if b.got < l.min {
		if b.got == 0 && !l.items {
			got = "empty"
		}
		return got + ", the contract asks for at least " + counted(l.min, unit), minID
	}
	switch l.from {
	case "pattern":
		return got + ", the contract's pattern allows " + strconv.Itoa(l.max), maxID
	case "enum":
		return got + ", the contract's longest value has " + strconv.Itoa(l.max), maxID
	}
	return got + ", the contract allows " + strconv.Itoa(l.max), maxID
}

// counted is "1 item", "2 items".
func counted(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return strconv.Itoa(n) + " " + unit + "s"
}

// overLimits checks a decoded answer against the contract's limits in one
// pass. A qualifier over its limit is left empty in v and made unknown,
// logged like any unreadable qualifier (ADR 0030); any other break is the
// answer's fault, naming each field once with its rule. unknown nil means
// every break is refused.
func (c *Client) overLimits(ctx context.Context, method, route, storeID string, v any, unknown *domain.Unknown) error {
	rv := reflect.ValueOf(v)
	if !rv.IsValid() || rv.Kind() != reflect.Pointer || rv.IsNil() {
		return nil
	}
	plan := planFor(method, route, rv.Type())
	if plan == nil {
		return nil
	}
	// Room for the path of any answer's deepest field: one allocation, not
	// one per level.
	w := walker{path: make([]pathStep, 0, 8)}
	w.walk(rv, plan)
	if len(w.breaks) == 0 {
		return nil
	}
	root := resources[route]
	var first *fault
	var unreadable []string
	named := map[*node]bool{}
	for _, b := range w.breaks {
		field := fieldPath(root, b.path)
		text, id := b.rule()
		if s, ok := domain.IsQualifier(field); ok && unknown != nil {
			b.v.SetZero()
			unknown.Add(s.Name)
			if !named[b.at] {
				unreadable = append(unreadable, field+" ("+id+")")
			}
		} else if !named[b.at] {
			f := &fault{field: field, rule: text, id: id, err: sl.ErrMalformedResponse}
			if first == nil {
				first = f
			} else {
				first.more = append(first.more, f)
			}
		}
		named[b.at] = true
	}
	if len(unreadable) > 0 {
		c.log.WarnContext(ctx, "upstream.qualifier_unreadable", "call_id", callid.From(ctx), "route", route,
			"store_id", storeID, "fields", bounded(unreadable, maxLoggedFields), "count", len(unreadable))
	}
	if first == nil {
		return nil
	}
	return first
}
