package tools

import (
	"encoding/json"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
)

// patternWords says in words what each input pattern admits; a schema error
// for a pattern reads "sku must be 4 to 14 digits". Every pattern of every
// tool's input has an entry (TestEverySchemaErrorIsInWords).
var patternWords = map[string]string{
	skuPattern:              "4 to 14 digits, like \"8847291\"",
	storeIDPattern:          "1 to 6 digits, like \"47\"",
	sweepStoreIDsPattern:    "1 to 6 digits, like \"47\", or \"all\"",
	idempotencyKeyPattern:   "8 to 128 letters, digits, '.', '_', ':' or '-', starting with a letter or digit, as the preview returned it",
	orderRefPattern:         "1 to 128 letters, digits, '.', '_', ':', '~' or '-', starting with a letter or digit",
	storeLinkOrderIDPattern: storeLinkOrderIDShape,
	reasonPattern:           "text that is not only blank space",
}

// argProblems says, in words, what is wrong with a tool's arguments
// against its input schema: one sentence per problem, sorted, such as
// "quantity_units must be at least 1 (got 0)". It is asked only after the
// validator refused the arguments; an empty answer means the validator saw
// something these words do not cover.
func argProblems(root *jsonschema.Schema, args map[string]any) (problems, fields []string) {
	var out []string
	var missing []string
	for _, name := range root.Required {
		if _, ok := args[name]; !ok {
			missing = append(missing, name)
		}
	}
	if len(missing) > 0 {
		out = append(out, fmt.Sprintf("%s %s required", strings.Join(missing, " and "), plural(len(missing), "is", "are")))
		fields = append(fields, missing...)
	}
	for name, v := range args {
		if p := root.Properties[name]; p != nil {
			if more := valueProblems(name, p, v); len(more) > 0 {
				out = append(out, more...)
				fields = append(fields, name)
			}
		}
	}
	sort.Strings(out)
	sort.Strings(fields)
	return out, fields
}

// invalidArgs is the INVALID_ARGUMENT answer for arguments the validator
// refused: the problems in words, and a remediation that repeats each
// field's description (where, for example, the order ceiling is stated).
func invalidArgs(root *jsonschema.Schema, args map[string]any, err error) *apperr.Error {
	problems, fields := argProblems(root, args)
	if len(problems) == 0 {
		return apperr.New(apperr.InvalidArgument, "invalid arguments: "+tidyValidation(err), "Correct the value as the tool's input schema describes and call again.")
	}
	fix := "Correct " + strings.Join(fields, " and ") + " and call again."
	for _, f := range fields {
		if p := root.Properties[f]; p != nil && p.Description != "" {
			fix += fmt.Sprintf(" %s: %s.", f, p.Description)
		}
	}
	return apperr.New(apperr.InvalidArgument, strings.Join(problems, "; "), fix)
}

// valueProblems checks one value against the keywords the tools' inputs use.
func valueProblems(name string, p *jsonschema.Schema, v any) []string {
	if want, ok := typeMismatch(p, v); !ok {
		return []string{fmt.Sprintf("%s must be %s (got %s)", name, want, shown(v))}
	}
	var out []string
	switch x := v.(type) {
	case float64:
		if p.Minimum != nil && x < *p.Minimum {
			out = append(out, fmt.Sprintf("%s must be at least %s (got %s)", name, num(*p.Minimum), num(x)))
		}
		if p.Maximum != nil && x > *p.Maximum {
			out = append(out, fmt.Sprintf("%s must be at most %s (got %s)", name, num(*p.Maximum), num(x)))
		}
	case string:
		n := utf8.RuneCountInString(x)
		if p.MinLength != nil && n < *p.MinLength {
			out = append(out, fmt.Sprintf("%s must be at least %d %s long (got %d)", name, *p.MinLength, plural(*p.MinLength, "character", "characters"), n))
		}
		if p.MaxLength != nil && n > *p.MaxLength {
			out = append(out, fmt.Sprintf("%s must be at most %d characters long (got %d)", name, *p.MaxLength, n))
		}
		if p.Pattern != "" && !matches(p.Pattern, x) {
			out = append(out, fmt.Sprintf("%s must be %s (got %s)", name, patternWord(p.Pattern), shown(v)))
		}
	case []any:
		out = append(out, arrayProblems(name, p, x)...)
	}
	if len(p.Enum) > 0 && !inEnum(p.Enum, v) {
		out = append(out, fmt.Sprintf("%s must be one of %s (got %s)", name, enumList(p.Enum), shown(v)))
	}
	return out
}

func arrayProblems(name string, p *jsonschema.Schema, x []any) []string {
	var out []string
	if p.MinItems != nil && len(x) < *p.MinItems {
		out = append(out, fmt.Sprintf("%s must list at least %d %s (got %d)", name, *p.MinItems, plural(*p.MinItems, "item", "items"), len(x)))
	}
	if p.MaxItems != nil && len(x) > *p.MaxItems {
		out = append(out, fmt.Sprintf("%s must list at most %d items (got %d)", name, *p.MaxItems, len(x)))
	}
	if p.UniqueItems {
		seen := map[string]bool{}
		for _, e := range x {
			b, _ := json.Marshal(e)
			if seen[string(b)] {
				out = append(out, fmt.Sprintf("%s must not list %s twice", name, shown(e)))
				break
			}
			seen[string(b)] = true
		}
	}
	if p.Items != nil {
		for i, e := range x {
			if more := valueProblems(fmt.Sprintf("%s[%d]", name, i), p.Items, e); len(more) > 0 {
				// The first bad item is enough to correct the call.
				return append(out, more...)
			}
		}
	}
	return out
}

// typeMismatch reports the expected type in words and whether v has it.
func typeMismatch(p *jsonschema.Schema, v any) (string, bool) {
	types := p.Types
	if p.Type != "" {
		types = []string{p.Type}
	}
	if len(types) == 0 {
		return "", true
	}
	var words []string
	for _, t := range types {
		if hasType(t, v) {
			return "", true
		}
		words = append(words, typeWords[t])
	}
	return strings.Join(words, " or "), false
}

var typeWords = map[string]string{
	"string": "a string", "integer": "a whole number", "number": "a number", "boolean": "true or false",
	"array": "a list", "object": "an object", "null": "null",
}

func hasType(t string, v any) bool {
	switch x := v.(type) {
	case string:
		return t == "string"
	case float64:
		return t == "number" || t == "integer" && x == math.Trunc(x) && !math.IsInf(x, 0)
	case bool:
		return t == "boolean"
	case []any:
		return t == "array"
	case map[string]any:
		return t == "object"
	case nil:
		return t == "null"
	}
	return false
}

func matches(pattern, s string) bool {
	re, err := regexp.Compile(pattern)
	return err != nil || re.MatchString(s)
}

func patternWord(pattern string) string {
	if w, ok := patternWords[pattern]; ok {
		return w
	}
	return "of the form " + pattern
}

func inEnum(enum []any, v any) bool {
	b, _ := json.Marshal(v)
	for _, e := range enum {
		if eb, _ := json.Marshal(e); string(eb) == string(b) {
			return true
		}
	}
	return false
}

func enumList(enum []any) string {
	var each []string
	for _, e := range enum {
		each = append(each, shown(e))
	}
	return strings.Join(each, ", ")
}

// shown is a caller's value as a message quotes it: JSON, escaped and
// bounded, since it is the caller's own and unchecked.
func shown(v any) string {
	switch x := v.(type) {
	case string:
		if r := []rune(x); len(r) > 40 {
			x = string(r[:40]) + "..."
		}
		return strconv.Quote(x)
	case float64:
		return num(x)
	case []any:
		return "a list"
	case map[string]any:
		return "an object"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

func num(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// plural is one or many, by n.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
