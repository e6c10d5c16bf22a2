package contract

import (
	"fmt"
	"maps"
	"net/http"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/legacy"
	"github.com/korral/storelink/openapi"
)

// spec is the contract prepared for checking: the parsed document, a router
// over its paths, each operation's method and path, and where each schema
// lives in the document so a failure can name it.
type spec struct {
	doc      *openapi3.T
	router   routers.Router
	ops      map[string]operation
	schemaAt map[*openapi3.Schema]string
	// keyHeader is the header of the contract's security scheme.
	keyHeader string
	// exampleSKU is the SKU code the contract uses as its example.
	exampleSKU string
}

// operation is one endpoint of the contract.
type operation struct {
	id, method, path string
	op               *openapi3.Operation
}

// endpoint is how reports name an operation: "GET /v1/stores/{store_id}".
func (o operation) endpoint() string { return o.method + " " + o.path }

// declares reports whether the contract declares the status for the
// operation, either explicitly or through a default response.
func (o operation) declares(status int) bool {
	return o.op.Responses.Status(status) != nil || o.op.Responses.Default() != nil
}

var loadSpec = sync.OnceValues(func() (*spec, error) {
	// A private copy: the servers list is dropped so the router matches the
	// paths whatever host StoreLink runs on, and openapi.Load's copy is
	// shared with other packages that must not see that change.
	doc, err := openapi.Parse(openapi.YAML)
	if err != nil {
		return nil, err
	}
	return newSpec(doc)
})

func newSpec(doc *openapi3.T) (*spec, error) {
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("build router over the StoreLink contract: %w", err)
	}
	s := &spec{doc: doc, router: router, ops: map[string]operation{}, schemaAt: map[*openapi3.Schema]string{}}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			s.ops[op.OperationID] = operation{id: op.OperationID, method: strings.ToUpper(method), path: path, op: op}
		}
	}
	for _, id := range []string{opListStores, opGetStore, opGetInventory, opListPOS, opCreateOrder, opGetOrder, opGetSKU, opGetSupplier} {
		if _, ok := s.ops[id]; !ok {
			return nil, fmt.Errorf("the StoreLink contract has no operation %q", id)
		}
	}
	// Component schemas first, in name order, so a schema reached through a
	// $ref is named after its component rather than after a property that
	// happens to point at it.
	names := slices.Sorted(maps.Keys(doc.Components.Schemas))
	for _, name := range names {
		if ref := doc.Components.Schemas[name]; ref != nil && ref.Value != nil {
			s.schemaAt[ref.Value] = "#/components/schemas/" + name
		}
	}
	for _, name := range names {
		if ref := doc.Components.Schemas[name]; ref != nil && ref.Value != nil {
			s.nameInline(ref.Value, "#/components/schemas/"+name)
		}
	}
	for _, scheme := range doc.Components.SecuritySchemes {
		if scheme.Value != nil && scheme.Value.Type == "apiKey" && scheme.Value.In == "header" {
			s.keyHeader = http.CanonicalHeaderKey(scheme.Value.Name)
		}
	}
	if s.keyHeader == "" {
		return nil, fmt.Errorf("the StoreLink contract declares no header key scheme")
	}
	if ref := doc.Components.Schemas["SKUCode"]; ref != nil && ref.Value != nil {
		s.exampleSKU, _ = ref.Value.Example.(string)
	}
	return s, nil
}

// nameInline records the location of the inline schemas under a schema:
// properties and array items that are not references to a component.
func (s *spec) nameInline(schema *openapi3.Schema, at string) {
	props := slices.Sorted(maps.Keys(schema.Properties))
	for _, name := range props {
		ref := schema.Properties[name]
		if ref == nil || ref.Value == nil {
			continue
		}
		if _, named := s.schemaAt[ref.Value]; named {
			continue
		}
		loc := at + "/properties/" + escapePointer(name)
		s.schemaAt[ref.Value] = loc
		s.nameInline(ref.Value, loc)
	}
	if items := schema.Items; items != nil && items.Value != nil {
		if _, named := s.schemaAt[items.Value]; !named {
			s.schemaAt[items.Value] = at + "/items"
			s.nameInline(items.Value, at+"/items")
		}
	}
}

// responseLocation names a declared response of an operation in the
// document, for findings about status codes.
func (o operation) responseLocation(status int) string {
	loc := "#/paths/" + escapePointer(o.path) + "/" + strings.ToLower(o.method) + "/responses"
	if status > 0 {
		loc += "/" + fmt.Sprint(status)
	}
	return loc
}

// declaredStatuses lists the statuses the operation declares, in order.
func (o operation) declaredStatuses() []string {
	codes := slices.Collect(maps.Keys(o.op.Responses.Map()))
	sort.Strings(codes)
	return codes
}

// escapePointer escapes one JSON Pointer token (RFC 6901).
func escapePointer(token string) string {
	return strings.NewReplacer("~", "~0", "/", "~1").Replace(token)
}
