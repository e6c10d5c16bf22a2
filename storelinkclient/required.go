package storelinkclient

import (
	"encoding"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
)

// MissingFieldError is a success answer that lacks fields the contract
// requires, which Go's decoder would leave at zero values. Field is the
// first missing field's path, such as transactions.0.timestamp; Fields lists
// every one, Field first. errors.Is(err, ErrMalformedResponse) holds for it.
type MissingFieldError struct {
	Field string
	// Fields is every missing required field; nil in an error built with
	// Field alone.
	Fields []string
}

func (e *MissingFieldError) Error() string {
	fields := e.Fields
	if len(fields) == 0 {
		fields = []string{e.Field}
	}
	if len(fields) == 1 {
		return "storelink: required field " + fields[0] + " is missing"
	}
	return "storelink: required fields " + Bounded(fields, 3) + " are missing"
}

// Unwrap makes a missing field a malformed response.
func (e *MissingFieldError) Unwrap() error { return ErrMalformedResponse }

// Bounded joins at most n names with ", " and says how many more there are:
// "a, b, c and 4 more".
func Bounded(names []string, n int) string {
	if n < 1 {
		n = 1
	}
	if len(names) <= n {
		return strings.Join(names, ", ")
	}
	return strings.Join(names[:n], ", ") + " and " + strconv.Itoa(len(names)-n) + " more"
}

// ProblemKind says how a property of an answer departs from the contract's
// type.
type ProblemKind string

const (
	// FieldMissing is a required property the answer lacks.
	FieldMissing ProblemKind = "missing"
	// FieldUnknown is a property the contract does not declare.
	FieldUnknown ProblemKind = "unknown"
	// FieldRenamed is an unknown property beside an absent declared one of
	// a compatible JSON type: a candidate rename, not a fact.
	FieldRenamed ProblemKind = "renamed"
)

// FieldProblem is one property of an answer that does not fit the
// contract's type. It names properties, never values.
type FieldProblem struct {
	// Field is the property's path, such as transactions.0.timestamp.
	Field string
	Kind  ProblemKind
	// Renamed is, for FieldRenamed, the absent declared property's path.
	Renamed string
}

func (p FieldProblem) String() string {
	switch p.Kind {
	case FieldMissing:
		return p.Field + ": required but missing"
	case FieldRenamed:
		return p.Field + ": not in the contract, " + p.Renamed + " renamed?"
	default:
		return p.Field + ": not in the contract"
	}
}

// FieldProblems compares a JSON answer with its contract type (v, a pointer
// to a generated type such as *Supplier; a required field has no omitempty)
// and returns missing required, undeclared and renamed properties. Objects
// are walked depth first in field order, unknown properties last by name;
// an array reports each problem at its first item only. A body that is not
// JSON or not of the type's shape has no problems here.
func FieldProblems(body []byte, v any) []FieldProblem {
	return BodyFields(body, v).Problems
}

// Fields is what one walk of a JSON answer against the contract's type
// finds.
type Fields struct {
	// Problems are the answer's [FieldProblems].
	Problems []FieldProblem
	// Absent are the type's properties the answer leaves out.
	Absent Absent
}

// BodyFields walks a JSON answer once against v (as for [FieldProblems]).
// A body that is not JSON has neither problems nor absent fields.
//
// It reads the body's bytes once, against a plan of v's type compiled on
// first use: keys are matched, values are skipped unless their type is
// looked into, and nothing is allocated for a property that fits. It
// accepts what encoding/json accepts as the body's first value.
func BodyFields(body []byte, v any) Fields {
	if v == nil {
		return Fields{}
	}
	problems, absent, ok := scanFields(body, shapeOf(reflect.TypeOf(v)))
	if !ok {
		return Fields{}
	}
	return Fields{Problems: problems, Absent: newAbsent(absent)}
}

// Absent is the set of the contract type's properties a JSON answer leaves
// out, as JSON Pointers such as "/transactions/3/units". Properties inside
// an absent object are not listed; a null value is present. The zero value
// means nothing is absent. An Absent is comparable and immutable.
type Absent struct {
	set *pointerSet
}

type pointerSet struct{ m map[string]struct{} }

func newAbsent(m map[string]struct{}) Absent {
	if len(m) == 0 {
		return Absent{}
	}
	return Absent{set: &pointerSet{m: m}}
}

// NewAbsent is the set of the given JSON Pointers.
func NewAbsent(pointers ...string) Absent {
	m := make(map[string]struct{}, len(pointers))
	for _, p := range pointers {
		m[p] = struct{}{}
	}
	return newAbsent(m)
}

func (a Absent) pointers() map[string]struct{} {
	if a.set == nil {
		return nil
	}
	return a.set.m
}

// Has reports whether the answer leaves out the property at the JSON
// Pointer, or an object that would hold it.
func (a Absent) Has(pointer string) bool {
	set := a.pointers()
	if len(set) == 0 {
		return false
	}
	for p := pointer; p != ""; {
		if _, ok := set[p]; ok {
			return true
		}
		i := strings.LastIndexByte(p, '/')
		if i < 0 {
			return false
		}
		p = p[:i]
	}
	return false
}

// Within reports whether the answer leaves out the property at the JSON
// Pointer, an object that would hold it, or anything inside it.
func (a Absent) Within(pointer string) bool {
	if a.set == nil {
		return false
	}
	if a.Has(pointer) {
		return true
	}
	for p := range a.set.m {
		if strings.HasPrefix(p, pointer) && len(p) > len(pointer) && p[len(pointer)] == '/' {
			return true
		}
	}
	return false
}

// Len is the number of pointers in the set.
func (a Absent) Len() int { return len(a.pointers()) }

// Pointers lists the set, sorted.
func (a Absent) Pointers() []string {
	out := make([]string, 0, a.Len())
	for p := range a.pointers() {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}

// UnknownFields lists, once each, the paths of properties v (as for
// [FieldProblems]) does not declare.
func UnknownFields(body []byte, v any) []string {
	var out []string
	for _, p := range FieldProblems(body, v) {
		if p.Kind != FieldMissing && (len(out) == 0 || out[len(out)-1] != p.Field) {
			out = append(out, p.Field)
		}
	}
	return out
}

// missing lists the paths of the required fields among problems.
func missing(problems []FieldProblem) []string {
	var out []string
	for _, p := range problems {
		if p.Kind == FieldMissing {
			out = append(out, p.Field)
		}
	}
	return out
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// opaque reports a type whose JSON the reflection cannot see into.
func opaque(t reflect.Type) bool {
	return t == timeType || reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textType)
}

// step is a property name, or an array index when name is "".
type step struct {
	name  string
	index int
}

// pointer is the JSON Pointer of the property name of the object at the
// path at.
func pointer(at []step, name string) string {
	var b strings.Builder
	for _, s := range at {
		b.WriteByte('/')
		if s.name == "" {
			b.WriteString(strconv.Itoa(s.index))
		} else {
			b.WriteString(escapeToken(s.name))
		}
	}
	b.WriteByte('/')
	b.WriteString(escapeToken(name))
	return b.String()
}

// escapeToken escapes a JSON Pointer token (RFC 6901).
func escapeToken(s string) string {
	if !strings.ContainsAny(s, "~/") {
		return s
	}
	return strings.ReplaceAll(strings.ReplaceAll(s, "~", "~0"), "/", "~1")
}

// under is p with its paths below the property or index named.
func (p FieldProblem) under(name string) FieldProblem {
	p.Field = join(name, p.Field)
	if p.Renamed != "" {
		p.Renamed = join(name, p.Renamed)
	}
	return p
}

// narrow picks, among the absent properties of a fitting type
// (candidates, in field order), those an undeclared property name could
// be a rename of: the same name in another spelling, else the one that
// shares the most words with it, else all of them.
func narrow(name string, candidates []string) []string {
	// The same name in another spelling (storeId, StoreID for store_id) is
	// the one candidate.
	for _, m := range candidates {
		if spelling(m) == spelling(name) {
			return []string{m}
		}
	}
	// Among several, the one that shares the most words with the name
	// (expected_delivery for expected_arrival), when one does.
	if len(candidates) > 1 {
		best, top, tie := "", 0, false
		for _, m := range candidates {
			switch n := sharedWords(m, name); {
			case n > top:
				best, top, tie = m, n, false
			case n == top:
				tie = true
			}
		}
		if top > 0 && !tie {
			return []string{best}
		}
	}
	return candidates
}

// sharedWords counts the words of two snake_case names in common.
func sharedWords(a, b string) int {
	n := 0
	words := strings.Split(strings.ToLower(b), "_")
	for _, w := range strings.Split(strings.ToLower(a), "_") {
		if w != "" && slices.Contains(words, w) {
			n++
		}
	}
	return n
}

// spelling is a property name without case, '_' and '-'.
func spelling(name string) string {
	b := make([]byte, 0, len(name))
	for i := range len(name) {
		if c := name[i]; c != '_' && c != '-' {
			b = append(b, c)
		}
	}
	return strings.ToLower(string(b))
}

func join(path, name string) string {
	switch {
	case path == "":
		return name
	case name == "":
		return path
	}
	return path + "." + name
}
