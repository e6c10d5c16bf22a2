// Command genlimits writes limits.gen.go of the MCP server's adapter
// (mcpserver/internal/upstream) from the embedded contract: for each
// operation, the length and size limits the contract states on its success
// answer, so the adapter enforces the spec's own figures (ADR 0037).
//
// A string's limit is its maxLength; without one, the longest string its
// anchored pattern or its enum allows. minLength, maxItems and minItems are
// taken as stated. A string or array of a success answer that the contract
// leaves unbounded is an error: StoreLink could send it at any size.
//
// Usage: genlimits OUT
package main

import (
	"bytes"
	"fmt"
	"go/format"
	"net/http"
	"os"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/korral/storelink/openapi"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: genlimits OUT")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "genlimits:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	doc, err := openapi.Load()
	if err != nil {
		return err
	}
	ops, err := operations(doc)
	if err != nil {
		return err
	}
	src, err := render(ops)
	if err != nil {
		return err
	}
	return os.WriteFile(out, src, 0o644)
}

// limit is one bounded value of an answer: a string's length in
// characters, or an array's item count. Zero means not stated.
type limit struct {
	path     string
	min, max int
	items    bool
	// from says where a string's max comes from when not maxLength:
	// "pattern" or "enum".
	from string
}

// operation is one operation's success answer and its limits.
type operation struct {
	method, route, schema string
	limits                []limit
}

// operations lists, sorted by route and method, every operation with a
// JSON success answer.
func operations(doc *openapi3.T) ([]operation, error) {
	var out []operation
	for _, route := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(route)
		for method, op := range item.Operations() {
			ref := success(op)
			if ref == nil {
				continue
			}
			o := operation{method: method, route: route, schema: strings.TrimPrefix(ref.Ref, "#/components/schemas/")}
			if err := walk(ref, "", &o.limits, 0); err != nil {
				return nil, fmt.Errorf("%s %s: %w", method, route, err)
			}
			out = append(out, o)
		}
	}
	slices.SortFunc(out, func(a, b operation) int {
		return strings.Compare(a.route+" "+a.method, b.route+" "+b.method)
	})
	return out, nil
}

// success is the schema of an operation's 2xx JSON answer; nil for none.
func success(op *openapi3.Operation) *openapi3.SchemaRef {
	for _, status := range []int{http.StatusOK, http.StatusCreated} {
		r := op.Responses.Status(status)
		if r == nil || r.Value == nil {
			continue
		}
		if mt := r.Value.Content.Get("application/json"); mt != nil && mt.Schema != nil {
			return mt.Schema
		}
	}
	return nil
}

// walk adds the limits of the value at path (a JSON Pointer, "*" for every
// item of an array).
func walk(ref *openapi3.SchemaRef, path string, into *[]limit, depth int) error {
	if depth > 16 {
		return fmt.Errorf("%s: nested too deep", path)
	}
	s := ref.Value
	switch {
	case s.Type.Is(openapi3.TypeString):
		return addString(s, path, into)
	case s.Type.Is(openapi3.TypeArray):
		if s.MaxItems == nil {
			return fmt.Errorf("%s: an array without maxItems; state one in storelink.yaml", path)
		}
		*into = append(*into, limit{path: path, min: int(s.MinItems), max: int(*s.MaxItems), items: true})
		return walk(s.Items, path+"/*", into, depth+1)
	case s.Type.Is(openapi3.TypeObject):
		names := make([]string, 0, len(s.Properties))
		for name := range s.Properties {
			names = append(names, name)
		}
		slices.Sort(names)
		for _, name := range names {
			if err := walk(s.Properties[name], path+"/"+name, into, depth+1); err != nil {
				return err
			}
		}
	}
	return nil
}

// addString adds a string's limit. A date-time decodes to a time, never
// kept as text, so it needs none.
func addString(s *openapi3.Schema, path string, into *[]limit) error {
	l := limit{path: path, min: int(s.MinLength)}
	switch {
	case s.MaxLength != nil:
		l.max = int(*s.MaxLength)
	case s.Pattern != "":
		n, ok, err := patternMax(s.Pattern)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		if ok {
			l.max, l.from = n, "pattern"
		}
	case len(s.Enum) > 0:
		for _, v := range s.Enum {
			if str, ok := v.(string); ok {
				l.max = max(l.max, utf8.RuneCountInString(str))
			}
		}
		l.from = "enum"
	}
	if l.max == 0 {
		if s.Format == "date-time" {
			return nil
		}
		return fmt.Errorf("%s: a string without maxLength, a bounded pattern or an enum; state a maxLength in storelink.yaml", path)
	}
	*into = append(*into, l)
	return nil
}

// patternMax is the most characters a string matching pattern can hold;
// ok is false when the pattern is not anchored at both ends or repeats
// without bound.
func patternMax(pattern string) (n int, ok bool, err error) {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return 0, false, fmt.Errorf("pattern %q: %w", pattern, err)
	}
	re = re.Simplify()
	if re.Op != syntax.OpConcat || len(re.Sub) < 2 ||
		re.Sub[0].Op != syntax.OpBeginText || re.Sub[len(re.Sub)-1].Op != syntax.OpEndText {
		return 0, false, nil
	}
	n, ok = longest(re)
	return n, ok, nil
}

// longest is the most characters re matches; ok is false when unbounded.
func longest(re *syntax.Regexp) (int, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return len(re.Rune), true
	case syntax.OpCharClass, syntax.OpAnyChar, syntax.OpAnyCharNotNL:
		return 1, true
	case syntax.OpCapture, syntax.OpQuest:
		return longest(re.Sub[0])
	case syntax.OpRepeat:
		n, ok := longest(re.Sub[0])
		return n * re.Max, ok && re.Max >= 0
	case syntax.OpConcat, syntax.OpAlternate:
		total := 0
		for _, sub := range re.Sub {
			n, ok := longest(sub)
			if !ok {
				return 0, false
			}
			if re.Op == syntax.OpConcat {
				total += n
			} else {
				total = max(total, n)
			}
		}
		return total, true
	case syntax.OpStar, syntax.OpPlus:
		return 0, false
	}
	// Empty matches and assertions match no character.
	return 0, true
}

// render is the Go source of limits.gen.go.
func render(ops []operation) ([]byte, error) {
	var b bytes.Buffer
	b.WriteString(`// Code generated by genlimits from openapi/storelink.yaml. DO NOT EDIT.

package upstream

// contractLimits are the length and size limits the contract states on each
// operation's success answer (ADR 0037): paths are JSON Pointers, "*" for
// every item of an array.
var contractLimits = []operationLimits{
`)
	for _, o := range ops {
		fmt.Fprintf(&b, "\t{method: %q, route: %q, schema: %q, limits: []limit{\n", o.method, o.route, o.schema)
		for _, l := range o.limits {
			fmt.Fprintf(&b, "\t\t{path: %q", l.path)
			if l.items {
				b.WriteString(", items: true")
			}
			if l.min > 0 {
				b.WriteString(", min: " + strconv.Itoa(l.min))
			}
			b.WriteString(", max: " + strconv.Itoa(l.max))
			if l.from != "" {
				fmt.Fprintf(&b, ", from: %q", l.from)
			}
			b.WriteString("},\n")
		}
		b.WriteString("\t}},\n")
	}
	b.WriteString("}\n")
	return format.Source(b.Bytes())
}
