package tools

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"
)

// violation is one argument that breaks one keyword of a tool's input.
type violation struct {
	keyword string
	field   string
	value   any
	// want is the start of the sentence that must name the problem.
	want string
}

// violations builds, from an input schema as tools/list shows it, one bad
// value for every keyword of every property (and of an array's items).
func violations(props map[string]any) []violation {
	var out []violation
	for name, raw := range props {
		p := raw.(map[string]any)
		out = append(out, keywordViolations(name, p, func(v any) any { return v })...)
		if items, ok := p["items"].(map[string]any); ok {
			out = append(out, keywordViolations(name+"[0]", items, func(v any) any { return []any{v} })...)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].field+out[i].keyword < out[j].field+out[j].keyword })
	return out
}

func keywordViolations(name string, p map[string]any, wrap func(any) any) []violation {
	var out []violation
	add := func(keyword string, v any, want string) {
		field := strings.TrimSuffix(name, "[0]")
		out = append(out, violation{keyword: keyword, field: field, value: wrap(v), want: want})
	}
	must := name + " must be "
	switch p["type"] {
	case "string":
		add("type", 5, must)
	case "integer":
		add("type", "x", must+"a whole number")
		add("type", 1.5, must+"a whole number")
	case "boolean":
		add("type", "x", must+"true or false")
	}
	if types, ok := p["type"].([]any); ok && len(types) > 0 {
		add("type", "x", must)
	}
	if m, ok := p["minimum"].(float64); ok {
		add("minimum", m-1, fmt.Sprintf("%sat least %v (got %v)", must, m, m-1))
	}
	if m, ok := p["maximum"].(float64); ok {
		add("maximum", m+1, fmt.Sprintf("%sat most %v (got %v)", must, m, m+1))
	}
	if n, ok := p["minLength"].(float64); ok && n > 0 {
		add("minLength", "", must+"at least")
	}
	if n, ok := p["maxLength"].(float64); ok {
		add("maxLength", "x"+strings.Repeat("a", int(n)), must+"at most")
	}
	if _, ok := p["pattern"].(string); ok {
		add("pattern", "\t", must)
	}
	if _, ok := p["enum"]; ok {
		add("enum", "zzz", must+"one of")
	}
	if n, ok := p["maxItems"].(float64); ok {
		var many []any
		for i := range int(n) + 1 {
			many = append(many, fmt.Sprint(100+i))
		}
		out = append(out, violation{keyword: "maxItems", field: name, value: many, want: name + " must list at most"})
	}
	if _, ok := p["minItems"].(float64); ok {
		out = append(out, violation{keyword: "minItems", field: name, value: []any{}, want: name + " must list at least"})
	}
	if p["uniqueItems"] == true {
		out = append(out, violation{keyword: "uniqueItems", field: name, value: []any{"47", "47"}, want: name + ` must not list "47" twice`})
	}
	return out
}

// validatorWords are the JSON Schema validator's own phrases, which no
// answer may show.
var validatorWords = []string{"validating", "/properties/", "less than", "greater than", "of the form", "%!", "does not match", "minimum:", "maximum:"}

// TestEverySchemaErrorIsInWords: every keyword of every tool's input, broken
// on its own, is refused as INVALID_ARGUMENT in a sentence that names the
// field and the rule, never in the validator's terms; so are missing
// required fields.
func TestEverySchemaErrorIsInWords(t *testing.T) {
	for _, writes := range []*WriteOptions{nil, {MaxOrderUnits: 500, AllowWrites: true}} {
		s := connect(t, newFake(), mustKeyring(t, `{"47":"a"}`), func(o *Options) { o.Writes = writes })
		res, err := s.cs.ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		for _, tool := range res.Tools {
			schema := tool.InputSchema.(map[string]any)
			props, _ := schema["properties"].(map[string]any)
			cases := violations(props)
			if req, ok := schema["required"].([]any); ok && len(req) > 0 {
				cases = append(cases, violation{keyword: "required", want: fmt.Sprint(req[0])})
			}
			for _, v := range cases {
				args := map[string]any{}
				if v.field != "" {
					args[v.field] = v.value
				}
				env, _ := callTool(t, s, tool.Name, args)
				msg := errText(env)
				if errCode(env) != "INVALID_ARGUMENT" || !strings.Contains(msg, v.want) {
					t.Errorf("%s %s %s=%v: %s %q, want INVALID_ARGUMENT naming %q", tool.Name, v.keyword, v.field, v.value, errCode(env), msg, v.want)
				}
				for _, w := range validatorWords {
					if strings.Contains(msg, w) {
						t.Errorf("%s %s: %q shows the validator's %q", tool.Name, v.keyword, msg, w)
					}
				}
				seen++
			}
		}
		if seen < 20 {
			t.Fatalf("only %d violations tried; the schemas were not read", seen)
		}
	}
}

// TestQuantityErrorsInWords: the buyer's two quantity mistakes read as
// sentences, and the one above the ceiling says it is the ceiling.
func TestQuantityErrorsInWords(t *testing.T) {
	s := connect(t, newFake(), mustKeyring(t, `{"47":"a"}`), func(o *Options) { o.Writes = &WriteOptions{MaxOrderUnits: 500} })
	for qty, want := range map[int]string{
		0:   "quantity_units must be at least 1 (got 0) | Correct quantity_units and call again.",
		600: "quantity_units must be at most 500 (got 600) | Correct quantity_units and call again. quantity_units: units to order (not cases), at most the ceiling of one order.",
	} {
		env, _ := callTool(t, s, "korral_raise_replenishment_order", map[string]any{"sku": "8847291", "quantity_units": qty, "reason": "r"})
		if got := errText(env); !strings.HasPrefix(got, want) {
			t.Errorf("quantity %d: %q, want %q", qty, got, want)
		}
	}
}

// TestPatternsHaveWords: every pattern an input uses is described in words.
func TestPatternsHaveWords(t *testing.T) {
	for _, p := range []string{skuPattern, storeIDPattern, sweepStoreIDsPattern, idempotencyKeyPattern, orderRefPattern, storeLinkOrderIDPattern, reasonPattern} {
		if patternWords[p] == "" {
			t.Errorf("pattern %s has no words", p)
		}
	}
}
