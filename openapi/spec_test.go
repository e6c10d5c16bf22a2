package openapi

import (
	"net/http"
	"sort"
	"strings"
	"testing"
)

func TestLoadValidates(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	if doc.OpenAPI != "3.0.3" {
		t.Errorf("openapi version = %q, want 3.0.3", doc.OpenAPI)
	}
}

// TestEightEndpoints pins the endpoint set: StoreLink has exactly these
// operations and the contract must not invent more.
func TestEightEndpoints(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			got = append(got, method+" "+path+" "+op.OperationID)
		}
	}
	sort.Strings(got)
	want := []string{
		"GET /v1/skus/{sku} getSKU",
		"GET /v1/stores listStores",
		"GET /v1/stores/{store_id} getStore",
		"GET /v1/stores/{store_id}/inventory getInventory",
		"GET /v1/stores/{store_id}/pos listPOSTransactions",
		"GET /v1/stores/{store_id}/replenishment/{order_id} getReplenishmentOrder",
		"GET /v1/suppliers/{supplier_id} getSupplier",
		"POST /v1/stores/{store_id}/replenishment createReplenishmentOrder",
	}
	sort.Strings(want)
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("operations:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestEveryOperationDocumentsErrors: each operation declares the common
// error statuses with the shared body, and 429 declares Retry-After.
func TestEveryOperationDocumentsErrors(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			if op.Summary == "" || op.OperationID == "" {
				t.Errorf("%s %s: missing summary or operationId", method, path)
			}
			required := []int{401, 429, 500, 503}
			if strings.HasPrefix(path, "/v1/stores/{store_id}") {
				required = append(required, 400, 403, 404)
			}
			if method == http.MethodPost {
				required = append(required, 422)
			}
			for _, status := range required {
				resp := op.Responses.Status(status)
				if resp == nil || resp.Value == nil {
					t.Errorf("%s %s: status %d not declared", method, path, status)
					continue
				}
				mt := resp.Value.Content.Get("application/json")
				if mt == nil || mt.Schema == nil || mt.Schema.Ref != "#/components/schemas/Error" {
					t.Errorf("%s %s: status %d does not use the Error body", method, path, status)
				}
				if status == 429 && resp.Value.Headers["Retry-After"] == nil {
					t.Errorf("%s %s: 429 without Retry-After", method, path)
				}
			}
		}
	}
}

// TestSchemasAreDocumented requires a description and an example on every
// component schema, since the contract doubles as documentation.
func TestSchemasAreDocumented(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	for name, ref := range doc.Components.Schemas {
		s := ref.Value
		if s.Description == "" {
			t.Errorf("schema %s: no description", name)
		}
		if s.Example == nil {
			t.Errorf("schema %s: no example", name)
		}
		if s.Type.Is("object") && (s.AdditionalProperties.Has == nil || *s.AdditionalProperties.Has) {
			t.Errorf("schema %s: object is not closed (additionalProperties: false)", name)
		}
	}
}

func TestParseRejectsBrokenDocument(t *testing.T) {
	broken := strings.Replace(string(YAML), `pattern: "^[0-9]{1,6}$"`, `pattern: "^[0-9]{1,6$"`, 1)
	if _, err := Parse([]byte(broken)); err == nil {
		t.Fatal("Parse accepted a document with an invalid pattern")
	}
}
