package contract

import (
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/korral/storelink/openapi"
)

// sentinel stands for a value StoreLink sent: it must never reach a patch.
const sentinel = "SENTINEL-7f3a9c"

// withSentinel puts the sentinel wherever a cause may carry a value.
func withSentinel(cs []Cause) []Cause {
	for i := range cs {
		cs[i].Text = "value " + sentinel + " broke the contract"
		cs[i].Examples = []string{"probe " + sentinel}
		if cs[i].Path == "" {
			cs[i].Path = "/" + sentinel
		}
	}
	return cs
}

func TestSuggestReadCauses(t *testing.T) {
	report := `{"summary":{"probes":3},"causes":[{"id":"a","kind":"rename","text":"t","count":2,"operations":["getSupplier"],"evidence":{"component":"Supplier","property":"p","found":"q","json_type":"integer"}}]}`
	pretty := "{\n  \"probes\": [],\n  \"causes\": [\n    {\"id\": \"b\", \"kind\": \"schema\", \"text\": \"t\", \"count\": 1, \"operations\": []}\n  ]\n}\n"
	lines := `{"type":"finding","kind":"schema"}
{"type":"summary","causes":[{"id":"old","kind":"schema","text":"t","count":1,"operations":[]}]}
{"type":"finding","kind":"schema"}
{"type":"summary","causes":[{"id":"new1","kind":"schema","text":"t","count":1,"operations":[]},{"id":"new2","kind":"rule","text":"t","count":1,"operations":[]}]}
`
	for _, tc := range []struct {
		name, in string
		want     []string
		err      string
	}{
		{name: "check report", in: report, want: []string{"a"}},
		{name: "pretty report", in: pretty, want: []string{"b"}},
		{name: "report without drift", in: `{"probes":[{"verdict":"PASS"}]}`, want: nil},
		{name: "proxy lines, last summary", in: lines, want: []string{"new1", "new2"}},
		{name: "proxy summary only", in: `{"type":"summary"}`, want: nil},
		{name: "lines without summary", in: "{\"type\":\"finding\"}\n{\"type\":\"finding\"}\n", err: `"type":"summary"`},
		{name: "object without causes", in: `{"hello":1}`, err: "want a check report"},
		{name: "not JSON", in: "hello\n", err: "want a check report"},
		{name: "empty", in: "", err: "want a check report"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cs, err := ReadCauses(strings.NewReader(tc.in))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, c := range cs {
				ids = append(ids, c.ID)
			}
			if strings.Join(ids, ",") != strings.Join(tc.want, ",") {
				t.Fatalf("ids = %v, want %v", ids, tc.want)
			}
		})
	}
	cs, _ := ReadCauses(strings.NewReader(report))
	if ev := cs[0].Evidence; ev == nil || ev.Found != "q" || ev.JSONType != "integer" || cs[0].Count != 2 {
		t.Fatalf("evidence not decoded: %+v", cs[0])
	}
}

// proposalCase is one cause Suggest turns into one proposal, and the
// proposals of TestSuggestProposals.
type proposalCase struct {
	name   string
	causes []Cause
	change string   // the proposal's change
	in     []string // in the patched spec
	out    []string // no longer in the patched spec
}

var proposalCases = []proposalCase{
	{
		name: "rename",
		causes: []Cause{{ID: "rename:Supplier", Kind: FindingRename, Count: 3, Operations: []string{"getSupplier"},
			Evidence: &Evidence{Component: "Supplier", Property: "minimum_order_units", Found: "min_order_qty", JSONType: "integer"}}},
		change: "rename Supplier.minimum_order_units to min_order_qty (Go field MinimumOrderUnits)",
		in: []string{
			"        # suggested from findings: seen 3 times in getSupplier: renamed? min_order_qty present, minimum_order_units missing; the Go field keeps its name MinimumOrderUnits\n" +
				"        min_order_qty:\n          x-go-name: MinimumOrderUnits\n          type: integer\n          format: int64\n",
			"        min_order_qty: 12\n",
		},
		out: []string{"        minimum_order_units:"},
	},
	{
		name: "rename in required, flow examples and nested examples",
		causes: []Cause{{ID: "rename:DayHours", Kind: FindingRename, Count: 1, Operations: []string{"getStore"},
			Evidence: &Evidence{Component: "DayHours", Property: "closed", Found: "is_closed", JSONType: "boolean"}}},
		change: "rename DayHours.closed to is_closed (Go field Closed)",
		in: []string{
			"      required: [is_closed]\n",
			"        monday: { is_closed: false, opens: \"07:00\", closes: \"22:00\" }\n",
			"          sunday: { is_closed: true }\n",
			"        is_closed: false\n",
		},
		out: []string{"{ closed:", "\n        closed: false\n"},
	},
	{
		name: "rename in an array's example",
		causes: []Cause{{ID: "rename:StoreSummary", Kind: FindingRename, Count: 1, Operations: []string{"listStores"},
			Evidence: &Evidence{Component: "StoreSummary", Property: "timezone", Found: "tz", JSONType: "string"}}},
		change: "rename StoreSummary.timezone to tz (Go field Timezone)",
		in: []string{"      required: [store_id, name, tz]\n", "          - store_id: \"47\"\n            name: \"Praha Smíchov\"\n            # suggested from findings: seen 1 time in listStores: renamed? tz present, timezone missing; the Go field keeps its name Timezone\n            tz: Europe/Prague\n",
			"        tz:\n          x-go-name: Timezone\n          allOf:\n            - $ref: \"#/components/schemas/Timezone\"\n"},
	},
	{
		name: "added property",
		causes: []Cause{{ID: "schema:#/components/schemas/Inventory/additionalProperties:/updated_at", Kind: FindingSchema,
			Schema: "#/components/schemas/Inventory/additionalProperties", Count: 4, Operations: []string{"getInventory"},
			Evidence: &Evidence{Component: "Inventory", Found: "updated_at", JSONType: "string", Format: "date-time"}}},
		change: "add optional property Inventory.updated_at (string, date-time)",
		in: []string{"          example: \"2026-11-28T06:30:00+01:00\"\n" +
			"        # suggested from findings: seen 4 times in getInventory: updated_at present, not declared (string, date-time)\n" +
			"        updated_at:\n          type: string\n          format: date-time\n          description: \"Added from StoreLink's answers; describe it.\"\n      example:\n"},
	},
	{
		name: "added property of mixed type",
		causes: []Cause{{ID: "add:mixed", Kind: FindingSchema, Schema: "#/components/schemas/SKU/additionalProperties",
			Count: 2, Operations: []string{"getSKU"}, Evidence: &Evidence{Component: "SKU", Found: "brand", JSONType: "mixed"}}},
		change: "add optional property SKU.brand (no type)",
		in:     []string{"the type is left out, a reviewer must set it\n        brand:\n          description:"},
	},
	{
		name: "added array property",
		causes: []Cause{{ID: "add:array", Kind: FindingSchema, Schema: "#/components/schemas/SKU/additionalProperties",
			Count: 1, Operations: []string{"getSKU"}, Evidence: &Evidence{Component: "SKU", Found: "barcodes", JSONType: "array"}}},
		change: "add optional property SKU.barcodes (array)",
		in:     []string{"        barcodes:\n          type: array\n          items: {}\n"},
	},
	{
		name: "missing property made optional",
		causes: []Cause{{ID: "schema:#/components/schemas/Inventory/required:/counted_at", Kind: FindingSchema,
			Schema: "#/components/schemas/Inventory/required", Path: "/counted_at", Count: 2, Operations: []string{"getInventory"},
			Evidence: &Evidence{Component: "Inventory", Property: "counted_at"}}},
		change: "make Inventory.counted_at optional",
		// The Go field stays a value (no pointer), so its readers
		// compile unchanged after make generate.
		in: []string{"a reviewer must decide whether it is truly optional\n      required: [store_id, sku, on_hand_units]\n",
			"          x-go-type-skip-optional-pointer: true\n          type: string\n          format: date-time\n"},
	},
	{
		name: "undeclared status with a response component",
		causes: []Cause{{ID: "status:422", Kind: FindingUndeclaredStatus, Count: 2, Operations: []string{"getSKU", "getSupplier"},
			Evidence: &Evidence{Status: 422}}},
		change: "declare 422 on getSKU, getSupplier (Unprocessable)",
		in: []string{"        \"404\":\n          $ref: \"#/components/responses/NotFound\"\n" +
			"        # suggested from findings: seen 2 times in getSKU and getSupplier: StoreLink answered 422, not declared\n" +
			"        \"422\":\n          $ref: \"#/components/responses/Unprocessable\"\n        \"429\":\n"},
	},
	{
		name: "undeclared status without one",
		causes: []Cause{{ID: "status:409", Kind: FindingUndeclaredStatus, Count: 1, Operations: []string{"createReplenishmentOrder"},
			Evidence: &Evidence{Status: 409}}},
		change: "declare 409 on createReplenishmentOrder (inline, with the Error schema)",
		in:     []string{"        \"409\":\n          description: \"Added from StoreLink's answers; describe it.\"\n          content:\n            application/json:\n              schema:\n                $ref: \"#/components/schemas/Error\"\n        \"422\":\n"},
	},
	{
		name: "undeclared success status",
		causes: []Cause{{ID: "status:202", Kind: FindingUndeclaredStatus, Count: 1, Operations: []string{"createReplenishmentOrder"},
			Evidence: &Evidence{Status: 202}}},
		change: "declare 202 on createReplenishmentOrder (inline, no body)",
		in:     []string{"        \"202\":\n          description: \"Added from StoreLink's answers; describe it.\"\n        \"400\":\n"},
	},
	{
		name: "pattern",
		causes: []Cause{{ID: "schema:#/components/schemas/SupplierID/pattern", Kind: FindingSchema,
			Schema: "#/components/schemas/SupplierID/pattern", Count: 5, Operations: []string{"getSKU", "getSupplier"},
			Evidence: &Evidence{Pattern: "^[A-Za-z0-9][A-Za-z0-9-]{0,31}$", Shape: &Shape{Classes: "a-z0-9_", MinLen: 3, MaxLen: 12}}}},
		change: "relax SupplierID's pattern to also accept [a-z0-9_]{3,32}",
		in:     []string{"      pattern: \"^(?:[A-Za-z0-9][A-Za-z0-9-]{0,31}|[a-z0-9_]{3,32})$\"\n"},
		out:    []string{"      pattern: \"^[A-Za-z0-9][A-Za-z0-9-]{0,31}$\"\n"},
	},
	{
		name: "pattern of an inline property",
		causes: []Cause{{ID: "pattern:code", Kind: FindingSchema,
			Schema: "#/components/schemas/ErrorDetail/properties/code/pattern", Count: 1, Operations: []string{"getSKU"},
			Evidence: &Evidence{Component: "ErrorDetail", Property: "code", Pattern: "^[a-z][a-z0-9_]{0,63}$", Shape: &Shape{Classes: "A-Z_.", MinLen: 2, MaxLen: 80}}}},
		change: "relax ErrorDetail.code's pattern to also accept [A-Z._]{2,80}",
		in:     []string{"          pattern: \"^(?:[a-z][a-z0-9_]{0,63}|[A-Z._]{2,80})$\"\n"},
	},
}

func TestSuggestProposals(t *testing.T) {
	for _, tc := range proposalCases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Suggest(openapi.YAML, withSentinel(tc.causes))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Proposals) != 1 || len(got.Notes) != 0 {
				t.Fatalf("proposals %+v, notes %+v; want one proposal", got.Proposals, got.Notes)
			}
			if p := got.Proposals[0]; p.Change != tc.change || p.CauseID != tc.causes[0].ID {
				t.Fatalf("change = %q (cause %s), want %q", p.Change, p.CauseID, tc.change)
			}
			patched := string(got.Patched)
			for _, s := range tc.in {
				if !strings.Contains(patched, s) {
					t.Errorf("patched spec lacks %q", s)
				}
			}
			for _, s := range tc.out {
				if strings.Contains(patched, s) {
					t.Errorf("patched spec still has %q", s)
				}
			}
			checkSuggestion(t, openapi.YAML, got)
		})
	}
}

// checkSuggestion checks the invariants of every suggestion.
func checkSuggestion(t *testing.T, spec []byte, got *Suggestion) {
	t.Helper()
	if _, err := openapi.Parse(got.Patched); err != nil {
		t.Fatalf("the patched spec does not parse: %v", err)
	}
	for _, p := range got.Proposals {
		if !strings.Contains(string(got.Patched), "# suggested from findings: "+p.Evidence) {
			t.Errorf("no comment with the evidence %q", p.Evidence)
		}
		if strings.ContainsAny(p.Change+p.Evidence, "\n\r") {
			t.Errorf("proposal is not one line: %+v", p)
		}
	}
	if strings.Contains(got.Diff, sentinel) || strings.Contains(string(got.Patched), sentinel) {
		t.Fatal("a value of StoreLink's answer is in the patch")
	}
	if !strings.HasPrefix(got.Diff, "--- a/openapi/storelink.yaml\n+++ b/openapi/storelink.yaml\n@@ ") {
		t.Fatalf("diff header: %.120q", got.Diff)
	}
	// Every line the diff takes away is one the change needed: nothing
	// else of the spec changes.
	removed := 0
	for _, l := range strings.Split(got.Diff, "\n") {
		if strings.HasPrefix(l, "-") && !strings.HasPrefix(l, "---") {
			removed++
		}
	}
	if removed > 20 {
		t.Errorf("the diff removes %d lines", removed)
	}
	applyDiff(t, spec, got)
}

// applyDiff applies the diff with patch -p1 and git apply, when they are
// installed, and compares the result with Patched.
func applyDiff(t *testing.T, spec []byte, got *Suggestion) {
	t.Helper()
	for _, tool := range [][]string{{"patch", "-p1", "--quiet", "--input"}, {"git", "apply"}} {
		if _, err := exec.LookPath(tool[0]); err != nil {
			t.Logf("%s not installed: not applied with it", tool[0])
			continue
		}
		dir := t.TempDir()
		if err := os.MkdirAll(filepath.Join(dir, "openapi"), 0o755); err != nil {
			t.Fatal(err)
		}
		file := filepath.Join(dir, "openapi", "storelink.yaml")
		if err := os.WriteFile(file, spec, 0o644); err != nil {
			t.Fatal(err)
		}
		diff := filepath.Join(t.TempDir(), "suggest.diff")
		if err := os.WriteFile(diff, []byte(got.Diff), 0o644); err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(tool[0], append(tool[1:], diff)...)
		cmd.Dir = dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", strings.Join(tool, " "), err, out)
		}
		after, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		if string(after) != string(got.Patched) {
			t.Fatalf("%s gives another spec than Patched", tool[0])
		}
	}
}

func TestSuggestNotes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cause Cause
		why   string
	}{
		{"enum", Cause{ID: "enum", Kind: FindingSchema, Schema: "#/components/schemas/OrderStatus/enum", Evidence: &Evidence{Component: "OrderStatus"}},
			"values are not copied from StoreLink's answers"},
		{"wrong status", Cause{ID: "ws", Kind: FindingStatus, Evidence: &Evidence{Status: 404}}, "the status is declared"},
		{"rule", Cause{ID: "rule", Kind: FindingRule, Rule: "pos.limit"}, "semantic rule pos.limit"},
		{"rule stores.order", Cause{ID: "rule2", Kind: FindingRule, Rule: "stores.order"}, "semantic rule stores.order"},
		{"error in 200", Cause{ID: "e200", Kind: FindingErrorIn200}, "known quirk"},
		{"header", Cause{ID: "h", Kind: FindingHeader}, "header"},
		{"body", Cause{ID: "b", Kind: FindingBody}, "not valid JSON"},
		{"generated", Cause{ID: "g", Kind: FindingGenerated, Rule: "gen.auth.missing"}, "generated case"},
		{"other schema rule", Cause{ID: "max", Kind: FindingSchema, Schema: "#/components/schemas/Inventory/properties/on_hand_units/maximum"}, "StoreLink's documentation"},
		{"assumption", Cause{ID: "as", Kind: FindingRename, Assumption: true,
			Evidence: &Evidence{Component: "Supplier", Property: "name", Found: "title", JSONType: "string"}}, "assumption"},
		{"rename without evidence", Cause{ID: "rn", Kind: FindingRename}, "nothing to build a change from"},
		{"name that is not a property name", Cause{ID: "odd", Kind: FindingSchema, Schema: "#/components/schemas/SKU/additionalProperties",
			Evidence: &Evidence{Component: "SKU", Found: "has space " + sentinel, JSONType: "string"}}, "not a plain property name"},
		{"class that could spell a value", Cause{ID: "cls", Kind: FindingSchema, Schema: "#/components/schemas/SupplierID/pattern",
			Evidence: &Evidence{Shape: &Shape{Classes: "SENTINEL", MinLen: 1, MaxLen: 8}}}, "not plain classes"},
		{"pattern already changed", Cause{ID: "pc", Kind: FindingSchema, Schema: "#/components/schemas/SupplierID/pattern",
			Evidence: &Evidence{Pattern: "^x$", Shape: &Shape{Classes: "a-z", MinLen: 1, MaxLen: 8}}}, "no longer the one"},
		{"status already declared", Cause{ID: "sd", Kind: FindingUndeclaredStatus, Operations: []string{"getSKU"}, Evidence: &Evidence{Status: 404}}, "already declared"},
		{"unknown component", Cause{ID: "uc", Kind: FindingRename, Evidence: &Evidence{Component: "Nope", Property: "a", Found: "b"}}, "no schema component Nope"},
		{"not required", Cause{ID: "nr", Kind: FindingSchema, Schema: "#/components/schemas/SKU/required", Path: "/shelf_life_days"}, "does not require"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Suggest(openapi.YAML, withSentinel([]Cause{tc.cause}))
			if err != nil {
				t.Fatal(err)
			}
			if len(got.Proposals) != 0 || len(got.Notes) != 1 {
				t.Fatalf("proposals %+v, notes %+v; want one note", got.Proposals, got.Notes)
			}
			if n := got.Notes[0]; n.CauseID != tc.cause.ID || !strings.Contains(n.Why, tc.why) || strings.Contains(n.Why, sentinel) {
				t.Fatalf("note %+v, want one containing %q", n, tc.why)
			}
			if got.Diff != "" || string(got.Patched) != string(openapi.YAML) {
				t.Fatal("a note changed the spec")
			}
		})
	}
}

// TestSuggestMany proposes several changes at once, in the causes' order,
// and leaves the halves of a rename as notes.
func TestSuggestMany(t *testing.T) {
	causes := withSentinel([]Cause{
		{ID: "r", Kind: FindingRename, Count: 3, Operations: []string{"getSupplier"},
			Evidence: &Evidence{Component: "Supplier", Property: "minimum_order_units", Found: "min_order_qty", JSONType: "integer"}},
		{ID: "r-required", Kind: FindingSchema, Schema: "#/components/schemas/Supplier/required", Path: "/lead_time_days", Count: 3,
			Evidence: &Evidence{Component: "Supplier", Property: "minimum_order_units"}},
		{ID: "r-added", Kind: FindingSchema, Schema: "#/components/schemas/Supplier/additionalProperties", Count: 3,
			Evidence: &Evidence{Component: "Supplier", Found: "min_order_qty", JSONType: "integer"}},
		{ID: "enum", Kind: FindingSchema, Schema: "#/components/schemas/OrderStatus/enum"},
		{ID: "add", Kind: FindingSchema, Schema: "#/components/schemas/Supplier/additionalProperties", Count: 1, Operations: []string{"getSupplier"},
			Evidence: &Evidence{Component: "Supplier", Found: "currency", JSONType: "string"}},
		{ID: "status", Kind: FindingUndeclaredStatus, Count: 1, Operations: []string{"getSupplier"}, Evidence: &Evidence{Status: 422}},
		{ID: "pattern", Kind: FindingSchema, Schema: "#/components/schemas/SupplierID/pattern", Count: 1, Operations: []string{"getSupplier"},
			Evidence: &Evidence{Pattern: "^[A-Za-z0-9][A-Za-z0-9-]{0,31}$", Shape: &Shape{Classes: "a-z_", MinLen: 2, MaxLen: 40}}},
	})
	got, err := Suggest(openapi.YAML, causes)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, p := range got.Proposals {
		ids = append(ids, p.CauseID)
	}
	if strings.Join(ids, ",") != "r,add,status,pattern" {
		t.Fatalf("proposals of %v", ids)
	}
	var notes []string
	for _, n := range got.Notes {
		notes = append(notes, n.CauseID+": "+n.Why)
	}
	want := "r-required: part of the rename r|r-added: part of the rename r|enum: values are not copied"
	if !strings.HasPrefix(strings.Join(notes, "|"), want) {
		t.Fatalf("notes %q, want them to start %q", notes, want)
	}
	if !regexp.MustCompile(`(?m)^@@ -\d+,\d+ \+\d+,\d+ @@$`).MatchString(got.Diff) {
		t.Fatal("no hunk header in the diff")
	}
	checkSuggestion(t, openapi.YAML, got)
}

// TestSuggestBlockStyle edits a small contract whose required list is a
// block sequence, and changes a renamed property's type.
func TestSuggestBlockStyle(t *testing.T) {
	spec := `openapi: 3.0.3
info:
  title: t
  version: "1"
paths:
  /things:
    get:
      operationId: getThing
      responses:
        "200":
          description: A thing.
          content:
            application/json:
              schema:
                $ref: "#/components/schemas/Thing"
components:
  schemas:
    Thing:
      type: object
      additionalProperties: false
      required:
        - id
        - count
        - label
      properties:
        id:
          type: string
        count:
          type: integer
          format: int64
          minimum: 0
          example: 3
        label:
          type: string
    Other:
      type: object
      required:
        - only
      properties:
        only:
          type: string`
	got, err := Suggest([]byte(spec), withSentinel([]Cause{
		{ID: "ren", Kind: FindingRename, Count: 2, Operations: []string{"getThing"},
			Evidence: &Evidence{Component: "Thing", Property: "count", Found: "item_count", JSONType: "integer"}},
		{ID: "opt", Kind: FindingSchema, Schema: "#/components/schemas/Thing/required", Path: "/label", Count: 1},
		{ID: "only", Kind: FindingSchema, Schema: "#/components/schemas/Other/required", Path: "/only", Count: 1},
	}))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Proposals) != 3 {
		t.Fatalf("proposals %+v, notes %+v", got.Proposals, got.Notes)
	}
	if got.Proposals[0].Change != "rename Thing.count to item_count (Go field Count)" {
		t.Fatalf("change %q", got.Proposals[0].Change)
	}
	patched := string(got.Patched)
	for _, s := range []string{
		"      required:\n        - id\n        # suggested from findings: seen 2 times in getThing: renamed? item_count present, count missing; the Go field keeps its name Count\n        - item_count\n",
		"      # suggested from findings: seen 1 time: label missing; a reviewer must decide whether it is truly optional\n      required:\n",
		"        # suggested from findings: seen 2 times in getThing: renamed? item_count present, count missing; the Go field keeps its name Count\n        item_count:\n          x-go-name: Count\n          type: integer\n          format: int64\n          minimum: 0\n          example: 3\n        label:",
		"    Other:\n      type: object\n      # suggested from findings: seen 1 time: only missing; a reviewer must decide whether it is truly optional\n      properties:\n",
	} {
		if !strings.Contains(patched, s) {
			t.Errorf("patched spec lacks %q:\n%s", s, patched)
		}
	}
	if strings.Contains(patched, "- label") {
		t.Errorf("label still required:\n%s", patched)
	}
	if !strings.HasSuffix(got.Diff, "\\ No newline at end of file\n") {
		t.Errorf("the diff does not mark the missing newline:\n%s", got.Diff)
	}
	checkSuggestion(t, []byte(spec), got)
}

func TestSuggestSafeClass(t *testing.T) {
	for in, want := range map[string]string{
		"a-z0-9_":                      "a-z0-9_",
		shapeOf("Ab-1.x +").Classes:    "a-zA-Z0-9 +.-",
		"a-z\\]\"'":                    "a-z\"'\\]",
		shapeOf("a\\b\nc\té€").Classes: `a-z\p{L}\x{80}-\x{10FFFF}\t\n\\`,
		`\n\p{L}\x{00}-\x{1F}`:         `\p{L}\n\x{00}-\x{1F}`,
		`\p{Lu}`:                       "",
		`\x{41}`:                       "",
		"SENTINEL":                     "",
		"a-f":                          "",
		"é":                            "",
	} {
		got, ok := safeClass(in)
		if got != want || ok != (want != "") {
			t.Errorf("safeClass(%q) = %q, %v; want %q", in, got, ok, want)
		}
		if ok {
			if _, err := regexp.Compile("^[" + got + "]{1,3}$"); err != nil {
				t.Errorf("class %q does not compile: %v", got, err)
			}
		}
	}
}

// TestSuggestWidenedPatternTakesTheValues: a pattern widened to a merged
// shape of awkward values matches each of them in kin-openapi.
func TestSuggestWidenedPatternTakesTheValues(t *testing.T) {
	for _, values := range [][]string{
		{`sup\7`, `SUP-1`},
		{"line one\nline two", "x"},
		{"tab\there", "cr\r\n"},
		{"Královo Pole", "€uro ٣"},
		{`a"b'c]d[e^f-g\h`, "."},
	} {
		doc, err := openapi.Parse(openapi.YAML)
		if err != nil {
			t.Fatal(err)
		}
		before := doc.Components.Schemas["SupplierID"].Value
		ev := &Evidence{Pattern: before.Pattern, Shape: shapeOf(values[0])}
		ev = mergeEvidence(ev, &Evidence{Shape: shapeOf(values[1])})
		rejected := 0
		for _, v := range values {
			if before.VisitJSON(v) != nil {
				rejected++
			}
		}
		if rejected == 0 {
			t.Fatalf("%q: the contract takes them already", values)
		}
		got, err := Suggest(openapi.YAML, withSentinel([]Cause{{ID: "p", Kind: FindingSchema,
			Schema: "#/components/schemas/SupplierID/pattern", Count: 2, Operations: []string{"getSupplier"}, Evidence: ev}}))
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Proposals) != 1 {
			t.Fatalf("%q: proposals %+v, notes %+v", values, got.Proposals, got.Notes)
		}
		patched, err := openapi.Parse(got.Patched)
		if err != nil {
			t.Fatal(err)
		}
		after := patched.Components.Schemas["SupplierID"].Value
		for _, v := range values {
			if err := after.VisitJSON(v); err != nil {
				t.Errorf("the widened pattern %q refuses %q: %v", after.Pattern, v, err)
			}
		}
		// The old values still pass.
		if err := after.VisitJSON("SUP-MADETA"); err != nil {
			t.Errorf("the widened pattern refuses the contract's own example: %v", err)
		}
		checkSuggestion(t, openapi.YAML, got)
	}
}

// TestSuggestWidensToEveryItem: a widened pattern takes every array item,
// not only the first.
func TestSuggestWidensToEveryItem(t *testing.T) {
	sp := mustSpec(t)
	body := `{"stores":[{"store_id":"st_1","name":"A","timezone":"Europe/Prague"},{"store_id":"ST-22\\x","name":"B","timezone":"Europe/Prague"}]}`
	p := &probe{op: opListStores, name: "valid key", expect: []int{200}}
	v, _, fs := sp.judge(t.Context(), p, get("/v1/stores", nil, keyOwn, "47"), nil, judgeNow, 200,
		http.Header{"Content-Type": {"application/json"}}, []byte(body))
	causes := causesOf([]Result{{Operation: opListStores, Probe: "valid key", Verdict: v, Findings: fs}})
	var pattern []Cause
	for _, c := range causes {
		if strings.HasSuffix(c.Schema, "/pattern") {
			pattern = append(pattern, c)
		}
	}
	if len(pattern) != 1 || pattern[0].Count != 2 {
		t.Fatalf("pattern causes %+v", pattern)
	}
	got, err := Suggest(openapi.YAML, pattern)
	if err != nil || len(got.Proposals) != 1 {
		t.Fatalf("%v %+v", err, got)
	}
	doc, err := openapi.Parse(got.Patched)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"st_1", `ST-22\x`, "47"} {
		if err := doc.Components.Schemas["StoreID"].Value.VisitJSON(id); err != nil {
			t.Errorf("the widened pattern refuses %q: %v", id, err)
		}
	}
}
