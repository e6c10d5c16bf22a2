package contract

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// objectProblem is a property the contract does not allow, with the object
// it was found in and that object's schema: the material of a rename.
type objectProblem struct {
	parent string // JSON Pointer of the object
	schema *openapi3.Schema
	value  any
	found  string
}

// evidence describes a schema finding for suggest: the component it is
// about, the property, the JSON type of an unexpected property's value, and
// the shape of a value that broke a pattern. It reads values only to type
// and measure them.
func (s *spec) evidence(se *openapi3.SchemaError, field string, tokens []string) *Evidence {
	ev := &Evidence{Component: componentName(s.schemaAt[se.Schema])}
	switch field {
	case "additionalProperties":
		if obj, ok := se.Value.(map[string]any); ok && len(tokens) > 0 {
			name := tokens[len(tokens)-1]
			ev.Found = name
			ev.JSONType, ev.Format = jsonType(obj[name])
		}
	case "required":
		if m := quotedName.FindStringSubmatch(se.Reason); m != nil {
			ev.Property = m[1]
		}
	case "pattern":
		ev.Pattern = se.Schema.Pattern
		if v, ok := se.Value.(string); ok {
			ev.Shape = shapeOf(v)
		}
		if len(tokens) > 0 {
			ev.Property = tokens[len(tokens)-1]
		}
	default:
		if len(tokens) > 0 {
			ev.Property = tokens[len(tokens)-1]
		}
	}
	if *ev == (Evidence{}) {
		return nil
	}
	return ev
}

// componentName is the component of a location such as
// "#/components/schemas/Supplier/properties/x": "Supplier".
func componentName(loc string) string {
	rest, ok := strings.CutPrefix(loc, "#/components/schemas/")
	if !ok {
		return ""
	}
	name, _, _ := strings.Cut(rest, "/")
	return name
}

// jsonType names the JSON type of a decoded value, and "date-time" as its
// format when it is a string that reads as an RFC 3339 date-time.
func jsonType(v any) (typ, format string) {
	switch x := v.(type) {
	case nil:
		return "null", ""
	case bool:
		return "boolean", ""
	case string:
		if _, err := time.Parse(time.RFC3339, x); err == nil {
			return "string", "date-time"
		}
		return "string", ""
	case float64:
		if x == float64(int64(x)) {
			return "integer", ""
		}
		return "number", ""
	case json.Number:
		if _, err := x.Int64(); err == nil {
			return "integer", ""
		}
		return "number", ""
	case int, int64:
		return "integer", ""
	case []any:
		return "array", ""
	case map[string]any:
		return "object", ""
	}
	return "", ""
}

// shapeOf describes a string by its character classes and length.
func shapeOf(v string) *Shape {
	var lower, upper, digit bool
	var punct []rune
	n := 0
	for _, r := range v {
		n++
		switch {
		case r >= 'a' && r <= 'z':
			lower = true
		case r >= 'A' && r <= 'Z':
			upper = true
		case r >= '0' && r <= '9':
			digit = true
		case r < 0x80 && unicode.IsPrint(r) && !slices.Contains(punct, r):
			punct = append(punct, r)
		}
	}
	var b strings.Builder
	if lower {
		b.WriteString("a-z")
	}
	if upper {
		b.WriteString("A-Z")
	}
	if digit {
		b.WriteString("0-9")
	}
	slices.Sort(punct)
	for _, r := range punct {
		// '-' last so it stays a literal in a character class.
		if r != '-' {
			b.WriteString(regexp.QuoteMeta(string(r)))
		}
	}
	if slices.Contains(punct, '-') {
		b.WriteString("-")
	}
	return &Shape{Classes: b.String(), MinLen: n, MaxLen: n}
}

// pairRenames turns an unexpected property and a declared property absent
// from the same object into one rename finding, when the declared
// property's schema takes the unexpected one's value, or their types agree
// and their names share a word. The pair is a candidate, and the finding
// says so. The findings it replaces (the unexpected property, and the
// declared one's missing-required finding) are dropped.
func (s *spec) pairRenames(fs []Finding, objects []objectProblem) []Finding {
	type pair struct {
		obj      objectProblem
		declared string
		score    int
	}
	var pairs []pair
	for _, o := range objects {
		obj, ok := o.value.(map[string]any)
		if !ok || o.schema == nil {
			continue
		}
		for _, name := range slices.Sorted(maps.Keys(o.schema.Properties)) {
			if _, present := obj[name]; present {
				continue
			}
			if score := renameScore(o.schema.Properties[name], name, o.found, obj[o.found]); score > 0 {
				pairs = append(pairs, pair{o, name, score})
			}
		}
	}
	// Best pairs first; each property takes part in one pair at most.
	slices.SortStableFunc(pairs, func(a, b pair) int { return b.score - a.score })
	usedFound, usedDeclared := map[string]bool{}, map[string]bool{}
	for _, p := range pairs {
		fk, dk := p.obj.parent+"/"+p.obj.found, p.obj.parent+"/"+p.declared
		if usedFound[fk] || usedDeclared[dk] {
			continue
		}
		usedFound[fk], usedDeclared[dk] = true, true
		foundPath := p.obj.parent + "/" + escapePointer(p.obj.found)
		declaredPath := p.obj.parent + "/" + escapePointer(p.declared)
		loc := s.schemaAt[p.obj.schema]
		typ, format := jsonType(p.obj.value.(map[string]any)[p.obj.found])
		rename := Finding{Kind: FindingRename, Path: foundPath, Schema: loc + "/properties/" + escapePointer(p.declared),
			Message:  fmt.Sprintf("renamed? %s present, %s missing", strconv.Quote(p.obj.found), strconv.Quote(p.declared)),
			Evidence: &Evidence{Component: componentName(loc), Property: p.declared, Found: p.obj.found, JSONType: typ, Format: format}}
		at := slices.IndexFunc(fs, func(f Finding) bool {
			return f.Kind == FindingSchema && f.Path == foundPath && strings.HasSuffix(f.Schema, "/additionalProperties")
		})
		if at < 0 {
			continue
		}
		fs[at] = rename
		fs = slices.DeleteFunc(fs, func(f Finding) bool {
			return f.Kind == FindingSchema && f.Path == declaredPath && strings.HasSuffix(f.Schema, "/required")
		})
	}
	return fs
}

// renameScore says how well an unexpected property (found, with value v)
// fits a declared, absent one: 0 when it cannot be the same field, more
// when the declared schema takes the value and when the names share words.
func renameScore(ref *openapi3.SchemaRef, declared, found string, v any) int {
	if ref == nil || ref.Value == nil {
		return 0
	}
	sc := ref.Value
	score := 0
	if sc.VisitJSON(v) == nil {
		score += 2
	} else if typ, _ := jsonType(v); sc.Type == nil || !sc.Type.Is(typ) && !(typ == "integer" && sc.Type.Is("number")) {
		return 0
	}
	shared := sharedWords(declared, found)
	if score < 2 && shared == 0 {
		return 0
	}
	return score + 2*shared
}

// sharedWords counts the words two snake_case names share.
func sharedWords(a, b string) int {
	n := 0
	wb := strings.Split(b, "_")
	for _, w := range strings.Split(a, "_") {
		if w != "" && slices.Contains(wb, w) {
			n++
		}
	}
	return n
}

// arrayIndex matches an array index token of a JSON Pointer.
var arrayIndex = regexp.MustCompile(`/[0-9]+(/|$)`)

// foldPath folds the array indices of a JSON Pointer to "*":
// /transactions/3/units reads /transactions/*/units.
func foldPath(p string) string {
	for {
		q := arrayIndex.ReplaceAllString(p, "/*$1")
		if q == p {
			return p
		}
		p = q
	}
}

// findingRank orders the findings of one answer, most telling first: a
// rename, then a missing field, then the rest, and a property the contract
// does not have last, so the headline is never the lesser finding.
func findingRank(f Finding) int {
	switch {
	case f.Kind == FindingRename:
		return 0
	case f.Kind == FindingSchema && strings.HasSuffix(f.Schema, "/required"):
		return 1
	case f.Kind == FindingSchema && strings.HasSuffix(f.Schema, "/additionalProperties"):
		return 3
	}
	return 2
}

// fold merges the findings of one answer that are the same finding on
// different items of an array (same kind, rule, place in the contract and
// folded path) into one, counting them, and orders them by findingRank.
func fold(fs []Finding) []Finding {
	var out []Finding
	seen := map[string]int{}
	for _, f := range fs {
		key := f.Kind + "\x00" + f.Rule + "\x00" + f.Schema + "\x00" + foldPath(f.Path)
		if i, ok := seen[key]; ok && f.Path != "" {
			out[i].Count = max(out[i].Count, 1) + 1
			out[i].Path = foldPath(f.Path)
			continue
		}
		seen[key] = len(out)
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(findingRank(a), findingRank(b)) })
	return out
}
