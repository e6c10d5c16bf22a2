package storelinkclient

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"
)

// The typed decode fills a generated type from a JSON answer in the same
// walk of its bytes as the misread guard (scan.go). It accepts what
// json.Unmarshal into the same type accepts and fills the same value. What
// it does not handle itself it leaves to encoding/json, for the whole
// body:
//   - types with maps, interfaces, arrays, []byte, types that decode
//     themselves (other than time.Time), embedded structs, fields without
//     a plain json tag or with the ",string" option (decodable is false);
//   - bodies where a key comes twice in one object, or a key matches a
//     field only without regard to case (encoding/json's merge and
//     case-folding rules);
//   - bodies json.Unmarshal refuses (invalid JSON, a value of another
//     type, an integer out of range, a time that is not RFC 3339), so the
//     error is encoding/json's own.
//
// The items of a list of structs of strings, integers, booleans and times
// (a POS page's lines) are read by a fast path (decode_fast.go) when they
// are in their common form, and by the walk otherwise.

// planKind is how the decode fills a value of one Go type.
type planKind uint8

const (
	planString planKind = iota + 1
	planBool
	planInt
	planUint
	planFloat
	planTime
	planPointer
	planSlice
	planStruct
)

// plan is how the decode fills a value of type typ. A struct's fields are
// in its shape.
type plan struct {
	kind planKind
	typ  reflect.Type
	// elem is a pointer's or slice's element plan.
	elem *plan
	// bits is an integer's or float's size.
	bits int
}

// planFor is the plan of type t; nil when the decode leaves t to
// encoding/json.
func planFor(t reflect.Type) *plan {
	if t == timeType {
		return &plan{kind: planTime, typ: t}
	}
	if t.Kind() != reflect.Pointer && (reflect.PointerTo(t).Implements(unmarshalerType) || reflect.PointerTo(t).Implements(textType)) {
		return nil
	}
	p := &plan{typ: t}
	switch t.Kind() {
	case reflect.String:
		p.kind = planString
	case reflect.Bool:
		p.kind = planBool
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		p.kind, p.bits = planInt, t.Bits()
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		p.kind, p.bits = planUint, t.Bits()
	case reflect.Float32, reflect.Float64:
		p.kind, p.bits = planFloat, t.Bits()
	case reflect.Struct:
		p.kind = planStruct
	case reflect.Pointer, reflect.Slice:
		if t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8 {
			// encoding/json reads a []byte as base64.
			return nil
		}
		p.kind = planPointer
		if t.Kind() == reflect.Slice {
			p.kind = planSlice
		}
		if p.elem = planFor(t.Elem()); p.elem == nil {
			return nil
		}
	default:
		return nil
	}
	return p
}

// plainField reports whether encoding/json reads struct field f the way
// the shape does: by its json tag's name alone, as its own type.
func plainField(f reflect.StructField, tag string) bool {
	if f.Anonymous {
		return false
	}
	if !f.IsExported() || tag == "-" {
		return true
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" || strings.Contains(","+opts+",", ",string,") {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '-' || c == '.') {
			return false
		}
	}
	return true
}

// foldedNames reports whether two of a struct's property names are equal
// without regard to case, where encoding/json's choice between them is
// left to it.
func foldedNames(fields []fieldShape) bool {
	for i := range fields {
		for j := i + 1; j < len(fields); j++ {
			if strings.EqualFold(fields[i].name, fields[j].name) {
				return true
			}
		}
	}
	return false
}

// decodeBody decodes a JSON answer into v (a pointer to a generated type)
// as json.Unmarshal does, and walks it for the contract's properties
// ([BodyFields]) in the same pass. The error wraps json.Unmarshal's and
// carries body ([MalformedBody]); fields are empty when body is not JSON.
// The generated Parse functions call it.
func decodeBody(body []byte, v any) (Fields, error) {
	fields, err := decodeJSON(body, v)
	if err != nil {
		return fields, &bodyError{err: err, body: body}
	}
	return fields, nil
}

// bodyError is a decode error with the body it is about, so a caller can
// look at the answer again without keeping a copy of every body it reads.
// Its text is the decode error's.
type bodyError struct {
	err  error
	body []byte
}

func (e *bodyError) Error() string { return e.err.Error() }

func (e *bodyError) Unwrap() error { return e.err }

// MalformedBody returns the body of an answer whose decode failed, as the
// error of a generated Parse function, a *WithResponse method or [Result]
// carries it; ok is false when err holds no such body. The bytes are the
// ones the client read, not a copy: do not change them.
func MalformedBody(err error) (body []byte, ok bool) {
	if err == nil {
		return nil, false
	}
	var be *bodyError
	if !errors.As(err, &be) {
		return nil, false
	}
	return be.body, true
}

// decodeJSON is decodeBody with json.Unmarshal's error as it stands.
func decodeJSON(body []byte, v any) (Fields, error) {
	rv := reflect.ValueOf(v)
	if rv.Kind() != reflect.Pointer || rv.IsNil() {
		return Fields{}, json.Unmarshal(body, v)
	}
	t := rv.Type().Elem()
	sh, p := decodePlanOf(t)
	if p == nil {
		// A type the decode does not fill: encoding/json, then the guard.
		if err := json.Unmarshal(body, v); err != nil {
			return Fields{}, err
		}
		return BodyFields(body, v), nil
	}
	fields, state := decodeFields(body, sh, p, rv.Elem())
	switch state {
	case decodeDone:
		return fields, nil
	case decodeNotJSON:
		return Fields{}, json.Unmarshal(body, v)
	}
	// Left to encoding/json: start again from the zero value, as the
	// partial fill may hold values json.Unmarshal would not set.
	rv.Elem().SetZero()
	if err := json.Unmarshal(body, v); err != nil {
		return Fields{}, err
	}
	return fields, nil
}

// decodeState is how one walk with the decode ended.
type decodeState uint8

const (
	// decodeDone: the value is filled and the fields found.
	decodeDone decodeState = iota
	// decodeNotJSON: the body is not one JSON value.
	decodeNotJSON
	// decodeLeft: the fields are found, the value is encoding/json's to
	// fill (or refuse).
	decodeLeft
)

// decodePlans caches each root type's shape and plan; the plan is nil
// when the decode does not fill the type.
var decodePlans sync.Map // reflect.Type -> rootPlan

type rootPlan struct {
	sh *shape
	p  *plan
}

// decodePlanOf is the shape and plan of root type t, compiled once.
func decodePlanOf(t reflect.Type) (*shape, *plan) {
	if r, ok := decodePlans.Load(t); ok {
		return r.(rootPlan).sh, r.(rootPlan).p
	}
	sh := shapeOf(reflect.PointerTo(t))
	p := planFor(t)
	if p == nil || sh != nil && !decodableAll(sh, map[*shape]bool{}) {
		p = nil
	}
	r, _ := decodePlans.LoadOrStore(t, rootPlan{sh: sh, p: p})
	return r.(rootPlan).sh, r.(rootPlan).p
}

// decodableAll reports whether sh and every shape in it are decodable and
// no struct in it has two names equal without regard to case.
func decodableAll(sh *shape, seen map[*shape]bool) bool {
	if sh == nil || seen[sh] {
		return true
	}
	seen[sh] = true
	if !sh.decodable || foldedNames(sh.fields) {
		return false
	}
	if sh.list {
		return decodableAll(sh.items, seen)
	}
	for i := range sh.fields {
		if !decodableAll(sh.fields[i].shape, seen) {
			return false
		}
	}
	return true
}

// decodeFields walks body against sh, filling dst by p.
func decodeFields(body []byte, sh *shape, p *plan, dst reflect.Value) (Fields, decodeState) {
	s := scanners.Get().(*scanner)
	s.data, s.pos, s.depth, s.failed, s.left, s.text = body, 0, 0, false, false, ""
	// The local zone may have changed since the scanner's last decode.
	s.zone = localZone{}
	problems, _ := s.decode(sh, p, dst)
	if !s.failed {
		// encoding/json refuses anything but white space after the value.
		if s.space(); s.pos != len(s.data) {
			s.left = true
		}
	}
	absent := s.absentSet()
	failed, left := s.failed, s.left
	s.reset()
	scanners.Put(s)
	switch {
	case failed:
		return Fields{}, decodeNotJSON
	case left:
		return Fields{Problems: problems, Absent: newAbsent(absent)}, decodeLeft
	}
	return Fields{Problems: problems, Absent: newAbsent(absent)}, decodeDone
}

// decode reads one value against sh and fills dst by p; with a nil p it
// only walks. Where the value is not one the decode fills as
// encoding/json would, it sets left and goes on walking.
func (s *scanner) decode(sh *shape, p *plan, dst reflect.Value) ([]FieldProblem, jsonValue) {
	if p == nil || s.left {
		return s.value(sh)
	}
	s.space()
	if s.pos >= len(s.data) {
		s.fail()
		return nil, jsonValue{}
	}
	c := s.data[s.pos]
	if c == 'n' {
		// A null leaves a zero value as it is; dst is one, as no key
		// comes twice.
		return s.value(sh)
	}
	for p.kind == planPointer {
		if dst.IsNil() {
			dst.Set(reflect.New(p.typ.Elem()))
		}
		dst, p = dst.Elem(), p.elem
	}
	switch {
	case c == '{' && p.kind == planStruct:
		return s.object(sh, dst), jsonValue{kind: valueObject}
	case c == '[' && p.kind == planSlice:
		return s.array(sh, p.elem, dst), jsonValue{kind: valueArray}
	case c == '"' && p.kind == planString:
		start := s.pos
		raw, plain := s.str()
		if !s.failed {
			s.setString(dst, start, raw, plain)
		}
		return nil, jsonValue{kind: valueString}
	case c == '"' && p.kind == planTime:
		start := s.pos
		s.str()
		if !s.failed {
			// time.Time reads the quoted bytes as they stand, as
			// encoding/json hands them to it.
			// It sets nothing on an error. Through the pointer, not
			// reflect.ValueOf, so nothing is allocated. The common form
			// is read by parseTime, to the same value.
			tp := dst.Addr().Interface().(*time.Time)
			if t, ok := parseTime(s.data[start+1:s.pos-1], &s.zone); ok {
				*tp = t
			} else if tp.UnmarshalJSON(s.data[start:s.pos]) != nil {
				s.left = true
			}
		}
		return nil, jsonValue{kind: valueString}
	case (c == '-' || c >= '0' && c <= '9') && (p.kind == planInt || p.kind == planUint || p.kind == planFloat):
		start := s.pos
		s.number()
		if !s.failed {
			s.setNumber(dst, p, s.data[start:s.pos])
		}
		return nil, jsonValue{kind: valueNumber, number: s.data[start:s.pos]}
	case (c == 't' || c == 'f') && p.kind == planBool:
		_, v := s.value(sh)
		if !s.failed {
			dst.SetBool(c == 't')
		}
		return nil, v
	}
	// A value of another JSON type: encoding/json refuses it.
	s.left = true
	return s.value(sh)
}

// setString sets dst to the value of the string that starts at start (its
// opening quote), raw its bytes between the quotes. A value without
// escapes is a part of one copy of the whole body, made on first use, so
// no string refers to the bytes read.
func (s *scanner) setString(dst reflect.Value, start int, raw []byte, plain bool) {
	if plain || bytes.IndexByte(raw, '\\') < 0 && utf8.Valid(raw) {
		if s.text == "" {
			s.text = string(s.data)
		}
		dst.SetString(s.text[start+1 : start+1+len(raw)])
		return
	}
	var v string
	if json.Unmarshal(s.data[start:s.pos], &v) != nil {
		s.left = true
		return
	}
	dst.SetString(v)
}

// setNumber sets dst to a number as encoding/json does: an integer only
// from an integral literal in range, a float in range.
func (s *scanner) setNumber(dst reflect.Value, p *plan, num []byte) {
	switch p.kind {
	case planInt:
		n, ok := parseInt(num)
		if !ok || dst.OverflowInt(n) {
			s.left = true
			return
		}
		dst.SetInt(n)
	case planUint:
		n, ok := parseUint(num)
		if !ok || dst.OverflowUint(n) {
			s.left = true
			return
		}
		dst.SetUint(n)
	case planFloat:
		f, err := strconv.ParseFloat(string(num), p.bits)
		if err != nil || dst.OverflowFloat(f) {
			s.left = true
			return
		}
		dst.SetFloat(f)
	}
}

// parseInt is strconv.ParseInt(num, 10, 64) for a JSON number.
func parseInt(num []byte) (int64, bool) {
	neg := len(num) > 0 && num[0] == '-'
	if neg {
		num = num[1:]
	}
	u, ok := parseUint(num)
	switch {
	case !ok:
		return 0, false
	case neg && u <= 1<<63:
		return -int64(u-1) - 1, true
	case !neg && u <= math.MaxInt64:
		return int64(u), true
	}
	return 0, false
}

// parseUint is strconv.ParseUint(num, 10, 64) for a JSON number.
func parseUint(num []byte) (uint64, bool) {
	if len(num) == 0 {
		return 0, false
	}
	var n uint64
	for _, c := range num {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	return n, true
}

// Body reading.

// maxPresized bounds the buffer sized from a Content-Length without a
// response limit: a larger claim is read as a body without one.
const maxPresized = DefaultResponseLimit

// readBuffers are scratch buffers for bodies of unknown length.
var readBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 16<<10); return &b }}

// maxPooled bounds the scratch buffer a pool keeps.
const maxPooled = 1 << 20

// readBody reads a response body whole, as io.ReadAll does, with one
// allocation of the body's size: a Content-Length (within the response
// limit) sizes it, else the body is read into a reused buffer and copied
// out. The generated Parse functions call it.
func readBody(rsp *http.Response) ([]byte, error) {
	limit := int64(maxPresized)
	if lb, ok := rsp.Body.(*limitedBody); ok {
		limit = lb.max
	}
	if n := rsp.ContentLength; n > 0 && n <= limit {
		// One byte more than announced, to see the end without growing.
		return readInto(rsp.Body, make([]byte, 0, n+1))
	}
	bp := readBuffers.Get().(*[]byte)
	b, err := readInto(rsp.Body, (*bp)[:0])
	out := bytes.Clone(b)
	if out == nil {
		out = []byte{}
	}
	if cap(b) <= maxPooled {
		*bp = b[:0]
		readBuffers.Put(bp)
	}
	return out, err
}

// readInto appends r's bytes to b up to the end, as io.ReadAll does.
func readInto(r io.Reader, b []byte) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if err == io.EOF {
				err = nil
			}
			return b, err
		}
	}
}
