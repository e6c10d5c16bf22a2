package tools

import (
	"reflect"
	"slices"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/domain"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/korral/storelink/mcpserver/internal/state"
)

// Output schemas describe the success envelope only; a tool error is text
// with isError (ADR 0012). They are inferred from the answer structs, then
// made lean: closed sets become enums, omitted fields are not nullable, the
// per-store error body is one shared definition, and nested objects repeat
// neither "additionalProperties": false nor "required" (the goldens and
// handler tests pin them).

// enumTypes are the named string types of closed sets (enums.go); an
// outShape hook may narrow a field's set.
var enumTypes = map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[projection.Confidence](): enumOf(projection.Confidences()),
	reflect.TypeFor[projection.Answer]():     enumOf(projection.Answers()),
	reflect.TypeFor[projection.Flag]():       enumOf(projection.Flags()),
	reflect.TypeFor[projection.DayFlag]():    enumOf(projection.DayFlags()),
	reflect.TypeFor[domain.OrderStatus]():    enumOf(domain.OrderStatuses()),
	reflect.TypeFor[orderStatus]():           enumOf(orderStatuses()),
	reflect.TypeFor[raiseMode]():             enumOf(raiseModes()),
	reflect.TypeFor[verdict]():               enumOf(verdicts()),
}

// ledgerStates is the closed set of the ledger view's state, a plain string.
var ledgerStates = state.States()

func enumOf[T ~string](values []T) *jsonschema.Schema {
	s := &jsonschema.Schema{Type: "string"}
	for _, v := range values {
		s.Enum = append(s.Enum, string(v))
	}
	return s
}

var storeErrorCodes = []apperr.Code{
	apperr.InvalidArgument, apperr.StoreNotAuthorized, apperr.AuthKeyInvalid, apperr.NotFound, apperr.UpstreamRejected,
	apperr.RateLimited, apperr.UpstreamUnavailable, apperr.UpstreamTimeout, apperr.UpstreamContractError, apperr.InternalError,
}

// errorDef is the one definition of ErrorBody every output schema refers to.
const errorRef = "#/$defs/error"

// It is one store's error in an answer about several, so its codes are
// those one store's reads can end in.
func errorDef() *jsonschema.Schema {
	code := enumOf(storeErrorCodes)
	return &jsonschema.Schema{
		Type: "object",
		Properties: map[string]*jsonschema.Schema{
			"code":                code,
			"message":             {Type: "string"},
			"remediation":         {Type: "string"},
			"retry_after_seconds": {Type: "integer"},
			"incident_id":         {Type: "string"},
		},
	}
}

// Every tool answers with one envelope: {ok: true, data} or {ok: false,
// error: ErrorBody}, as text content; a success also carries it as
// structured content (ADR 0012). success is the success envelope.
type success[T any] struct {
	OK   bool `json:"ok"`
	Data T    `json:"data"`
}

// outputSchema infers the success envelope's schema for Out, made lean.
func outputSchema[Out any]() (*jsonschema.Schema, error) {
	s, err := jsonschema.For[success[Out]](&jsonschema.ForOptions{TypeSchemas: enumTypes})
	if err != nil {
		return nil, err
	}
	if lean(s, reflect.TypeFor[success[Out]](), 0) {
		s.Defs = map[string]*jsonschema.Schema{"error": errorDef()}
	}
	s.Properties["ok"].Type, s.Properties["ok"].Const = "", jsonschema.Ptr[any](true)
	return s, nil
}

var errorBodyType = reflect.TypeFor[ErrorBody]()

// lean walks a schema beside its Go type, dropping "required" below the
// envelope (typed structs always have every field). It reports whether it
// referred to the error definition.
func lean(s *jsonschema.Schema, t reflect.Type, depth int) (refersToError bool) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if s == nil {
		return false
	}
	s.AdditionalProperties = nil
	if depth > 0 {
		s.Required = nil
	}
	switch t.Kind() {
	case reflect.Slice, reflect.Array:
		return lean(s.Items, t.Elem(), depth)
	case reflect.Struct:
		for _, f := range reflect.VisibleFields(t) {
			name, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
			p := s.Properties[name]
			if p == nil || !f.IsExported() || f.Anonymous {
				continue
			}
			ft := f.Type
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft == errorBodyType {
				s.Properties[name] = &jsonschema.Schema{Ref: errorRef}
				refersToError = true
				continue
			}
			// omitempty leaves nil out and answers use empty lists, so nothing is
			// null without a nullable tag.
			omit := slices.Contains(strings.Split(opts, ","), "omitempty")
			nullable := f.Tag.Get("nullable") == "true"
			if (omit || f.Type.Kind() == reflect.Slice && !nullable) && len(p.Types) == 2 && p.Types[0] == "null" {
				p.Type, p.Types = p.Types[1], nil
			}
			refersToError = lean(p, f.Type, depth+1) || refersToError
		}
	}
	return refersToError
}

// property follows a path of property names from s; nil when absent.
func property(s *jsonschema.Schema, path ...string) *jsonschema.Schema {
	for _, name := range path {
		if s == nil {
			return nil
		}
		if s.Items != nil && s.Properties == nil {
			s = s.Items
		}
		s = s.Properties[name]
	}
	return s
}

// setEnum makes the string at path one of values.
func setEnum[T ~string](s *jsonschema.Schema, values []T, path ...string) {
	p := property(s, path...)
	if p == nil {
		panic("output schema has no property " + strings.Join(path, "."))
	}
	p.Enum = enumOf(values).Enum
}
