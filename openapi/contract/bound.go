package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strconv"

	"github.com/getkin/kin-openapi/openapi3"
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
// the contract names, so that no required property goes missing. A
// repeated key is kept and not counted.
type boundedBody struct {
	view []byte
	// cut reports whether any array or object lost elements; cuts are
	// some of them (cutMemory) in the order they end, inner before outer.
	cut  bool
	cuts []cutContainer
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
	return boundedBody{view: out, cut: true, cuts: t.cuts}
}

// note is the finding that says the body's findings were cut; it points
// at the first container to end cut short.
func (b boundedBody) note() Finding {
	return Finding{Kind: FindingBody, Path: pointer(b.cuts[0].path),
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
	// path holds the open containers' tokens.
	path []pathStep
	// cuts are the containers that lost elements, as in boundedBody.
	cuts   []cutContainer
	turned int
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
	var dropped []byte // the first key left out
	cut := false
	var keys keySet
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
		// A repeated key costs nothing and is kept, so the view decodes
		// to the same value (the last one wins) and repeats cannot use up
		// the budget to hide what follows.
		repeat := object && keys.has(key)
		keep := repeat || t.left > 0 || (object && t.declared(key))
		if !repeat && t.left > 0 {
			t.left--
		}
		if keep && object && !repeat {
			keys.add(key)
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
			if !cut && object {
				dropped = key
			}
			cut = true
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
			if cut {
				t.cut(object, i+1, dropped)
			}
			return
		}
	}
}

// keySet is the keys of one object, as raw bytes.
type keySet struct {
	list [][]byte
	m    map[string]bool
}

func (k *keySet) has(key []byte) bool {
	if k.m != nil {
		return k.m[string(key)]
	}
	return slices.ContainsFunc(k.list, func(x []byte) bool { return bytes.Equal(x, key) })
}

// add adds a key; past a few keys a map takes over from the list.
func (k *keySet) add(key []byte) {
	if k.m != nil {
		k.m[string(key)] = true
		return
	}
	if k.list = append(k.list, key); len(k.list) > 16 {
		k.m = map[string]bool{}
		for _, x := range k.list {
			k.m[string(x)] = true
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

// cutMemory bounds the cut containers remembered for the first-break
// check (firstBreak).
const cutMemory = 64

// cutContainer is an array or object that lost elements in the view.
type cutContainer struct {
	path   []string
	object bool
	// elements is how many it holds in the body; dropped is the first key
	// an object lost.
	elements int
	dropped  string
}

// cut records a container that lost elements, with its path, its count
// of elements and the first key it lost.
func (t *trimmer) cut(object bool, elements int, dropped []byte) {
	tokens := make([]string, len(t.path))
	for i, p := range t.path {
		tokens[i] = strconv.Itoa(p.index)
		if p.key != nil {
			tokens[i] = keyText(p.key)
		}
	}
	c := cutContainer{path: tokens, object: object, elements: elements}
	if dropped != nil {
		c.dropped = keyText(dropped)
	}
	if len(t.cuts) < cutMemory {
		t.cuts = append(t.cuts, c)
		return
	}
	// Past the memory, the later half turns over, so the outer containers,
	// which end last, are kept.
	t.cuts[cutMemory/2+t.turned%(cutMemory/2)] = c
	t.turned++
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
		if fs = s.firstBreak(op, status, b.cuts); len(fs) == 0 {
			fs = s.findings(validate(whole, firstBreakOptions), op, status, b.view)
		}
	}
	return fs
}

// firstBreak looks for a break the view hides in what the trimmer saw
// without decoding: an array longer than its maxItems, or an object that
// lost a property its schema does not allow.
func (s *spec) firstBreak(op operation, status int, cuts []cutContainer) []Finding {
	root := responseSchema(op, status)
	for _, c := range cuts {
		sc := schemaAtPath(root, c.path)
		if sc == nil {
			continue
		}
		loc, named := s.schemaAt[sc]
		if !named {
			loc = op.responseLocation(status)
		}
		switch {
		case !c.object && sc.MaxItems != nil && uint64(c.elements) > *sc.MaxItems:
			return []Finding{{Kind: FindingSchema, Path: pointer(c.path), Schema: loc + "/maxItems",
				Message: fmt.Sprintf("maximum number of items is %d", *sc.MaxItems)}}
		case c.object && c.dropped != "" && sc.AdditionalProperties.Has != nil && !*sc.AdditionalProperties.Has:
			return []Finding{{Kind: FindingSchema, Path: pointer(append(c.path, c.dropped)), Schema: loc + "/additionalProperties",
				Message: fmt.Sprintf("property %q is unsupported", c.dropped)}}
		}
	}
	return nil
}

// responseSchema is the JSON schema of an operation's response; nil when
// it has none.
func responseSchema(op operation, status int) *openapi3.Schema {
	r := op.op.Responses.Status(status)
	if r == nil {
		r = op.op.Responses.Default()
	}
	if r == nil || r.Value == nil {
		return nil
	}
	mt := r.Value.Content.Get("application/json")
	if mt == nil || mt.Schema == nil {
		return nil
	}
	return mt.Schema.Value
}

// schemaAtPath follows a JSON Pointer's tokens through properties and
// items; nil where a schema combines others or the path leaves it.
func schemaAtPath(sc *openapi3.Schema, path []string) *openapi3.Schema {
	for _, tok := range path {
		if sc == nil || len(sc.AllOf)+len(sc.AnyOf)+len(sc.OneOf) > 0 || sc.Not != nil {
			return nil
		}
		var next *openapi3.SchemaRef
		switch {
		case sc.Type.Is(openapi3.TypeArray):
			next = sc.Items
		case sc.Type.Is(openapi3.TypeObject):
			next = sc.Properties[tok]
		}
		if next == nil {
			return nil
		}
		sc = next.Value
	}
	if sc == nil || len(sc.AllOf)+len(sc.AnyOf)+len(sc.OneOf) > 0 || sc.Not != nil {
		return nil
	}
	return sc
}
