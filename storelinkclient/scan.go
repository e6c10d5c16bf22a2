package storelinkclient

import (
	"reflect"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxDepth is encoding/json's limit on nesting: a deeper body does not
// decode, so it has no problems here either.
const maxDepth = 10000

// scanner is one walk of a JSON body's bytes against a shape. It reads
// keys, skips values it need not look into without decoding them, and
// allocates only for what it finds: a problem, an absent property, an
// undeclared key. It accepts exactly what encoding/json's Decoder accepts
// as the body's first value; failed says it did not.
type scanner struct {
	data   []byte
	pos    int
	depth  int
	failed bool
	// at is the path of the value being read.
	at []step
	// absent are the pointers of the absent properties found; "" marks
	// one taken back because its object's key came again.
	absent []string
	// frames hold each open object's state, one per level, reused.
	frames []*frame
	level  int
	// left says the typed decode (decode.go) leaves the value to
	// encoding/json; text is the body as a string, the typed decode's
	// strings are parts of it.
	left bool
	text string
	// zone is the local zone the typed decode's times last looked up.
	zone localZone
}

// frame is the state of one object being read against a struct shape.
type frame struct {
	fields  []fieldState
	unknown []unknownKey
}

// fieldState is what an object held for one declared property.
type fieldState struct {
	seen     bool
	problems []FieldProblem
	// absentFrom and absentTo are the range of scanner.absent its value
	// added.
	absentFrom, absentTo int
}

// unknownKey is an undeclared property of an object.
type unknownKey struct {
	name  string
	value jsonValue
}

var scanners = sync.Pool{New: func() any { return new(scanner) }}

// maxKept bounds the absent pointers and object levels a pooled scanner
// keeps room for.
const maxKept = 4096

// scanFields walks body against sh. ok is false when body is not JSON.
func scanFields(body []byte, sh *shape) (problems []FieldProblem, absent map[string]struct{}, ok bool) {
	s := scanners.Get().(*scanner)
	s.data, s.pos, s.depth, s.failed, s.left, s.text = body, 0, 0, false, false, ""
	problems, _ = s.value(sh)
	absent = s.absentSet()
	ok = !s.failed
	s.reset()
	scanners.Put(s)
	if !ok {
		return nil, nil, false
	}
	return problems, absent, true
}

// absentSet is the set of the absent pointers found; nil when the body is
// not JSON.
func (s *scanner) absentSet() map[string]struct{} {
	if s.failed {
		return nil
	}
	var absent map[string]struct{}
	for _, p := range s.absent {
		if p == "" {
			continue
		}
		if absent == nil {
			absent = map[string]struct{}{}
		}
		absent[p] = struct{}{}
	}
	return absent
}

// reset readies s for the pool: it keeps no reference to the body.
func (s *scanner) reset() {
	clear(s.absent)
	s.data, s.text, s.absent, s.at, s.level = nil, "", s.absent[:0], s.at[:0], 0
	if cap(s.absent) > maxKept || len(s.frames) > maxKept {
		// A pathological answer's state is not kept for the next one.
		s.absent, s.frames = nil, nil
	}
}

func (s *scanner) fail() { s.failed = true }

// space skips white space.
func (s *scanner) space() {
	for s.pos < len(s.data) {
		switch s.data[s.pos] {
		case ' ', '\t', '\n', '\r':
			s.pos++
		default:
			return
		}
	}
}

// next is the byte after white space, consumed; 0 at the end.
func (s *scanner) next() byte {
	s.space()
	if s.pos >= len(s.data) {
		return 0
	}
	s.pos++
	return s.data[s.pos-1]
}

// value reads one value against sh and returns its problems, with paths
// relative to it, and its JSON type.
func (s *scanner) value(sh *shape) ([]FieldProblem, jsonValue) {
	s.space()
	if s.pos >= len(s.data) {
		s.fail()
		return nil, jsonValue{}
	}
	switch c := s.data[s.pos]; {
	case c == '{':
		return s.object(sh, reflect.Value{}), jsonValue{kind: valueObject}
	case c == '[':
		return s.array(sh, nil, reflect.Value{}), jsonValue{kind: valueArray}
	case c == '"':
		s.str()
		return nil, jsonValue{kind: valueString}
	case c == '-' || c >= '0' && c <= '9':
		start := s.pos
		s.number()
		return nil, jsonValue{kind: valueNumber, number: s.data[start:s.pos]}
	case c == 't':
		s.literal("true")
		return nil, jsonValue{kind: valueBool}
	case c == 'f':
		s.literal("false")
		return nil, jsonValue{kind: valueBool}
	case c == 'n':
		s.literal("null")
		return nil, jsonValue{kind: valueNull}
	}
	s.fail()
	return nil, jsonValue{}
}

// enter opens an object or array; false past encoding/json's depth.
func (s *scanner) enter() bool {
	s.pos++
	s.depth++
	if s.depth > maxDepth {
		s.fail()
		return false
	}
	return true
}

// array reads an array whose items have the shape items of sh (when sh
// is a list), reporting each problem at the first item that has it. With
// a plan for its items (elem) it fills the slice dst.
func (s *scanner) array(sh *shape, elem *plan, dst reflect.Value) []FieldProblem {
	if !s.enter() {
		return nil
	}
	var items *shape
	if sh != nil && sh.list {
		items = sh.items
	}
	var out []FieldProblem
	var seen map[FieldProblem]bool
	if s.space(); s.pos < len(s.data) && s.data[s.pos] == ']' {
		s.pos++
		s.depth--
		if elem != nil {
			// encoding/json leaves an empty slice, not a nil one.
			dst.Set(reflect.MakeSlice(dst.Type(), 0, 0))
		}
		return nil
	}
	var flat *flatStruct
	if elem != nil && !s.left && dst.Cap() == 0 {
		// The slice in one allocation rather than doubling item by item:
		// sized from the first item's length, counted when that is short.
		dst.Grow(estimateItems(s.data[s.pos:]))
	}
	if elem != nil && elem.kind == planStruct && items != nil {
		flat = flatOf(items, elem.typ)
	}
	for i := 0; ; i++ {
		if items != nil {
			s.at = append(s.at, step{index: i})
		}
		var found []FieldProblem
		if elem != nil && !s.left {
			found = s.item(items, elem, flat, dst, i)
		} else {
			found, _ = s.value(items)
		}
		if items != nil {
			s.at = s.at[:len(s.at)-1]
		}
		if s.failed {
			return nil
		}
		for _, p := range found {
			if seen == nil {
				seen = map[FieldProblem]bool{}
			}
			if !seen[p] {
				seen[p] = true
				out = append(out, p.under(strconv.Itoa(i)))
			}
		}
		switch s.next() {
		case ',':
			continue
		case ']':
			s.depth--
			return out
		}
		s.fail()
		return nil
	}
}

// object reads an object against sh (when sh is a struct's shape) and
// returns its problems: per declared property in field order its own or
// its being missing, then the undeclared ones by name. A valid dst is the
// struct the typed decode fills.
func (s *scanner) object(sh *shape, dst reflect.Value) []FieldProblem {
	if !s.enter() {
		return nil
	}
	var fr *frame
	if sh != nil && !sh.list {
		fr = s.open(len(sh.fields))
	}
	if s.space(); s.pos < len(s.data) && s.data[s.pos] == '}' {
		s.pos++
	} else {
		s.members(sh, fr, dst)
		if s.failed {
			return nil
		}
	}
	s.depth--
	if fr == nil {
		return nil
	}
	out := s.close(sh, fr)
	s.level--
	return out
}

// members reads an object's members, up to its closing brace.
func (s *scanner) members(sh *shape, fr *frame, dst reflect.Value) {
	for {
		s.space()
		if s.pos >= len(s.data) || s.data[s.pos] != '"' {
			s.fail()
			return
		}
		start := s.pos
		key, plain := s.str()
		quoted := s.data[start:s.pos]
		if s.failed || s.next() != ':' {
			s.fail()
			return
		}
		if fr == nil {
			s.value(nil)
		} else {
			s.member(sh, fr, quoted, key, plain, dst)
		}
		if s.failed {
			return
		}
		switch s.next() {
		case ',':
			continue
		case '}':
			return
		}
		s.fail()
		return
	}
}

// open is the frame of a new object of n declared properties.
func (s *scanner) open(n int) *frame {
	if s.level == len(s.frames) {
		s.frames = append(s.frames, &frame{})
	}
	fr := s.frames[s.level]
	s.level++
	if cap(fr.fields) < n {
		fr.fields = make([]fieldState, n)
	}
	fr.fields = fr.fields[:n]
	clear(fr.fields)
	clear(fr.unknown)
	fr.unknown = fr.unknown[:0]
	return fr
}

// member reads the value of one key of an object of shape sh. quoted is
// the key as it stands in the body, key its bytes between the quotes.
func (s *scanner) member(sh *shape, fr *frame, quoted, key []byte, plain bool, dst reflect.Value) {
	name := ""
	if !plain {
		var ok bool
		if name, ok = decodeKey(quoted); !ok {
			s.fail()
			return
		}
	}
	start, declared := s.pos, false
	for i := range sh.fields {
		f := &sh.fields[i]
		if plain && f.name != string(key) || !plain && f.name != name {
			continue
		}
		// A key sent twice counts once, with its last value, as in
		// encoding/json.
		st := &fr.fields[i]
		for j := st.absentFrom; j < st.absentTo; j++ {
			s.absent[j] = ""
		}
		if st.seen {
			// encoding/json decodes the second value into the first.
			s.left = true
		}
		s.pos, declared = start, true
		st.seen, st.absentFrom = true, len(s.absent)
		s.at = append(s.at, step{name: f.name})
		if dst.IsValid() {
			st.problems, _ = s.decode(f.shape, f.plan, dst.Field(f.index))
		} else {
			st.problems, _ = s.value(f.shape)
		}
		s.at = s.at[:len(s.at)-1]
		st.absentTo = len(s.absent)
		if s.failed {
			return
		}
	}
	if declared {
		return
	}
	_, v := s.value(nil)
	if plain {
		name = string(key)
	}
	if dst.IsValid() && !s.left {
		for i := range sh.fields {
			if strings.EqualFold(sh.fields[i].name, name) {
				// encoding/json fills a field whose name matches without
				// regard to case.
				s.left = true
			}
		}
	}
	for i := range fr.unknown {
		if fr.unknown[i].name == name {
			fr.unknown[i].value = v
			return
		}
	}
	fr.unknown = append(fr.unknown, unknownKey{name: name, value: v})
}

// close is the problems of an object once read, and records its absent
// properties.
func (s *scanner) close(sh *shape, fr *frame) []FieldProblem {
	var out []FieldProblem
	for i := range sh.fields {
		f, st := &sh.fields[i], &fr.fields[i]
		if !st.seen {
			s.absent = append(s.absent, pointer(s.at, f.name))
			if f.required {
				out = append(out, FieldProblem{Field: f.name, Kind: FieldMissing})
			}
			continue
		}
		for _, p := range st.problems {
			out = append(out, p.under(f.name))
		}
	}
	if len(fr.unknown) == 0 {
		return out
	}
	slices.SortFunc(fr.unknown, func(a, b unknownKey) int { return strings.Compare(a.name, b.name) })
	for _, u := range fr.unknown {
		var candidates []string
		for i := range sh.fields {
			if !fr.fields[i].seen && sh.fields[i].accepts.admits(u.value) {
				candidates = append(candidates, sh.fields[i].name)
			}
		}
		candidates = narrow(u.name, candidates)
		for _, m := range candidates {
			out = append(out, FieldProblem{Field: u.name, Kind: FieldRenamed, Renamed: m})
		}
		if len(candidates) == 0 {
			out = append(out, FieldProblem{Field: u.name, Kind: FieldUnknown})
		}
	}
	return out
}
