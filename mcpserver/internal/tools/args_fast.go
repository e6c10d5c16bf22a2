package tools

import (
	"encoding/json"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
)

// The argument check's fast path. decodeArgs checks a tool call's
// arguments with the generic schema walk: a decode to a map, the unknown
// name check, ApplyDefaults and Validate, a marshal and a strict decode
// into In. That walk cost 4-6% of a warm risk check's server CPU in
// issue 44's profiles, and about 110 allocations. For the arguments a model usually sends, an
// argPlan decides the same in one scan of the JSON and fills In by field
// index. Anything the plan does not handle (an escape in a string, a
// null, a float, a duplicate or unknown name, a value that breaks a
// rule) makes it give up, and decodeArgs decides: every error, with its
// message and code, still comes from decodeArgs. The plan must never
// accept what decodeArgs refuses, and must give the same In when it
// accepts (TestFastArgsAgreeWithTheSchemaWalk, FuzzFastArgs).

// maxArgRules and maxArgItems bound what the plan handles: a schema with
// more properties has no plan, and an array with more items goes to
// decodeArgs.
const (
	maxArgRules = 16
	maxArgItems = 64
)

// argKind is the JSON type a rule accepts and the Go type it fills.
type argKind uint8

const (
	argString  argKind = iota + 1 // a JSON string into a string field
	argInt                        // a JSON integer into an int or int64 field
	argBool                       // true or false into a bool field
	argStrings                    // an array of strings into a []string field
)

// strRule is what a string value (or each item of an array) must satisfy.
type strRule struct {
	pattern *regexp.Regexp
	// minLen and maxLen count code points, as the validator does; -1
	// when the schema sets none.
	minLen, maxLen int
}

// argRule is the plan for one property of the input schema.
type argRule struct {
	name     string
	field    int
	kind     argKind
	required bool
	str      strRule
	// hasMin, min, hasMax, max are the integer bounds (minimum, maximum).
	hasMin, hasMax bool
	min, max       float64
	// minItems and maxItems are -1 when the schema sets none.
	minItems, maxItems int
	unique             bool
	// def is the value an absent property takes, nil for none.
	def *argValue
}

// argValue is one property's value as scanned.
type argValue struct {
	set bool
	s   string
	n   int64
	b   bool
	ss  []string
}

// argPlan decodes the arguments of one tool without the schema walk.
type argPlan[In any] struct {
	rules []argRule
}

// Keywords the plan implements or that only annotate; a schema with any
// other keyword has no plan.
var (
	planRootKeys = []string{"type", "properties", "required", "additionalProperties", "description", "title"}
	planPropKeys = []string{"type", "description", "title", "pattern", "minLength", "maxLength", "minimum", "maximum",
		"default", "items", "minItems", "maxItems", "uniqueItems",
		// format is an annotation only: jsonschema-go's Validate does not check it.
		"format"}
	planItemKeys = []string{"type", "description", "title", "pattern", "minLength", "maxLength"}
)

// newArgPlan compiles the tool's input schema into a plan for In, or
// returns nil when the schema or In uses anything the plan does not
// implement (then every call takes decodeArgs).
func newArgPlan[In any](root *jsonschema.Schema) *argPlan[In] {
	t := reflect.TypeFor[In]()
	if t.Kind() != reflect.Struct || root == nil || len(root.Properties) > maxArgRules || root.Type != "object" ||
		!onlyKeys(root, planRootKeys) {
		return nil
	}
	if ap := root.AdditionalProperties; ap != nil {
		if b, err := json.Marshal(ap); err != nil || string(b) != "false" {
			return nil
		}
	}
	fields, ok := jsonFields(t)
	if !ok {
		return nil
	}
	p := &argPlan[In]{}
	for name, ps := range root.Properties {
		f, ok := fields[name]
		if !ok || !plainName(name) {
			return nil
		}
		r, ok := newArgRule(name, t.Field(f), ps, slices.Contains(root.Required, name))
		if !ok {
			return nil
		}
		r.field = f
		p.rules = append(p.rules, r)
	}
	for _, name := range root.Required {
		if root.Properties[name] == nil {
			return nil
		}
	}
	slices.SortFunc(p.rules, func(a, b argRule) int { return strings.Compare(a.name, b.name) })
	return p
}

// onlyKeys reports whether s, as JSON, has no keyword outside keys.
func onlyKeys(s *jsonschema.Schema, keys []string) bool {
	b, err := json.Marshal(s)
	if err != nil {
		return false
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return false
	}
	for k := range m {
		if !slices.Contains(keys, k) {
			return false
		}
	}
	return true
}

// plainName reports whether a property name is printable ASCII without a
// quote or backslash, so an unescaped key in the JSON compares byte for byte.
func plainName(name string) bool {
	for i := 0; i < len(name); i++ {
		if c := name[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return name != ""
}

// jsonFields maps the JSON names of t's fields to their index, as
// encoding/json would; ok is false for a shape the plan does not fill
// (an embedded field, a tag option other than omitempty and omitzero, two
// fields with one name).
func jsonFields(t reflect.Type) (map[string]int, bool) {
	fields := map[string]int{}
	for i := range t.NumField() {
		f := t.Field(i)
		if f.Anonymous {
			return nil, false
		}
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		for _, o := range strings.Split(opts, ",") {
			if o != "" && o != "omitempty" && o != "omitzero" {
				return nil, false
			}
		}
		if name == "" {
			name = f.Name
		}
		if _, dup := fields[name]; dup {
			return nil, false
		}
		fields[name] = i
	}
	return fields, true
}

// schemaTypes is the schema's type keyword as a list.
func schemaTypes(s *jsonschema.Schema) []string {
	if s.Type != "" {
		return []string{s.Type}
	}
	return s.Types
}

// newArgRule plans one property filling field f.
func newArgRule(name string, f reflect.StructField, s *jsonschema.Schema, required bool) (argRule, bool) {
	r := argRule{name: name, required: required, minItems: -1, maxItems: -1}
	if s == nil || !onlyKeys(s, planPropKeys) {
		return r, false
	}
	types := schemaTypes(s)
	switch {
	case f.Type.Kind() == reflect.String && slices.Contains(types, "string"):
		r.kind = argString
	case (f.Type.Kind() == reflect.Int64 || f.Type.Kind() == reflect.Int && strconv.IntSize == 64) && slices.Contains(types, "integer"):
		r.kind = argInt
	case f.Type.Kind() == reflect.Bool && slices.Contains(types, "boolean"):
		r.kind = argBool
	case f.Type == reflect.TypeFor[[]string]() && slices.Contains(types, "array"):
		r.kind = argStrings
	default:
		return r, false
	}
	var ok bool
	if r.kind == argStrings {
		it := s.Items
		if it == nil || !onlyKeys(it, planItemKeys) || !slices.Equal(schemaTypes(it), []string{"string"}) ||
			s.Pattern != "" || s.MinLength != nil || s.MaxLength != nil {
			return r, false
		}
		if r.str, ok = newStrRule(it); !ok {
			return r, false
		}
	} else if s.Items != nil || s.MinItems != nil || s.MaxItems != nil || s.UniqueItems {
		return r, false
	}
	if r.kind == argString {
		if r.str, ok = newStrRule(s); !ok {
			return r, false
		}
	} else if s.Pattern != "" || s.MinLength != nil || s.MaxLength != nil {
		return r, false
	}
	if r.kind != argInt && (s.Minimum != nil || s.Maximum != nil) {
		return r, false
	}
	if s.Minimum != nil {
		r.hasMin, r.min = true, *s.Minimum
	}
	if s.Maximum != nil {
		r.hasMax, r.max = true, *s.Maximum
	}
	if s.MinItems != nil {
		r.minItems = *s.MinItems
	}
	if s.MaxItems != nil {
		r.maxItems = *s.MaxItems
	}
	r.unique = s.UniqueItems
	// The validator ignores the default of a required property.
	if s.Default != nil && !required {
		if r.kind == argStrings {
			return r, false // a shared default slice could be changed by a handler
		}
		var v argValue
		sc := argScanner{s: string(s.Default)}
		if !sc.value(&r, &v) || !sc.end() || !r.valid(&v) {
			return r, false
		}
		r.def = &v
	}
	return r, true
}

// newStrRule plans a string's pattern and lengths.
func newStrRule(s *jsonschema.Schema) (strRule, bool) {
	r := strRule{minLen: -1, maxLen: -1}
	if s.Pattern != "" {
		re, err := regexp.Compile(s.Pattern)
		if err != nil {
			return r, false
		}
		r.pattern = re
	}
	if s.MinLength != nil {
		r.minLen = *s.MinLength
	}
	if s.MaxLength != nil {
		r.maxLen = *s.MaxLength
	}
	return r, true
}

// valid reports whether s satisfies the string rule.
func (r *strRule) valid(s string) bool {
	if r.minLen >= 0 || r.maxLen >= 0 {
		n := utf8.RuneCountInString(s)
		if r.minLen >= 0 && n < r.minLen || r.maxLen >= 0 && n > r.maxLen {
			return false
		}
	}
	return r.pattern == nil || r.pattern.MatchString(s)
}

// valid reports whether a scanned value satisfies the rule.
func (r *argRule) valid(v *argValue) bool {
	switch r.kind {
	case argString:
		return r.str.valid(v.s)
	case argInt:
		f := float64(v.n) // exact: the scanner takes at most 15 digits
		return !(r.hasMin && f < r.min) && !(r.hasMax && f > r.max)
	case argStrings:
		n := len(v.ss)
		if r.minItems >= 0 && n < r.minItems || r.maxItems >= 0 && n > r.maxItems {
			return false
		}
		for i, s := range v.ss {
			if !r.str.valid(s) || r.unique && slices.Contains(v.ss[:i], s) {
				return false
			}
		}
	}
	return true
}

// decode checks and decodes raw as decodeArgs would, when it can; ok is
// false when decodeArgs must decide.
func (p *argPlan[In]) decode(raw []byte) (in In, ok bool) {
	var vals [maxArgRules]argValue
	if !p.scan(raw, vals[:len(p.rules)]) {
		return in, false
	}
	for i := range p.rules {
		r, v := &p.rules[i], &vals[i]
		if !v.set {
			if r.required {
				return in, false
			}
			continue
		}
		if !r.valid(v) {
			return in, false
		}
	}
	rv := reflect.ValueOf(&in).Elem()
	for i := range p.rules {
		r, v := &p.rules[i], &vals[i]
		if !v.set {
			if r.def == nil {
				continue
			}
			v = r.def
		}
		f := rv.Field(r.field)
		switch r.kind {
		case argString:
			f.SetString(v.s)
		case argInt:
			f.SetInt(v.n)
		case argBool:
			f.SetBool(v.b)
		case argStrings:
			*f.Addr().Interface().(*[]string) = v.ss
		}
	}
	return in, true
}

// scan reads raw, a JSON object (or nothing, or null, which decodeArgs
// reads as {}), into vals by rule; false on anything the plan does not
// handle.
func (p *argPlan[In]) scan(raw []byte, vals []argValue) bool {
	sc := argScanner{s: string(raw)}
	sc.ws()
	if sc.end() {
		return true
	}
	if strings.HasPrefix(sc.s[sc.i:], "null") {
		sc.i += len("null")
		return sc.end()
	}
	if !sc.take('{') {
		return false
	}
	sc.ws()
	if sc.take('}') {
		return sc.end()
	}
	for {
		key, ok := sc.str()
		if !ok {
			return false
		}
		i := p.rule(key)
		if i < 0 || vals[i].set {
			return false // unknown or repeated
		}
		sc.ws()
		if !sc.take(':') {
			return false
		}
		sc.ws()
		if !sc.value(&p.rules[i], &vals[i]) {
			return false
		}
		sc.ws()
		if sc.take('}') {
			return sc.end()
		}
		if !sc.take(',') {
			return false
		}
		sc.ws()
	}
}

// rule is the index of the rule for name, or -1.
func (p *argPlan[In]) rule(name string) int {
	for i := range p.rules {
		if p.rules[i].name == name {
			return i
		}
	}
	return -1
}
