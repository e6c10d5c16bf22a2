package storelinkclient

import (
	"reflect"
	"strconv"
	"strings"
	"sync"
)

// shape is what the field walk knows of a Go type: the declared
// properties of a struct, or the items of a slice or array. A type the
// walk does not look into (a scalar, a map, an interface, a type that
// decodes itself) has the nil shape.
type shape struct {
	// fields are a struct's JSON properties in field order; nil for a list.
	fields []fieldShape
	// items is a list's item shape (nil when the items are not looked
	// into); list says the shape is a list.
	items *shape
	list  bool
	// decodable says the typed decode (decode.go) can fill a value of
	// this shape and everything in it; otherwise encoding/json does.
	decodable bool
}

// fieldShape is one declared property of a struct.
type fieldShape struct {
	name string
	// required: the field has no omitempty.
	required bool
	shape    *shape
	// accepts are the JSON values that could be this field's, for rename
	// candidates.
	accepts accepts
	// index is the field's index in its struct and plan how the typed
	// decode fills it (nil when it cannot).
	index int
	plan  *plan
}

// accepts is a set of JSON values a field of some Go type could hold. A
// null could stand for any property and is in every set.
type accepts uint8

const (
	acceptString accepts = 1 << iota
	acceptBool
	// acceptNumber is any number; acceptInt an integral one that fits an
	// int64, acceptUint one that fits a uint64.
	acceptNumber
	acceptInt
	acceptUint
	acceptArray
	acceptObject
	// acceptAll is a type that decodes itself from any value.
	acceptAll = acceptString | acceptBool | acceptNumber | acceptArray | acceptObject
)

// shapes caches each type's shape, compiled on first use.
var shapes sync.Map // reflect.Type -> *shape

// shapeOf is the shape of t, compiled once.
func shapeOf(t reflect.Type) *shape {
	if s, ok := shapes.Load(t); ok {
		return s.(*shape)
	}
	s, _ := shapes.LoadOrStore(t, compileShape(t, map[reflect.Type]*shape{}))
	return s.(*shape)
}

// compileShape builds the shape of t; done holds the shapes being built,
// so a type that holds itself refers to its own shape.
func compileShape(t reflect.Type, done map[reflect.Type]*shape) *shape {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s, ok := done[t]; ok {
		return s
	}
	if opaque(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		// A cycle through a shape being built counts as decodable: the
		// shape's own fields decide.
		s := &shape{list: true, decodable: true}
		done[t] = s
		s.items = compileShape(t.Elem(), done)
		s.decodable = t.Kind() == reflect.Slice && (s.items == nil || s.items.decodable)
		return s
	case reflect.Struct:
		s := &shape{decodable: true}
		done[t] = s
		for i := range t.NumField() {
			f := t.Field(i)
			tag := f.Tag.Get("json")
			name, opts, _ := strings.Cut(tag, ",")
			if !plainField(f, tag) {
				s.decodable = false
			}
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			fs := fieldShape{name: name, required: !strings.Contains(","+opts+",", ",omitempty,"),
				shape: compileShape(f.Type, done), accepts: acceptsOf(f.Type), index: i, plan: planFor(f.Type)}
			if fs.plan == nil || fs.shape != nil && !fs.shape.decodable {
				s.decodable = false
			}
			s.fields = append(s.fields, fs)
		}
		return s
	}
	return nil
}

// acceptsOf is the set of JSON values a field of type t could hold: the
// same JSON type, an integral number for an integer. A type that decodes
// itself takes any value, a time or a text type a string.
func acceptsOf(t reflect.Type) accepts {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType || reflect.PointerTo(t).Implements(textType) {
		return acceptString
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return acceptAll
	}
	switch t.Kind() {
	case reflect.String:
		return acceptString
	case reflect.Bool:
		return acceptBool
	case reflect.Float32, reflect.Float64:
		return acceptNumber
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return acceptInt
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return acceptUint
	case reflect.Slice, reflect.Array:
		return acceptArray
	case reflect.Struct, reflect.Map:
		return acceptObject
	}
	return 0
}

// valueKind is the JSON type of a value.
type valueKind uint8

const (
	valueNull valueKind = iota
	valueString
	valueBool
	valueNumber
	valueArray
	valueObject
)

// jsonValue is what a rename candidate's test needs of a value: its JSON
// type and, for a number, its text.
type jsonValue struct {
	kind   valueKind
	number []byte
}

// admits reports whether a field that accepts a could hold v.
func (a accepts) admits(v jsonValue) bool {
	switch v.kind {
	case valueNull:
		return true
	case valueString:
		return a&acceptString != 0
	case valueBool:
		return a&acceptBool != 0
	case valueArray:
		return a&acceptArray != 0
	case valueObject:
		return a&acceptObject != 0
	}
	switch {
	case a&acceptNumber != 0:
		return true
	case a&acceptInt != 0:
		_, err := strconv.ParseInt(string(v.number), 10, 64)
		return err == nil
	case a&acceptUint != 0:
		_, err := strconv.ParseUint(string(v.number), 10, 64)
		return err == nil
	}
	return false
}
