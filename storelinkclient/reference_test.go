package storelinkclient

import (
	"bytes"
	"encoding/json"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// ReferenceBodyFields is BodyFields as it was before the scanner: the body
// decoded into a generic document (json.Decoder with UseNumber), walked by
// reflection against v's type. The scanner's tests compare the two.
func ReferenceBodyFields(body []byte, v any) Fields {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	var doc any
	if err := dec.Decode(&doc); err != nil || v == nil {
		return Fields{}
	}
	var w refWalker
	problems := w.problemsIn(doc, reflect.TypeOf(v))
	return Fields{Problems: problems, Absent: newAbsent(w.absent)}
}

// refWalker is the state of one reference walk: a stack of steps and the
// absent properties found so far.
type refWalker struct {
	at     []step
	absent map[string]struct{}
}

func (w *refWalker) leftOut(name string) {
	if w.absent == nil {
		w.absent = map[string]struct{}{}
	}
	w.absent[pointer(w.at, name)] = struct{}{}
}

func (w *refWalker) problemsIn(doc any, t reflect.Type) []FieldProblem {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if opaque(t) {
		return nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		if items, ok := doc.([]any); ok {
			return w.itemProblems(items, t.Elem())
		}
	case reflect.Struct:
		if obj, ok := doc.(map[string]any); ok {
			return w.objectProblems(obj, t)
		}
	}
	return nil
}

func (w *refWalker) itemProblems(items []any, t reflect.Type) []FieldProblem {
	var out []FieldProblem
	seen := map[FieldProblem]bool{}
	for i, item := range items {
		w.at = append(w.at, step{index: i})
		found := w.problemsIn(item, t)
		w.at = w.at[:len(w.at)-1]
		for _, p := range found {
			if seen[p] {
				continue
			}
			seen[p] = true
			out = append(out, p.under(strconv.Itoa(i)))
		}
	}
	return out
}

type refMissing struct {
	name string
	t    reflect.Type
}

func (w *refWalker) objectProblems(obj map[string]any, t reflect.Type) []FieldProblem {
	var out []FieldProblem
	declared := map[string]bool{}
	var missing []refMissing
	for i := range t.NumField() {
		f := t.Field(i)
		name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
		if !f.IsExported() || name == "" || name == "-" {
			continue
		}
		declared[name] = true
		value, present := obj[name]
		if !present {
			missing = append(missing, refMissing{name, f.Type})
			w.leftOut(name)
			if !strings.Contains(","+opts+",", ",omitempty,") {
				out = append(out, FieldProblem{Field: name, Kind: FieldMissing})
			}
			continue
		}
		w.at = append(w.at, step{name: name})
		found := w.problemsIn(value, f.Type)
		w.at = w.at[:len(w.at)-1]
		for _, p := range found {
			out = append(out, p.under(name))
		}
	}
	var unknown []string
	for name := range obj {
		if !declared[name] {
			unknown = append(unknown, name)
		}
	}
	slices.Sort(unknown)
	for _, name := range unknown {
		var candidates []string
		for _, m := range missing {
			if refCompatible(obj[name], m.t) {
				candidates = append(candidates, m.name)
			}
		}
		candidates = narrow(name, candidates)
		for _, m := range candidates {
			out = append(out, FieldProblem{Field: name, Kind: FieldRenamed, Renamed: m})
		}
		if len(candidates) == 0 {
			out = append(out, FieldProblem{Field: name, Kind: FieldUnknown})
		}
	}
	return out
}

// refCompatible is the old test of whether a generic JSON value could be
// the value of a field of type t.
func refCompatible(value any, t reflect.Type) bool {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if value == nil {
		return true
	}
	if t == timeType || reflect.PointerTo(t).Implements(textType) {
		_, ok := value.(string)
		return ok
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return true
	}
	switch v := value.(type) {
	case string:
		return t.Kind() == reflect.String
	case bool:
		return t.Kind() == reflect.Bool
	case json.Number:
		switch t.Kind() {
		case reflect.Float32, reflect.Float64:
			return true
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
			_, err := v.Int64()
			return err == nil
		case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			_, err := strconv.ParseUint(v.String(), 10, 64)
			return err == nil
		}
		return false
	case []any:
		return t.Kind() == reflect.Slice || t.Kind() == reflect.Array
	case map[string]any:
		return t.Kind() == reflect.Struct || t.Kind() == reflect.Map
	}
	return false
}
