package contract

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3filter"
)

// itemised bounds the array items and object members of one body that are
// validated one by one (ADR 0035). kin-openapi builds one error per broken
// item before the finding limit applies, so a body is itemised only up to
// this many; the largest answer the contract allows has about 4,000.
const itemised = 10_000

// boundedBody is a body as the judge reads it: the body itself when it
// has at most itemised elements, else a copy that keeps the first
// itemised elements in document order, and after them only the members
// the contract names, so that no required property goes missing.
type boundedBody struct {
	view []byte
	// cutAt is the JSON Pointer of the first array or object that lost
	// elements; cut reports whether any did.
	cutAt string
	cut   bool
}

// bound returns the body's bounded view. A body that is not valid JSON is
// returned whole: its decoder fails before it builds anything.
func (s *spec) bound(body []byte) boundedBody { return s.boundTo(body, itemised) }

// boundTo is bound with n elements itemised.
func (s *spec) boundTo(body []byte, n int) boundedBody {
	if !json.Valid(body) {
		return boundedBody{view: body}
	}
	t := &trimmer{in: body, left: n, spec: s}
	t.value()
	if len(t.drops) == 0 {
		return boundedBody{view: body}
	}
	out := make([]byte, 0, len(body))
	at := 0
	for _, d := range t.drops {
		out = append(out, body[at:d[0]]...)
		at = d[1]
	}
	out = append(out, body[at:]...)
	return boundedBody{view: out, cutAt: t.cutAt, cut: true}
}

// note is the finding that says the body's findings were cut.
func (b boundedBody) note() Finding {
	return Finding{Kind: FindingBody, Path: b.cutAt,
		Message: fmt.Sprintf("findings cut: the body holds more than %d array items and object members; findings are listed for the first %d only", itemised, itemised)}
}

// trimmer walks a valid JSON document and records the byte ranges the
// bounded view leaves out.
type trimmer struct {
	in    []byte
	pos   int
	left  int
	spec  *spec
	names map[string]bool
	drops [][2]int
	// path holds the open containers' tokens, for cutAt.
	path  []pathStep
	cutAt string
	isCut bool
}

// pathStep is one step of a path: an object key's raw bytes, or an index.
type pathStep struct {
	key   []byte
	index int
}

func (t *trimmer) space() {
	for t.pos < len(t.in) {
		switch t.in[t.pos] {
		case ' ', '\t', '\n', '\r':
			t.pos++
		default:
			return
		}
	}
}

// value walks the value at pos, which json.Valid has vouched for.
func (t *trimmer) value() {
	t.space()
	switch t.in[t.pos] {
	case '{', '[':
		t.container()
	default:
		t.skip()
	}
}

// container walks an object or an array, keeping or leaving out each
// element.
func (t *trimmer) container() {
	object := t.in[t.pos] == '{'
	t.pos++
	t.space()
	if t.in[t.pos] == '}' || t.in[t.pos] == ']' {
		t.pos++
		return
	}
	kept := false
	for i := 0; ; i++ {
		comma := -1
		if i > 0 {
			comma = t.pos
			t.pos++
			t.space()
		}
		start := t.pos
		var key []byte
		if object {
			key = t.key()
		}
		keep := t.left > 0 || (object && t.declared(key))
		if t.left > 0 {
			t.left--
		}
		switch {
		case keep:
			if !kept && comma >= 0 {
				t.leaveOut(comma, comma+1)
			}
			kept = true
			t.path = append(t.path, pathStep{key: key, index: i})
			t.value()
			t.path = t.path[:len(t.path)-1]
		default:
			t.cut()
			t.skip()
			from := start
			if comma >= 0 {
				from = comma
			}
			t.leaveOut(from, t.pos)
		}
		t.space()
		if c := t.in[t.pos]; c == '}' || c == ']' {
			t.pos++
			return
		}
	}
}

// leaveOut records a range the view leaves out, joined to the previous
// one when they touch, so a wide array costs one range.
func (t *trimmer) leaveOut(from, to int) {
	if n := len(t.drops); n > 0 && t.drops[n-1][1] == from {
		t.drops[n-1][1] = to
		return
	}
	t.drops = append(t.drops, [2]int{from, to})
}

// key reads an object member's key and colon, and returns the key's raw
// bytes between the quotes.
func (t *trimmer) key() []byte {
	start := t.pos
	t.skip()
	key := t.in[start+1 : t.pos-1]
	t.space()
	t.pos++ // ':'
	t.space()
	return key
}

// declared reports whether a key names a property anywhere in the
// contract.
func (t *trimmer) declared(raw []byte) bool {
	if t.names == nil {
		t.names = map[string]bool{}
		for sc := range t.spec.schemaAt {
			for name := range sc.Properties {
				t.names[name] = true
			}
		}
	}
	return t.names[keyText(raw)]
}

// cut records the path of the first container that loses elements.
func (t *trimmer) cut() {
	if t.isCut {
		return
	}
	t.isCut = true
	tokens := make([]string, len(t.path))
	for i, p := range t.path {
		tokens[i] = strconv.Itoa(p.index)
		if p.key != nil {
			tokens[i] = keyText(p.key)
		}
	}
	t.cutAt = pointer(tokens)
}

// skip moves past one string, literal, object or array without looking
// inside.
func (t *trimmer) skip() {
	depth := 0
	for t.pos < len(t.in) {
		c := t.in[t.pos]
		switch {
		case c == '"':
			t.pos++
			for t.in[t.pos] != '"' {
				if t.in[t.pos] == '\\' {
					t.pos++
				}
				t.pos++
			}
		case c == '{' || c == '[':
			depth++
		case c == '}' || c == ']':
			if depth == 0 {
				return
			}
			depth--
		case c == ',' || c == ':' || c == ' ' || c == '\t' || c == '\n' || c == '\r':
			if depth == 0 {
				return
			}
		}
		t.pos++
		if depth == 0 && (c == '"' || c == '}' || c == ']') {
			return
		}
	}
}

// keyText decodes a key's raw bytes; most keys hold no escape.
func keyText(raw []byte) string {
	for _, c := range raw {
		if c == '\\' {
			var s string
			_ = json.Unmarshal(append(append([]byte{'"'}, raw...), '"'), &s)
			return s
		}
	}
	return string(raw)
}

// firstBreakOptions validate a whole wide body up to its first break.
var firstBreakOptions = &openapi3filter.Options{IncludeResponseStatus: true}

// judgeBody validates an answer's status, headers and body against
// the contract and returns the findings. A wide body is validated through
// its bounded view; only when that view conforms is the whole body
// validated once more, up to its first break, so a break past the view is
// not missed.
func (s *spec) judgeBody(ctx context.Context, in *openapi3filter.RequestValidationInput, op operation, status int, header http.Header, b boundedBody, whole []byte) []Finding {
	validate := func(body []byte, opts *openapi3filter.Options) error {
		return openapi3filter.ValidateResponse(ctx, &openapi3filter.ResponseValidationInput{
			RequestValidationInput: in,
			Status:                 status,
			Header:                 header,
			Body:                   ioNop(body),
			Options:                opts,
		})
	}
	fs := s.findings(validate(b.view, responseOptions), op, status, b.view)
	if b.cut && len(fs) == 0 {
		fs = s.findings(validate(whole, firstBreakOptions), op, status, b.view)
	}
	return fs
}
