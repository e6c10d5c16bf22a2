package tools

//go:generate go run ./schemagen

import (
	"encoding/json"
	"fmt"
	"go/format"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/korral/storelink/mcpserver/internal/apperr"
	"github.com/korral/storelink/mcpserver/internal/projection"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The tools' schemas are inferred from their Go types (jsonschema.For) and
// shaped by hand. Inferring, checking and marshalling them took a large
// share of a cold start before the first tools/list could be answered
// (docs/benchmarks.md), so the tool list of the usual configurations is
// built once, by `go generate` (schemagen), into schemas.gen.go, and the
// server lists those bytes as they are. A configuration the file does not
// hold (another MAX_ORDER_UNITS, say) builds its schemas at start-up as
// before. TestGeneratedSchemasAreCurrent fails when the file differs from
// what the types give.

// schemaKey names the configuration a tool's schemas depend on: every
// option a shape or outShape hook reads must be in it.
func (s *server) schemaKey(tool string) string {
	ceiling := int64(0)
	if w := s.opts.Writes; w != nil {
		ceiling = min(w.MaxOrderUnits, maxPreviewUnits)
	}
	return fmt.Sprintf("%s demo=%t writes=%t ceiling=%d lookback=%d", tool, s.opts.EmbeddedDemo, s.opts.Writes != nil, ceiling, s.opts.DefaultLookbackDays)
}

// schemas returns the input and output schemas tool lists: the generated
// JSON for this configuration, or the schemas build makes. A server
// collecting schemas for the generator builds every one and keeps its
// JSON.
func (s *server) schemas(tool string, build func() (in, out *jsonschema.Schema)) (in, out any) {
	key := s.schemaKey(tool)
	if s.collected == nil {
		if g, ok := generatedSchemas[key]; ok {
			return json.RawMessage(g[0]), json.RawMessage(g[1])
		}
		return build()
	}
	inS, outS := build()
	inB, err := json.Marshal(inS)
	if err == nil {
		var outB []byte
		outB, err = json.Marshal(outS)
		s.collected[key] = [2]string{string(inB), string(outB)}
	}
	if err != nil {
		panic(fmt.Sprintf("tool %s: marshal schemas: %v", tool, err))
	}
	return inS, outS
}

// addTool adds t with its schemas in and out. Generated schemas are JSON,
// which mcp.Server.AddTool would decode twice to check; they were checked
// when generated (they are the schemas buildSchemas makes), so the tool is
// added with a stand-in schema and given its own after: the server keeps t
// and lists it as it is then (TestGeneratedSchemasAreWhatTheTypesGive
// fails if that changes).
func addTool(ms *mcp.Server, t *mcp.Tool, in, out any, h mcp.ToolHandler) {
	raw, generated := in.(json.RawMessage)
	if !generated {
		t.InputSchema, t.OutputSchema = in, out
		ms.AddTool(t, h)
		return
	}
	t.InputSchema, t.OutputSchema = &jsonschema.Schema{Type: "object"}, &jsonschema.Schema{}
	ms.AddTool(t, h)
	t.InputSchema, t.OutputSchema = raw, out
}

// inputSchema is the tool's input schema as inferred and shaped.
func inputSchema[In, Out any](spec toolSpec[In, Out]) *jsonschema.Schema {
	in, err := jsonschema.For[In](nil)
	if err != nil {
		panic(fmt.Sprintf("tool %s: input schema: %v", spec.tool.Name, err))
	}
	if in.Properties == nil {
		in.Properties = map[string]*jsonschema.Schema{}
	}
	if spec.shape != nil {
		spec.shape(in.Properties)
	}
	return in
}

// buildSchemas infers and shapes the tool's input and output schemas.
func buildSchemas[In, Out any](s *server, spec toolSpec[In, Out]) (in, out *jsonschema.Schema) {
	in = inputSchema(spec)
	if _, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true}); err != nil {
		panic(fmt.Sprintf("tool %s: resolve input schema: %v", spec.tool.Name, err))
	}
	out, err := outputSchema[Out]()
	if err != nil {
		panic(fmt.Sprintf("tool %s: output schema: %v", spec.tool.Name, err))
	}
	if spec.outShape != nil {
		spec.outShape(out)
	}
	if s.opts.EmbeddedDemo {
		property(out, "data").Properties["demo_notice"] = &jsonschema.Schema{Type: "string"}
	}
	return in, out
}

// argChecker checks a tool's arguments against its resolved input schema.
type argChecker[In any] struct {
	resolved *jsonschema.Resolved
	allowed  []string
	// emptyIsZero is set when no arguments (absent, null or {}) pass the
	// checks and decode to In's zero value, with no default to apply: such
	// a call needs no checking again.
	emptyIsZero bool
	// fast decodes the usual arguments without the schema walk
	// (args_fast.go); nil when the schema uses a keyword it does not
	// implement.
	fast *argPlan[In]
}

// newArgChecker resolves the tool's input schema.
func newArgChecker[In, Out any](spec toolSpec[In, Out]) *argChecker[In] {
	c, err := newArgCheckerFor[In](inputSchema(spec))
	if err != nil {
		panic(fmt.Sprintf("tool %s: resolve input schema: %v", spec.tool.Name, err))
	}
	return c
}

// newArgCheckerFor resolves the input schema in and plans its fast path.
func newArgCheckerFor[In any](in *jsonschema.Schema) (*argChecker[In], error) {
	resolved, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return nil, err
	}
	c := &argChecker[In]{resolved: resolved, allowed: make([]string, 0, len(in.Properties)), fast: newArgPlan[In](in)}
	for name := range in.Properties {
		c.allowed = append(c.allowed, name)
	}
	sort.Strings(c.allowed)
	v, aerr := decodeArgs[In](nil, c.resolved, c.allowed)
	c.emptyIsZero = aerr == nil && reflect.ValueOf(&v).Elem().IsZero()
	return c, nil
}

// decode is decodeArgs with the tool's schema, by the fast path when it
// can decide (it only ever accepts; every refusal and its message come
// from decodeArgs).
func (c *argChecker[In]) decode(raw json.RawMessage) (In, *apperr.Error) {
	if c.emptyIsZero {
		switch strings.TrimSpace(string(raw)) {
		case "", "null", "{}":
			var zero In
			return zero, nil
		}
	}
	if c.fast != nil {
		if v, ok := c.fast.decode(raw); ok {
			return v, nil
		}
	}
	return decodeArgs[In](raw, c.resolved, c.allowed)
}

// GeneratedSchemasSource is the Go source of schemas.gen.go: the schemas of
// every tool in the configurations a deployment most often runs (with and
// without writes and the embedded demo, at the default MAX_ORDER_UNITS
// and lookback).
// Only the generator (schemagen) and its test call it.
func GeneratedSchemasSource(defaultMaxOrderUnits int64) ([]byte, error) {
	all := map[string][2]string{}
	for _, demo := range []bool{false, true} {
		for _, writes := range []*WriteOptions{nil, {MaxOrderUnits: defaultMaxOrderUnits}} {
			s := newServer(Options{EmbeddedDemo: demo, Writes: writes, DefaultLookbackDays: projection.DefaultLookbackDays})
			s.collected = all
			build(s)
		}
	}
	keys := make([]string, 0, len(all))
	for k := range all {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString("// Code generated by schemagen from the tools' Go types (schemas.go). DO NOT EDIT.\n\npackage tools\n\n")
	b.WriteString("// generatedSchemas are the input and output schemas of every tool, as JSON, by schemaKey.\n")
	b.WriteString("var generatedSchemas = map[string][2]string{\n")
	for _, k := range keys {
		fmt.Fprintf(&b, "\t%s: {\n\t\t%s,\n\t\t%s,\n\t},\n", strconv.Quote(k), strconv.Quote(all[k][0]), strconv.Quote(all[k][1]))
	}
	b.WriteString("}\n")
	return format.Source([]byte(b.String()))
}
