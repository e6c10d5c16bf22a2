package contract

import (
	"cmp"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/getkin/kin-openapi/openapi3"
)

// objectProblem is an undeclared property with its object and schema.
type objectProblem struct {
	parent string // JSON Pointer of the object
	schema *openapi3.Schema
	value  any
	found  string
}

// evidence describes a schema finding for suggest. It reads values only to
// type and measure them.
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
	if reflect.ValueOf(*ev).IsZero() {
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

// shapeOf describes a string by its character classes and length in
// characters. Every character falls in some class, so a pattern widened to
// the shape matches the value.
func shapeOf(v string) *Shape {
	c := newClassSet()
	n := 0
	for _, r := range v {
		n++
		c.add(r)
	}
	return &Shape{Classes: c.String(), MinLen: n, MaxLen: n}
}

// pairRenames replaces an undeclared property and an absent declared one of
// the same object with one candidate rename finding, when the declared
// schema takes the value, or the types agree and the names share a word.
func (s *spec) pairRenames(fs []Finding, objects []objectProblem) []Finding {
	type pair struct {
		obj      objectProblem
		declared string
		score    int
		doubts   []string
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
			ref := o.schema.Properties[name]
			if score := renameScore(ref, name, o.found, obj[o.found]); score > 0 {
				typ, format := jsonType(obj[o.found])
				doubts := addDoubts(renameDoubts(ref, name, o.found, typ, format), valueDoubts(ref, name, o.found, obj[o.found])...)
				pairs = append(pairs, pair{o, name, score, doubts})
			}
		}
	}
	// Undoubted pairs first, then the best; each property pairs once.
	slices.SortStableFunc(pairs, func(a, b pair) int {
		return cmp.Or(cmp.Compare(min(len(a.doubts), 1), min(len(b.doubts), 1)), b.score-a.score)
	})
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
		msg := fmt.Sprintf("renamed? %s present, %s missing", strconv.Quote(p.obj.found), strconv.Quote(p.declared))
		if len(p.doubts) > 0 {
			msg += "; against a rename: " + strings.Join(p.doubts, "; ")
		}
		rename := Finding{Kind: FindingRename, Path: foundPath, Schema: loc + "/properties/" + escapePointer(p.declared),
			Message:  msg,
			Evidence: &Evidence{Component: componentName(loc), Property: p.declared, Found: p.obj.found, JSONType: typ, Format: format, Against: p.doubts}}
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

// renameScore says how well found (value v) fits an absent declared
// property; 0 when it cannot be the same field.
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

// sharedWords counts the words two names share, synonyms and plurals
// folded.
func sharedWords(a, b string) int {
	var wb []string
	for _, w := range nameWords(b) {
		wb = append(wb, canonicalWord(w))
	}
	n := 0
	for _, w := range nameWords(a) {
		if slices.Contains(wb, canonicalWord(w)) {
			n++
		}
	}
	return n
}

// arrayIndex matches an array index token of a JSON Pointer.
var arrayIndex = regexp.MustCompile(`/[0-9]+(/|$)`)

// foldPath folds the array indices of a JSON Pointer to "*".
func foldPath(p string) string {
	for {
		q := arrayIndex.ReplaceAllString(p, "/*$1")
		if q == p {
			return p
		}
		p = q
	}
}

// findingRank orders the findings of one answer, most telling first.
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

// fold merges the same finding on different array items into one, with a
// count and merged evidence, and orders them by findingRank.
func fold(fs []Finding) []Finding {
	var out []Finding
	seen := map[string]int{}
	for _, f := range fs {
		key := f.Kind + "\x00" + f.Rule + "\x00" + f.Schema + "\x00" + foldPath(f.Path)
		if i, ok := seen[key]; ok && f.Path != "" {
			out[i].Count = max(out[i].Count, 1) + 1
			out[i].Path = foldPath(f.Path)
			// Every item's evidence counts, so a widened pattern takes all.
			if out[i].Evidence != nil && f.Evidence != nil {
				ev := *out[i].Evidence
				out[i].Evidence = mergeEvidence(&ev, f.Evidence)
			}
			continue
		}
		seen[key] = len(out)
		out = append(out, f)
	}
	slices.SortStableFunc(out, func(a, b Finding) int { return cmp.Compare(findingRank(a), findingRank(b)) })
	return out
}

// unitWords map words of a name or description to a unit of measure. A
// name without a unit reads as "units", the contract's item count.
var unitWords = map[string]string{
	"ms": "milliseconds", "millis": "milliseconds", "millisecond": "milliseconds", "milliseconds": "milliseconds",
	"sec": "seconds", "secs": "seconds", "second": "seconds", "seconds": "seconds",
	"mins": "minutes", "minute": "minutes", "minutes": "minutes",
	"hr": "hours", "hrs": "hours", "hour": "hours", "hours": "hours",
	"day": "days", "days": "days", "week": "weeks", "weeks": "weeks",
	"month": "months", "months": "months", "year": "years", "years": "years",
	"cent": "cents", "cents": "cents", "pence": "pence",
	"eur": "EUR", "czk": "CZK", "usd": "USD", "gbp": "GBP",
	"unit": "units", "units": "units", "qty": "units", "pcs": "units", "pieces": "units", "each": "units",
	"case": "cases", "cases": "cases", "pack": "packs", "packs": "packs", "pallet": "pallets", "pallets": "pallets",
	"gram": "grams", "grams": "grams", "kg": "kilograms", "kilogram": "kilograms", "kilograms": "kilograms",
	"lb": "pounds", "lbs": "pounds", "ml": "millilitres", "litre": "litres", "litres": "litres", "liter": "litres", "liters": "litres",
	"pct": "percent", "percent": "percent", "percentage": "percent",
}

// neutralUnit is the unit a quantity without one is read in.
const neutralUnit = "units"

// wordSynonyms map a short form to the word a name shares it with.
var wordSynonyms = map[string]string{
	"qty": "quantity", "min": "minimum", "max": "maximum", "ts": "timestamp", "tz": "timezone",
	"num": "number", "desc": "description", "addr": "address", "identifier": "id",
}

// nameWords splits a property name into lower-case words at "_", "-", "."
// and camelCase boundaries.
func nameWords(name string) []string {
	var words []string
	var cur []rune
	flush := func() {
		if len(cur) > 0 {
			words = append(words, strings.ToLower(string(cur)))
			cur = cur[:0]
		}
	}
	prevLower := false
	for _, r := range name {
		switch {
		case r == '_' || r == '-' || r == '.' || r == ' ':
			flush()
			prevLower = false
			continue
		case unicode.IsUpper(r) && prevLower:
			flush()
		}
		cur = append(cur, r)
		prevLower = unicode.IsLower(r) || unicode.IsDigit(r)
	}
	flush()
	return words
}

// textWords are the lower-case words of a description.
func textWords(s string) []string {
	return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) })
}

// canonicalWord folds a synonym and a plural.
func canonicalWord(w string) string {
	if s, ok := wordSynonyms[w]; ok {
		w = s
	}
	if len(w) > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
		w = w[:len(w)-1]
	}
	return w
}

// unitsOf are the units the words name, sorted.
func unitsOf(words []string) []string {
	var out []string
	for _, w := range words {
		if u, ok := unitWords[w]; ok && !slices.Contains(out, u) {
			out = append(out, u)
		}
	}
	slices.Sort(out)
	return out
}

// scaled drops the neutral unit.
func scaled(units []string) []string {
	return slices.DeleteFunc(slices.Clone(units), func(u string) bool { return u == neutralUnit })
}

// isIDName reports whether a name names an identifier.
func isIDName(name string) bool {
	w := nameWords(name)
	if len(w) == 0 {
		return false
	}
	switch w[len(w)-1] {
	case "id", "uuid", "guid", "identifier":
		return true
	}
	return false
}

// isIDSchema reports whether a declared property is an identifier: its
// name says so, or it refers to a component whose name ends in ID.
func isIDSchema(ref *openapi3.SchemaRef, name string) bool {
	if isIDName(name) {
		return true
	}
	return ref != nil && strings.HasSuffix(componentName(ref.Ref), "ID")
}

// isFreeText reports whether a declared property is a string without
// pattern, format or enum, and no identifier.
func isFreeText(ref *openapi3.SchemaRef, name string) bool {
	if ref == nil || ref.Value == nil || isIDSchema(ref, name) {
		return false
	}
	sc := ref.Value
	return sc.Type != nil && sc.Type.Is("string") && sc.Pattern == "" && sc.Format == "" && len(sc.Enum) == 0
}

// idShaped matches a value that looks like an identifier: one token of
// letters, digits and separators that holds a digit.
var idShaped = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_.:-]{0,63}$`)

func looksLikeID(s string) bool {
	return idShaped.MatchString(s) && strings.ContainsAny(s, "0123456789")
}

// renameDoubts lists reasons found may not be a new name of the declared
// property (schema ref): units, JSON type or format differ, an id name on a
// non-id, or no shared word. Each names both properties, never a value.
func renameDoubts(ref *openapi3.SchemaRef, declared, found, jsonType, format string) []string {
	var out []string
	var sc *openapi3.Schema
	if ref != nil {
		sc = ref.Value
	}
	numeric := sc != nil && sc.Type != nil && (sc.Type.Is("integer") || sc.Type.Is("number"))
	if numeric {
		// The declared name's unit, or else the description's.
		declName := unitsOf(nameWords(declared))
		decl := declName
		if len(decl) == 0 {
			decl = unitsOf(textWords(sc.Description))
		}
		foundUnits := unitsOf(nameWords(found))
		switch {
		case len(foundUnits) > 0 && len(decl) > 0 && !slices.ContainsFunc(foundUnits, func(u string) bool { return slices.Contains(decl, u) }):
			out = append(out, fmt.Sprintf("%s is in %s, %s in %s", found, strings.Join(foundUnits, " or "), declared, strings.Join(decl, " or ")))
		case len(scaled(foundUnits)) > 0 && len(decl) == 0:
			out = append(out, fmt.Sprintf("%s is in %s, %s names no unit", found, strings.Join(scaled(foundUnits), " or "), declared))
		case len(scaled(declName)) > 0 && len(foundUnits) == 0:
			out = append(out, fmt.Sprintf("%s is in %s, %s names no unit", declared, strings.Join(scaled(declName), " or "), found))
		}
	}
	if sc != nil && sc.Type != nil && len(sc.Type.Slice()) == 1 && jsonType != "" {
		have := sc.Type.Slice()[0]
		switch {
		case jsonType == "mixed":
			out = append(out, fmt.Sprintf("StoreLink sends %s with values of different types, %s is %s", found, declared, have))
		case jsonType != have && !(have == "number" && jsonType == "integer") && !(jsonType == "null" && sc.Nullable):
			out = append(out, fmt.Sprintf("StoreLink sends %s as %s, %s is %s", found, jsonType, declared, have))
		case have == "string" && format == "date-time" && sc.Format == "" && !isIDSchema(ref, declared):
			out = append(out, fmt.Sprintf("%s holds date-times, %s is not a date-time", found, declared))
		}
	}
	if isIDName(found) && !isIDSchema(ref, declared) {
		out = append(out, fmt.Sprintf("%s names an identifier, %s is none", found, declared))
	}
	if sharedWords(declared, found) == 0 {
		out = append(out, fmt.Sprintf("%s and %s share no word: only the value's type pairs them", found, declared))
	}
	return out
}

// valueDoubts lists what one value of found shows against the rename
// (bounds, date-time, id against free text). It never names the value.
func valueDoubts(ref *openapi3.SchemaRef, declared, found string, v any) []string {
	if ref == nil || ref.Value == nil {
		return nil
	}
	sc := ref.Value
	var out []string
	switch x := v.(type) {
	case float64:
		if sc.Min != nil && x < *sc.Min || sc.Max != nil && x > *sc.Max {
			out = append(out, fmt.Sprintf("values of %s fall outside %s's bounds (%s)", found, declared, bounds(sc)))
		}
	case json.Number:
		if f, err := x.Float64(); err == nil {
			return valueDoubts(ref, declared, found, f)
		}
	case string:
		switch {
		case sc.Format == "date-time":
			if _, err := time.Parse(time.RFC3339, x); err != nil {
				out = append(out, fmt.Sprintf("%s is a date-time, values of %s are not", declared, found))
			}
		case isFreeText(ref, declared) && looksLikeID(x):
			out = append(out, fmt.Sprintf("values of %s look like identifiers (one token with digits), %s is free text", found, declared))
		case isIDSchema(ref, declared) && strings.ContainsAny(x, " \t\n"):
			out = append(out, fmt.Sprintf("values of %s are text with spaces, %s is an identifier", found, declared))
		}
	}
	return out
}

// bounds writes a schema's minimum and maximum: "0 to 60", "at least 1".
func bounds(sc *openapi3.Schema) string {
	num := func(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }
	switch {
	case sc.Min != nil && sc.Max != nil:
		return num(*sc.Min) + " to " + num(*sc.Max)
	case sc.Min != nil:
		return "at least " + num(*sc.Min)
	case sc.Max != nil:
		return "at most " + num(*sc.Max)
	}
	return "none"
}

// addDoubts adds the doubts not yet in list.
func addDoubts(list []string, more ...string) []string {
	for _, d := range more {
		if !slices.Contains(list, d) {
			list = append(list, d)
		}
	}
	return list
}
