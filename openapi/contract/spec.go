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
	"github.com/korral/storelink/storelinkclient/rules"
)

// spec is the contract prepared for checking.
type spec struct {
	doc      *openapi3.T
	router   routers.Router
	ops      map[string]operation
	schemaAt map[*openapi3.Schema]string
	// keyHeader is the header of the contract's security scheme.
	keyHeader string
	// exampleSKU is the SKU code the contract uses as its example.
	exampleSKU string
	// storeLocal is set when the contract declares that a date-time
	// without an offset is the store's local time (localtime.go).
	storeLocal bool
}

// operation is one endpoint of the contract.
type operation struct {
	id, method, path string
	op               *openapi3.Operation
	// keyScope is the operation's x-korral-key-scope: scopeStore when only
	// the key of the path's store opens it, scopeChain when any valid key
	// does.
	keyScope string
	// rules are the ids of the semantic rules its x-korral-rules lists.
	rules []string
}

// Key scopes of x-korral-key-scope.
const (
	scopeStore = "store"
	scopeChain = "chain"
)

// Vendor extensions of the contract the check reads.
const (
	extKeyScope = "x-korral-key-scope"
	extRules    = "x-korral-rules"
)

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

// spec is the contract the configuration checks against: Config.Spec
// when set, the embedded one otherwise.
func (c Config) spec() (*spec, error) {
	if c.Spec == nil {
		return loadSpec()
	}
	doc, err := openapi.Parse(c.Spec)
	if err != nil {
		return nil, err
	}
	return newSpec(doc)
}

func newSpec(doc *openapi3.T) (*spec, error) {
	doc.Servers = nil
	router, err := legacy.NewRouter(doc)
	if err != nil {
		return nil, fmt.Errorf("build router over the StoreLink contract: %w", err)
	}
	s := &spec{doc: doc, router: router, ops: map[string]operation{}, schemaAt: map[*openapi3.Schema]string{}}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := operation{id: op.OperationID, method: strings.ToUpper(method), path: path, op: op}
			if err := o.readExtensions(); err != nil {
				return nil, err
			}
			s.ops[op.OperationID] = o
		}
	}
	for _, id := range s.opOrder() {
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
	if s.storeLocal, err = storeLocalTimes(doc); err != nil {
		return nil, err
	}
	return s, nil
}

// declared lists the properties the contract gives a schema component.
func (s *spec) declared(component string) []string {
	ref := s.doc.Components.Schemas[component]
	if ref == nil || ref.Value == nil {
		return nil
	}
	return slices.Collect(maps.Keys(ref.Value.Properties))
}

// opOrder lists the contract's operations in the order of the brief's
// endpoint table, the order reports use.
func (s *spec) opOrder() []string {
	return []string{opListStores, opGetStore, opGetInventory, opListPOS, opCreateOrder, opGetOrder, opGetSKU, opGetSupplier}
}

// readExtensions reads the operation's key scope and semantic rules; an
// unknown rule id is an error.
func (o *operation) readExtensions() error {
	scope, _ := o.op.Extensions[extKeyScope].(string)
	if scope != scopeStore && scope != scopeChain {
		return fmt.Errorf("the StoreLink contract gives operation %s no %s (want %s or %s)", o.id, extKeyScope, scopeStore, scopeChain)
	}
	o.keyScope = scope
	list, ok := o.op.Extensions[extRules].([]any)
	if !ok {
		return fmt.Errorf("the StoreLink contract gives operation %s no %s list", o.id, extRules)
	}
	for _, v := range list {
		id, _ := v.(string)
		if _, known := rules.Lookup(id); !known {
			return fmt.Errorf("operation %s of the StoreLink contract names rule %q, which this check does not know", o.id, id)
		}
		o.rules = append(o.rules, id)
	}
	return nil
}

// rulesLocation names the operation's list of semantic rules in the
// document, for findings about a broken rule.
func (o operation) rulesLocation() string {
	return "#/paths/" + escapePointer(o.path) + "/" + strings.ToLower(o.method) + "/" + extRules
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
