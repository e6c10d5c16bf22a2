package upstream

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/domain"
	sl "github.com/korral/storelink/storelinkclient"
)

// bodyOf is the body of a read's successful answer that did not decode, as
// the client read it (the error carries it); nil when there is none.
func bodyOf(ctx context.Context, method string, err error) []byte {
	a := attemptOf(ctx)
	if a == nil || method != http.MethodGet || a.status < 200 || a.status >= 300 {
		return nil
	}
	if b, ok := sl.MalformedBody(err); ok && len(b) > 0 {
		return b
	}
	return nil
}

// undecodable reports a decoding error of a value of the wrong JSON type
// or a time that is not RFC 3339: one field's fault, not the whole body's.
func undecodable(err error) bool {
	var mismatch *json.UnmarshalTypeError
	var badTime *time.ParseError
	return errors.As(err, &mismatch) || errors.As(err, &badTime) || err != nil && strings.Contains(err.Error(), "Time.UnmarshalJSON:")
}

// withoutUnreadableQualifiers salvages an answer that does not decode
// because of ill-typed qualifiers: it drops the fewest top-level qualifier
// properties that let the body decode into T, and returns that body and
// the dropped table names. ok is false when the body does not decode even
// without every qualifier, so a decision field is unreadable (ADR 0030).
func withoutUnreadableQualifiers[T any](body []byte, root string) (fixed []byte, dropped []string, ok bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal(body, &obj) != nil {
		return nil, nil, false
	}
	var quals []string
	for name := range obj {
		if s, q := domain.IsQualifier(root + "." + name); q && s.Name == root+"."+name {
			quals = append(quals, name)
		}
	}
	slices.Sort(quals)
	try := func(drop []string) ([]byte, bool) {
		kept := make(map[string]json.RawMessage, len(obj))
		for k, v := range obj {
			if !slices.Contains(drop, k) {
				kept[k] = v
			}
		}
		b, err := json.Marshal(kept)
		if err != nil {
			return nil, false
		}
		return b, json.Unmarshal(b, new(T)) == nil
	}
	if _, ok := try(quals); !ok {
		return nil, nil, false
	}
	// Each qualifier that decodes beside the others is kept.
	drop := slices.Clone(quals)
	for _, q := range quals {
		rest := slices.DeleteFunc(slices.Clone(drop), func(d string) bool { return d == q })
		if _, ok := try(rest); ok {
			drop = rest
		}
	}
	fixed, _ = try(drop)
	for _, d := range drop {
		dropped = append(dropped, root+"."+d)
	}
	return fixed, dropped, true
}

// salvage is checked's way past a body that does not decode: when the
// only unreadable fields are qualifiers, it returns the answer without
// them, its problems, and the qualifiers it dropped (ok true).
func salvage[T any](ctx context.Context, method, root string, err error) (v *T, problems []sl.FieldProblem, dropped []string, ok bool) {
	if !errors.Is(err, sl.ErrMalformedResponse) || !undecodable(err) {
		return nil, nil, nil, false
	}
	body := bodyOf(ctx, method, err)
	if body == nil {
		return nil, nil, nil, false
	}
	fixed, dropped, ok := withoutUnreadableQualifiers[T](body, root)
	if !ok {
		return nil, nil, nil, false
	}
	v = new(T)
	if json.Unmarshal(fixed, v) != nil {
		return nil, nil, nil, false
	}
	return v, sl.FieldProblems(fixed, v), dropped, true
}
