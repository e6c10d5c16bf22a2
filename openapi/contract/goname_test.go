package contract

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/korral/storelink/openapi"
)

// TestGoFieldNameMatchesGenerated: goFieldName and keepGoName agree with
// oapi-codegen on every generated field.
func TestGoFieldNameMatchesGenerated(t *testing.T) {
	for _, file := range []string{"../../storelinkclient/storelink.gen.go", "../../mockstorelink/internal/api/storelink.gen.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		ast.Inspect(f, func(node ast.Node) bool {
			st, ok := node.(*ast.StructType)
			if !ok {
				return true
			}
			for _, fld := range st.Fields.List {
				if fld.Tag == nil || len(fld.Names) != 1 {
					continue
				}
				tag, _ := strconv.Unquote(fld.Tag.Value)
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if name == "" || name == "-" {
					continue
				}
				n++
				goName := fld.Names[0].Name
				if got := goFieldName(name); got != goName {
					t.Errorf("%s: goFieldName(%q) = %s, generated %s", file, name, got, goName)
				}
				if got := goFieldName(keepGoName(name)); got != goName {
					t.Errorf("%s: x-go-name %s would give %s, not %s", file, keepGoName(name), got, goName)
				}
			}
			return true
		})
		if n < 30 {
			t.Fatalf("%s: only %d JSON fields read", file, n)
		}
	}
	for _, cfg := range []string{"../../storelinkclient/oapi-codegen.yaml", "../../mockstorelink/internal/api/oapi-codegen.yaml"} {
		b, err := os.ReadFile(cfg)
		if err != nil {
			t.Fatal(err)
		}
		text := string(b)
		if !strings.Contains(text, "name-normalizer: ToCamelCaseWithInitialisms") {
			t.Errorf("%s: the name normalizer is not the one goFieldName follows", cfg)
		}
		_, list, _ := strings.Cut(text, "additional-initialisms:\n")
		for _, line := range strings.Split(list, "\n") {
			w, ok := strings.CutPrefix(strings.TrimSpace(line), "- ")
			if !ok {
				break
			}
			if goInitialisms[strings.ToLower(w)] != w {
				t.Errorf("%s: initialism %s is not in goInitialisms", cfg, w)
			}
		}
	}
}

func TestKeepGoName(t *testing.T) {
	for in, want := range map[string]string{
		"on_hand_units":  "OnHandUnits",
		"sku":            "SKU",
		"order_id":       "OrderID",
		"pos_total":      "POSTotal",
		"utf8_name":      "UTF8Name",
		"_private":       "UnderscorePrivate",
		"lead_time_days": "LeadTimeDays",
	} {
		if got := keepGoName(in); got != want {
			t.Errorf("keepGoName(%q) = %q, want %q", in, got, want)
		}
		if goFieldName(keepGoName(in)) != goFieldName(in) {
			t.Errorf("x-go-name %s does not give %s's field name", keepGoName(in), in)
		}
	}
}

// TestPropertyOfFollowsARename: a renamed property is found by its
// x-go-name, and a bare $ref sits under allOf.
func TestPropertyOfFollowsARename(t *testing.T) {
	got, err := Suggest(openapi.YAML, []Cause{
		{ID: "a", Kind: FindingRename, Count: 1, Evidence: &Evidence{Component: "Inventory", Property: "on_hand_units", Found: "on_hand", JSONType: "integer"}},
		{ID: "b", Kind: FindingRename, Count: 1, Evidence: &Evidence{Component: "StoreSummary", Property: "timezone", Found: "tz", JSONType: "string"}},
	})
	if err != nil || len(got.Proposals) != 2 {
		t.Fatalf("%v %+v", err, got)
	}
	doc, err := openapi.Parse(got.Patched)
	if err != nil {
		t.Fatal(err)
	}
	inv := propertyOf(doc.Components.Schemas["Inventory"].Value, "on_hand_units")
	if inv == nil || inv.Value.Max == nil || *inv.Value.Max != 1000000 || doc.Components.Schemas["Inventory"].Value.Properties["on_hand"] != inv {
		t.Errorf("Inventory.on_hand_units after the rename: %+v", inv)
	}
	tz := propertyOf(doc.Components.Schemas["StoreSummary"].Value, "timezone")
	if tz == nil || len(tz.Value.AllOf) != 1 || tz.Value.AllOf[0].Ref != "#/components/schemas/Timezone" {
		t.Errorf("StoreSummary.timezone after the rename: %+v", tz)
	}
}

// TestRenameKeepsAnExistingGoName: a second rename keeps the first
// x-go-name.
func TestRenameKeepsAnExistingGoName(t *testing.T) {
	first, err := Suggest(openapi.YAML, []Cause{{ID: "a", Kind: FindingRename, Count: 1,
		Evidence: &Evidence{Component: "Inventory", Property: "on_hand_units", Found: "on_hand", JSONType: "integer"}}})
	if err != nil || len(first.Proposals) != 1 {
		t.Fatalf("%v %+v", err, first)
	}
	second, err := Suggest(first.Patched, []Cause{{ID: "b", Kind: FindingRename, Count: 1,
		Evidence: &Evidence{Component: "Inventory", Property: "on_hand", Found: "on_hand_qty", JSONType: "integer"}}})
	if err != nil || len(second.Proposals) != 1 {
		t.Fatalf("%v %+v", err, second)
	}
	if p := second.Proposals[0].Change; p != "rename Inventory.on_hand to on_hand_qty (Go field OnHandUnits)" {
		t.Errorf("change %q", p)
	}
	patched := string(second.Patched)
	if !strings.Contains(patched, "        on_hand_qty:\n          x-go-name: OnHandUnits\n          type: integer\n") || strings.Count(patched, "x-go-name") != 1 {
		t.Errorf("the second rename:\n%s", second.Diff)
	}
}
