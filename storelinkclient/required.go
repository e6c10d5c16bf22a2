package storelinkclient

import (
	"encoding"
	"encoding/json"
	"reflect"
	"strconv"
	"strings"
	"time"
)

// MissingFieldError is a success answer that lacks a field the contract
// requires. Go's JSON decoder leaves such a field at its zero value (an
// on-hand count of 0, say), which would pass for data; [Result] refuses it
// instead. Field is the field's path in the answer, such as
// opening_hours.monday.closed or transactions.0.timestamp; it names the contract's
// field, never a value of the answer. errors.Is(err, ErrMalformedResponse)
// holds for it.
type MissingFieldError struct {
	Field string
}

func (e *MissingFieldError) Error() string {
	return "storelink: required field " + e.Field + " is missing"
}

// Unwrap makes a missing field a malformed response.
func (e *MissingFieldError) Unwrap() error { return ErrMalformedResponse }

// missingField returns the path of the first field of body that v's type
// requires and body lacks, or "". The generated types mark what the
// contract requires: a required property is a field without omitempty, an
// optional one has it.
func missingField(body []byte, v any) string {
	var doc any
	if err := json.Unmarshal(body, &doc); err != nil {
		return ""
	}
	return missingIn(doc, reflect.TypeOf(v), "")
}

var (
	timeType        = reflect.TypeFor[time.Time]()
	unmarshalerType = reflect.TypeFor[json.Unmarshaler]()
	textType        = reflect.TypeFor[encoding.TextUnmarshaler]()
)

func missingIn(doc any, t reflect.Type, path string) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == timeType || reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textType) {
		return ""
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		items, ok := doc.([]any)
		if !ok {
			return ""
		}
		for i, item := range items {
			if p := missingIn(item, t.Elem(), join(path, strconv.Itoa(i))); p != "" {
				return p
			}
		}
	case reflect.Struct:
		obj, ok := doc.(map[string]any)
		if !ok {
			return ""
		}
		for i := range t.NumField() {
			f := t.Field(i)
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			if !f.IsExported() || name == "" || name == "-" {
				continue
			}
			value, present := obj[name]
			if !present {
				if !strings.Contains(","+opts+",", ",omitempty,") {
					return join(path, name)
				}
				continue
			}
			if p := missingIn(value, f.Type, join(path, name)); p != "" {
				return p
			}
		}
	}
	return ""
}

func join(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}
