package storelinkclient

import (
	"encoding/binary"
	"reflect"
	"sync"
	"time"
	"unsafe"
)

// The flat fast path of the typed decode (decode.go): the items of a
// list of structs whose properties are all strings, integers, booleans
// or times, as a POS page's lines are. An item is read here only when it
// is in the common form: every declared key exactly once, without
// escapes, no other key, every value of the field's JSON type without
// escapes and in range, and a time in RFC 3339's plain form. Such an item
// has no problem and no absent property, and the value written is the
// one the general walk (scan.go) would write. Anything else is left to
// the general walk, which reads the item again from its start.

// flatField is one property of a flat struct: its name, how its value is
// read and where it is written.
type flatField struct {
	name string
	// head and tail are the first and last eight bytes of a name of 8
	// to 16 bytes, as little-endian words.
	head, tail uint64
	kind       planKind
	bits       int
	off        uintptr
}

// match reports whether the key whose bytes start at i is the field's
// name, and returns the index of its closing quote.
func (f *flatField) match(data []byte, i int) (end int, ok bool) {
	n := len(f.name)
	if end = i + n; end >= len(data) || data[end] != '"' {
		return end, false
	}
	if n < 8 || n > 16 {
		return end, string(data[i:end]) == f.name
	}
	// Two words, overlapping for a name shorter than 16 bytes.
	return end, binary.LittleEndian.Uint64(data[i:]) == f.head && binary.LittleEndian.Uint64(data[end-8:]) == f.tail
}

// flatStruct is how the fast path reads an object of one struct shape.
type flatStruct struct {
	fields []flatField
	// all has a bit set for each field.
	all uint64
	// size is the struct's size, the stride of a slice of it.
	size uintptr
}

// flatPlans caches flatOf per item shape; a nil *flatStruct is a shape
// the fast path does not read.
var flatPlans sync.Map // *shape -> *flatStruct

// flatOf is the fast path's reading of structs of type t and shape sh;
// nil when some property is not of a kind it reads.
func flatOf(sh *shape, t reflect.Type) *flatStruct {
	if fl, ok := flatPlans.Load(sh); ok {
		return fl.(*flatStruct)
	}
	fl := compileFlat(sh, t)
	got, _ := flatPlans.LoadOrStore(sh, fl)
	return got.(*flatStruct)
}

func compileFlat(sh *shape, t reflect.Type) *flatStruct {
	if sh.list || len(sh.fields) == 0 || len(sh.fields) > 64 || t.Kind() != reflect.Struct {
		return nil
	}
	fl := &flatStruct{size: t.Size()}
	for i, f := range sh.fields {
		if f.shape != nil || f.plan == nil {
			return nil
		}
		switch f.plan.kind {
		case planString, planBool, planInt, planUint, planTime:
		default:
			return nil
		}
		ff := flatField{name: f.name, kind: f.plan.kind, bits: f.plan.bits, off: t.Field(f.index).Offset}
		if n := len(f.name); n >= 8 && n <= 16 {
			ff.head = binary.LittleEndian.Uint64([]byte(f.name))
			ff.tail = binary.LittleEndian.Uint64([]byte(f.name[n-8:]))
		}
		fl.fields = append(fl.fields, ff)
		fl.all |= 1 << i
	}
	return fl
}

// item reads item i of the slice dst by elem, growing dst when it is
// full, through the fast path when flat is not nil and the item is in the
// common form.
func (s *scanner) item(items *shape, elem *plan, flat *flatStruct, dst reflect.Value, i int) []FieldProblem {
	if i == dst.Cap() {
		s.space()
		dst.Grow(countItems(s.data[s.pos:]))
	}
	dst.SetLen(i + 1)
	if flat != nil && s.flatObject(flat, unsafe.Add(dst.UnsafePointer(), uintptr(i)*flat.size)) {
		return nil
	}
	found, _ := s.decode(items, elem, dst.Index(i))
	return found
}

// flatObject reads one item at s.pos (after white space) into the struct
// at base when it is in the common form, and reports whether it was. When
// it was not, s is as it was: the general walk reads the item.
func (s *scanner) flatObject(fl *flatStruct, base unsafe.Pointer) bool {
	data := s.data
	i := skipSpace(data, s.pos)
	if i >= len(data) || data[i] != '{' || s.depth+1 > maxDepth {
		return false
	}
	var seen uint64
	next := 0
	for {
		i = skipSpace(data, i+1)
		if i >= len(data) || data[i] != '"' {
			return false
		}
		f, end := fl.key(data, i+1, next)
		if f < 0 || seen&(1<<f) != 0 {
			return false
		}
		seen |= 1 << f
		next = f + 1
		if i = skipSpace(data, end+1); i >= len(data) || data[i] != ':' {
			return false
		}
		if i = s.flatValue(&fl.fields[f], skipSpace(data, i+1), base); i < 0 {
			return false
		}
		if i = skipSpace(data, i); i >= len(data) {
			return false
		}
		if data[i] == '}' {
			break
		}
		if data[i] != ',' {
			return false
		}
	}
	if seen != fl.all {
		return false
	}
	s.pos = i + 1
	return true
}

// key reads the key whose bytes start at i and returns the index of its
// field and of its closing quote; f is -1 when it names no field or has
// an escape or a non-ASCII byte. The field after the last one found
// (next) is tried first: a name is plain ASCII (plainField), so the name
// and a quote after it are the whole key.
func (fl *flatStruct) key(data []byte, i, next int) (f, end int) {
	if next < len(fl.fields) {
		if end, ok := fl.fields[next].match(data, i); ok {
			return next, end
		}
	}
	end = plainEnd(data, i)
	if end >= len(data) || data[end] != '"' {
		return -1, end
	}
	for j := range fl.fields {
		if fl.fields[j].name == string(data[i:end]) {
			return j, end
		}
	}
	return -1, end
}

// flatValue reads the value at i into field f of the struct at base and
// returns the index after it; -1 when the value is not in the common
// form (nothing is then to be relied on in the struct).
func (s *scanner) flatValue(f *flatField, i int, base unsafe.Pointer) int {
	data := s.data
	if i >= len(data) {
		return -1
	}
	p := unsafe.Add(base, f.off)
	switch f.kind {
	case planString, planTime:
		if data[i] != '"' {
			return -1
		}
		end := plainEnd(data, i+1)
		if end >= len(data) || data[end] != '"' {
			return -1
		}
		if f.kind == planString {
			if s.text == "" {
				s.text = string(s.data)
			}
			*(*string)(p) = s.text[i+1 : end]
			return end + 1
		}
		t, ok := parseTime(data[i+1:end], &s.zone)
		if !ok {
			// time.Time's own reading, for every other form; on an error
			// the general walk reads the item and leaves the body.
			if (*time.Time)(p).UnmarshalJSON(data[i:end+1]) != nil {
				return -1
			}
			return end + 1
		}
		*(*time.Time)(p) = t
		return end + 1
	case planBool:
		switch {
		case len(data)-i >= 4 && string(data[i:i+4]) == "true":
			*(*bool)(p) = true
			return i + 4
		case len(data)-i >= 5 && string(data[i:i+5]) == "false":
			*(*bool)(p) = false
			return i + 5
		}
		return -1
	}
	end := integerEnd(data, i)
	if end < 0 {
		return -1
	}
	if f.kind == planInt {
		n, ok := parseInt(data[i:end])
		if !ok || !setInt(p, f.bits, n) {
			return -1
		}
		return end
	}
	n, ok := parseUint(data[i:end])
	if !ok || !setUint(p, f.bits, n) {
		return -1
	}
	return end
}

// integerEnd is the end of the integer literal at i,
// -?(0|[1-9][0-9]*), when no fraction or exponent follows; else -1.
func integerEnd(data []byte, i int) int {
	if i < len(data) && data[i] == '-' {
		i++
	}
	switch {
	case i >= len(data):
		return -1
	case data[i] == '0':
		i++
	case data[i] >= '1' && data[i] <= '9':
		for i < len(data) && data[i] >= '0' && data[i] <= '9' {
			i++
		}
	default:
		return -1
	}
	if i < len(data) && (data[i] == '.' || data[i] == 'e' || data[i] == 'E') {
		return -1
	}
	return i
}

// setInt writes n to the signed integer of the given bits at p; false
// when it does not fit.
func setInt(p unsafe.Pointer, bits int, n int64) bool {
	if bits < 64 && (n < -1<<(bits-1) || n > 1<<(bits-1)-1) {
		return false
	}
	switch bits {
	case 8:
		*(*int8)(p) = int8(n)
	case 16:
		*(*int16)(p) = int16(n)
	case 32:
		*(*int32)(p) = int32(n)
	default:
		*(*int64)(p) = n
	}
	return true
}

// setUint writes n to the unsigned integer of the given bits at p; false
// when it does not fit.
func setUint(p unsafe.Pointer, bits int, n uint64) bool {
	if bits < 64 && n > 1<<bits-1 {
		return false
	}
	switch bits {
	case 8:
		*(*uint8)(p) = uint8(n)
	case 16:
		*(*uint16)(p) = uint16(n)
	case 32:
		*(*uint32)(p) = uint32(n)
	default:
		*(*uint64)(p) = n
	}
	return true
}

// skipSpace is the index of the first byte at or after i that is not
// JSON white space.
func skipSpace(data []byte, i int) int {
	for i < len(data) {
		switch data[i] {
		case ' ', '\t', '\n', '\r':
			i++
		default:
			return i
		}
	}
	return i
}
