package tools

import (
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// fastArgsTool is one tool's argument checker, built from an input schema
// of schemas.gen.go (the schemas newArgChecker resolves:
// TestGeneratedSchemasAreCurrent), for the tests of the fast path.
type fastArgsTool struct {
	name string
	// planned is set when the schema has a fast path.
	planned bool
	// compare decodes raw by the fast path, by decodeArgs and by the
	// checker; it reports whether the fast path accepted, and an error when
	// the fast path accepted what decodeArgs refuses or decoded another In,
	// or when the checker's answer is not decodeArgs'.
	compare func(raw []byte) (fast bool, err error)
	// accepted is compare for the fuzz target: decodeArgs runs only when
	// the fast path accepts (when it declines, the checker is decodeArgs).
	accepted func(raw []byte) error
	// allocs is the allocations of one decode by the checker and by
	// decodeArgs alone.
	allocs func(raw []byte) (checker, slow float64)
}

func fastArgsToolFor[In any](tb testing.TB, name, schema string) fastArgsTool {
	tb.Helper()
	var in jsonschema.Schema
	if err := json.Unmarshal([]byte(schema), &in); err != nil {
		tb.Fatal(err)
	}
	c, err := newArgCheckerFor[In](&in)
	if err != nil {
		tb.Fatal(err)
	}
	accepted := func(raw []byte) error {
		if !acceptedBy(c, raw) {
			return nil
		}
		fast, _ := c.fast.decode(raw)
		slow, serr := decodeArgs[In](raw, c.resolved, c.allowed)
		if serr != nil {
			return fmt.Errorf("fast path accepted what decodeArgs refuses (%s)", serr.Message)
		}
		if !reflect.DeepEqual(fast, slow) {
			return fmt.Errorf("fast path decoded %#v, decodeArgs %#v", fast, slow)
		}
		return nil
	}
	t := fastArgsTool{name: name, planned: c.fast != nil, accepted: accepted}
	t.compare = func(raw []byte) (bool, error) {
		slow, serr := decodeArgs[In](raw, c.resolved, c.allowed)
		got, gerr := c.decode(raw)
		if !reflect.DeepEqual(got, slow) || !reflect.DeepEqual(gerr, serr) {
			return false, fmt.Errorf("checker gives %#v, %v; decodeArgs %#v, %v", got, gerr, slow, serr)
		}
		if err := accepted(raw); err != nil {
			return true, err
		}
		return acceptedBy(c, raw), nil
	}
	t.allocs = func(raw []byte) (float64, float64) {
		return testing.AllocsPerRun(100, func() { _, _ = c.decode(raw) }),
			testing.AllocsPerRun(100, func() { _, _ = decodeArgs[In](raw, c.resolved, c.allowed) })
	}
	return t
}

// acceptedBy reports whether c's fast path accepts raw.
func acceptedBy[In any](c *argChecker[In], raw []byte) bool {
	if c.fast == nil {
		return false
	}
	_, ok := c.fast.decode(raw)
	return ok
}

// fastArgsTools are the checkers of every distinct input schema in
// schemas.gen.go.
func fastArgsTools(tb testing.TB) []fastArgsTool {
	tb.Helper()
	keys := make([]string, 0, len(generatedSchemas))
	for k := range generatedSchemas {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	seen := map[string]bool{}
	var tools []fastArgsTool
	for _, k := range keys {
		schema := generatedSchemas[k][0]
		if seen[schema] {
			continue
		}
		seen[schema] = true
		switch name, _, _ := strings.Cut(k, " "); name {
		case "korral_check_stock_risk":
			tools = append(tools, fastArgsToolFor[stockRiskIn](tb, k, schema))
		case "korral_list_authorized_stores":
			tools = append(tools, fastArgsToolFor[listStoresIn](tb, k, schema))
		case "korral_list_recent_sales":
			tools = append(tools, fastArgsToolFor[listSalesIn](tb, k, schema))
		case "korral_get_order_status":
			tools = append(tools, fastArgsToolFor[orderStatusIn](tb, k, schema))
		case "korral_raise_replenishment_order":
			tools = append(tools, fastArgsToolFor[raiseIn](tb, k, schema))
		default:
			tb.Fatalf("no In type for %s: add it here", name)
		}
	}
	return tools
}

// typicalArgs are arguments as models and the tests send them, by tool;
// each must take the fast path.
var typicalArgs = map[string][]string{
	"korral_check_stock_risk": {
		`{"sku":"8847291","store_id":"47"}`, `{"store_id":"47","sku":"8847291"}`, `{"sku":"8847291"}`,
		`{"sku":"8847291","store_ids":["47","102"]}`, `{"sku":"8847291","store_ids":["all"]}`,
		`{"sku":"8847291","store_id":"47","lookback_days":28}`, `{ "sku": "8847291", "store_id": "47" }`,
	},
	"korral_list_authorized_stores": {`{}`, `{"after_store_id":"50"}`, ``, `null`},
	"korral_list_recent_sales": {
		`{"sku":"8847291","store_id":"47"}`, `{"sku":"8847291","limit":5}`, `{"sku":"8847291","since":"2026-11-01T00:00:00+01:00"}`,
	},
	"korral_get_order_status": {`{"order_id":"RO-47-000001"}`, `{"order_id":"RO-47-000001","store_id":"47"}`},
	"korral_raise_replenishment_order": {
		`{"sku":"8847291","quantity_units":24,"reason":"Butter low before the weekend"}`,
		`{"sku":"8847291","store_id":"47","quantity_units":24,"reason":"Sells out before close","confirm":true,"idempotency_key":"agent:2026-11-27:butter-47"}`,
		`{"sku":"8847291","quantity_units":12,"reason":"Crème fraîche for the weekend","confirm":false}`,
	},
}

// TestEveryToolTakesTheFastPath: every tool has a plan, and its usual
// arguments take it, so the fast path cannot silently become the slow one.
func TestEveryToolTakesTheFastPath(t *testing.T) {
	for _, tool := range fastArgsTools(t) {
		if !tool.planned {
			t.Errorf("%s: no fast path", tool.name)
			continue
		}
		name, _, _ := strings.Cut(tool.name, " ")
		if len(typicalArgs[name]) == 0 {
			t.Errorf("%s: no typical arguments", name)
		}
		for _, raw := range typicalArgs[name] {
			fast, err := tool.compare([]byte(raw))
			if err != nil {
				t.Errorf("%s %s: %v", tool.name, raw, err)
			} else if !fast {
				t.Errorf("%s %s: took the schema walk", tool.name, raw)
			}
		}
	}
}

// TestFastArgsAllocations holds the fast path's allocations: the risk
// check's usual arguments allocate In (reflect fills it), the arguments'
// text and nothing else, where decodeArgs allocates about a hundred times.
func TestFastArgsAllocations(t *testing.T) {
	if fastArgsRace {
		t.Skip("the race detector allocates on its own account")
	}
	for _, tool := range fastArgsTools(t) {
		if !strings.HasPrefix(tool.name, "korral_check_stock_risk ") {
			continue
		}
		for _, raw := range []string{`{"sku":"8847291","store_id":"47"}`, `{"sku":"8847291","store_ids":["47"]}`} {
			got, slow := tool.allocs([]byte(raw))
			t.Logf("%s: %.0f allocations by the checker, %.0f by decodeArgs", raw, got, slow)
			if want := 3.0; got > want {
				t.Errorf("%s: %.0f allocations by the checker, want at most %.0f", raw, got, want)
			}
		}
		return
	}
	t.Fatal("no korral_check_stock_risk schema")
}

// TestFastArgsAgreeWithTheSchemaWalk runs every case against every tool:
// whenever the fast path accepts, decodeArgs accepts with the same In, and
// the checker's answer is always decodeArgs'. Some cases must take the
// fast path, so a rule that turns too strict shows too.
func TestFastArgsAgreeWithTheSchemaWalk(t *testing.T) {
	tools := fastArgsTools(t)
	for _, raw := range fastArgsCases() {
		for _, tool := range tools {
			if _, err := tool.compare([]byte(raw)); err != nil {
				t.Errorf("%s %q: %v", tool.name, raw, err)
			}
		}
	}
	mustFast := map[string]string{
		`{"sku":"8847291","lookback_days":1}`:                                                "korral_check_stock_risk",
		`{"sku":"8847291","lookback_days":28}`:                                               "korral_check_stock_risk",
		`{"sku":"88472910000000","store_ids":["1","22","333","all"]}`:                        "korral_check_stock_risk",
		`{"sku":"8847291","limit":500}`:                                                      "korral_list_recent_sales",
		`{"sku":"8847291","quantity_units":500,"reason":"` + strings.Repeat("é", 500) + `"}`: "korral_raise_replenishment_order",
		`{"sku":"8847291","quantity_units":1,"reason":"r","confirm":false}`:                  "korral_raise_replenishment_order",
		`{"order_id":"` + strings.Repeat("a", 64) + `"}`:                                     "korral_get_order_status",
	}
	for raw, name := range mustFast {
		for _, tool := range tools {
			if !strings.HasPrefix(tool.name, name+" ") {
				continue
			}
			if fast, err := tool.compare([]byte(raw)); err != nil || !fast {
				t.Errorf("%s %q: fast path %t, %v", tool.name, raw, fast, err)
			}
		}
	}
}

// TestNoPlanForWhatThePlanDoesNotImplement: a keyword or a field shape
// outside the plan leaves the tool on decodeArgs alone.
func TestNoPlanForWhatThePlanDoesNotImplement(t *testing.T) {
	type in struct {
		SKU  string `json:"sku"`
		Days int    `json:"days,omitempty"`
	}
	base := func() *jsonschema.Schema {
		return &jsonschema.Schema{Type: "object", Required: []string{"sku"}, AdditionalProperties: &jsonschema.Schema{Not: &jsonschema.Schema{}},
			Properties: map[string]*jsonschema.Schema{"sku": {Type: "string"}, "days": {Type: "integer", Minimum: ptr(1.0)}}}
	}
	if newArgPlan[in](base()) == nil {
		t.Fatal("no plan for a schema of implemented keywords")
	}
	for name, mutate := range map[string]func(s *jsonschema.Schema){
		"enum":             func(s *jsonschema.Schema) { s.Properties["sku"].Enum = []any{"1"} },
		"exclusiveMinimum": func(s *jsonschema.Schema) { s.Properties["days"].ExclusiveMinimum = ptr(0.0) },
		"const":            func(s *jsonschema.Schema) { s.Properties["sku"].Const = ptr[any]("1") },
		"number type":      func(s *jsonschema.Schema) { s.Properties["days"].Type = "number" },
		"no field":         func(s *jsonschema.Schema) { s.Properties["other"] = &jsonschema.Schema{Type: "string"} },
		"open object":      func(s *jsonschema.Schema) { s.AdditionalProperties = &jsonschema.Schema{} },
		"root oneOf":       func(s *jsonschema.Schema) { s.OneOf = []*jsonschema.Schema{{}} },
	} {
		s := base()
		mutate(s)
		if newArgPlan[in](s) != nil {
			t.Errorf("%s: planned", name)
		}
	}
	type embedded struct{ in }
	if newArgPlan[embedded](base()) != nil {
		t.Error("planned a struct with an embedded field")
	}
}

// fastArgsCases are the arguments of the existing tests (valid and not)
// and the JSON oddities the fast path must leave to decodeArgs.
func fastArgsCases() []string {
	ids := func(n int) string {
		s := make([]string, n)
		for i := range s {
			s[i] = fmt.Sprintf(`"%d"`, i+1)
		}
		return `{"sku":"8847291","store_ids":[` + strings.Join(s, ",") + `]}`
	}
	cases := []string{
		``, `null`, ` null `, `nul`, `nullx`, `{}`, ` { } `, `[]`, `[1]`, `"x"`, `{`, `}`, `{"sku"}`, `{"sku":}`, "\ufeff{}",
		`{"sku":"8847291"}`, `{"sku":"8847291","store_id":"47"}`, `{"store_id":"47","sku":"8847291"}`,
		`{"sku":"8847291","store_id":"55"}`, `{"store_id":"999","sku":"8847291"}`, `{"sku":"butter"}`, `{"sku":"884"}`,
		`{"sku":"12345678901234"}`, `{"sku":"123456789012345"}`, `{"sku":""}`, `{"sku":8847291}`, `{"sku":null}`, `{"sku":true}`,
		`{"sku":"8847291","store":"47"}`, `{"SKU":"8847291"}`, `{"Sku":"8847291","sku":"8847291"}`, `{"sku":"8847291","sku":"8847292"}`,
		`{"sku":"8847291","sku":"butter"}`, `{"sku":"88\u00347291"}`, `{"sku":"8847291\n"}`, "{\"sku\":\"8847291\x01\"}",
		`{"sku":"8847291",}`, `{,"sku":"8847291"}`, `{"sku" : "8847291" }`, "\t{\n\"sku\"\r:\"8847291\"}\n", `{"sku":"8847291"} x`,
		`{"sku":"8847291"}{}`, `{"sku":"8847291"`, `{"sku":"8847291}`, `{"s\u006bu":"8847291"}`, "{\"sku\":\"8847291\"}\v",
		`{"sku":"8847291","store_ids":["47","102"]}`, `{"sku":"8847291","store_ids":["102","55","47"]}`, `{"sku":"8847291","store_ids":["all"]}`,
		`{"sku":"8847291","store_ids":["all","47"]}`, `{"sku":"8847291","store_ids":[]}`, `{"sku":"8847291","store_ids":["47","47"]}`,
		`{"sku":"8847291","store_ids":null}`, `{"sku":"8847291","store_ids":[47]}`, `{"sku":"8847291","store_ids":["1234567"]}`,
		`{"sku":"8847291","store_ids":"47"}`, `{"sku":"8847291","store_ids":["47",]}`, `{"sku":"8847291","store_ids":[,"47"]}`,
		`{"sku":"8847291","store_ids":["47" "102"]}`, `{"sku":"8847291","store_ids":[ "47" , "102" ]}`, `{"sku":"8847291","store_ids":["al\u006c"]}`,
		`{"sku":"8847291","store_id":"47","store_ids":["47"]}`, ids(19), ids(20), ids(21), ids(64), ids(65),
		`{"sku":"8847291","lookback_days":1}`, `{"sku":"8847291","lookback_days":28}`, `{"sku":"8847291","lookback_days":29}`,
		`{"sku":"8847291","lookback_days":0}`, `{"sku":"8847291","lookback_days":-1}`, `{"sku":"8847291","lookback_days":-0}`,
		`{"sku":"8847291","lookback_days":40}`, `{"sku":"8847291","lookback_days":14.0}`, `{"sku":"8847291","lookback_days":1e1}`,
		`{"sku":"8847291","lookback_days":"14"}`, `{"sku":"8847291","lookback_days":014}`, `{"sku":"8847291","lookback_days":- 1}`,
		`{"sku":"8847291","lookback_days":1.}`, `{"sku":"8847291","lookback_days":14E0}`, `{"sku":"8847291","lookback_days":null}`,
		`{"sku":"8847291","lookback_days":123456789012345}`, `{"sku":"8847291","lookback_days":1234567890123456}`,
		`{"sku":"8847291","limit":1}`, `{"sku":"8847291","limit":3}`, `{"sku":"8847291","limit":500}`, `{"sku":"8847291","limit":501}`,
		`{"sku":"8847291","limit":0}`, `{"sku":"8847291","since":"2026-11-01T00:00:00+01:00"}`, `{"sku":"8847291","since":"yesterday"}`,
		`{"sku":"8847291","since":""}`, `{"after_store_id":"50"}`, `{"after_store_id":"abc"}`, `{"after_store_id":""}`, `{"after_store_id":null}`,
		`{"order_id":"RO-47-000001"}`, `{"order_id":"RO-47-000001","store_id":"102"}`, `{"order_id":"../../etc"}`, `{"order_id":"rpl 9f"}`,
		`{"order_id":"agent:2026-11-27:butter-102","store_id":"47"}`, `{"order_id":"RO-none","store_id":"55"}`,
		`{"order_id":"` + strings.Repeat("a", 64) + `"}`, `{"order_id":"` + strings.Repeat("a", 65) + `"}`,
		`{"order_id":"` + strings.Repeat("a", 128) + `"}`, `{"order_id":"` + strings.Repeat("a", 129) + `"}`,
		`{"sku":"8847291","quantity_units":12,"reason":"restock"}`, `{"sku":"8847291","quantity_units":24,"reason":"Butter low before the weekend"}`,
		`{"sku":"8847291","store_id":"47","quantity_units":24,"reason":"Sells out before close","confirm":true,"idempotency_key":"agent:2026-11-27:butter-47"}`,
		`{"sku":"8847291","quantity_units":1,"reason":"r"}`, `{"sku":"8847291","quantity_units":500,"reason":"r"}`,
		`{"sku":"8847291","quantity_units":501,"reason":"r"}`, `{"sku":"8847291","quantity_units":0,"reason":"r"}`,
		`{"sku":"8847291","quantity_units":"24","reason":"r"}`, `{"sku":"8847291","quantity_units":24}`, `{"sku":"8847291","reason":"r"}`,
		`{"sku":"8847291","quantity_units":24,"reason":""}`, `{"sku":"8847291","quantity_units":24,"reason":" "}`,
		`{"sku":"8847291","quantity_units":24,"reason":"\t"}`, "{\"sku\":\"8847291\",\"quantity_units\":24,\"reason\":\"\u00a0\"}",
		`{"sku":"8847291","quantity_units":24,"reason":"` + strings.Repeat("x", 500) + `"}`,
		`{"sku":"8847291","quantity_units":24,"reason":"` + strings.Repeat("x", 501) + `"}`,
		`{"sku":"8847291","quantity_units":24,"reason":"` + strings.Repeat("é", 501) + `"}`,
		"{\"sku\":\"8847291\",\"quantity_units\":24,\"reason\":\"bad \xff byte\"}", `{"sku":"8847291","quantity_units":24,"reason":"say \"now\""}`,
		`{"sku":"8847291","quantity_units":24,"reason":"r","confirm":true}`, `{"sku":"8847291","quantity_units":24,"reason":"r","confirm":"true"}`,
		`{"sku":"8847291","quantity_units":24,"reason":"r","confirm":null}`, `{"sku":"8847291","quantity_units":24,"reason":"r","confirm":truex}`,
		`{"sku":"8847291","quantity_units":24,"reason":"r","confirm":tru}`, `{"sku":"8847291","quantity_units":24,"reason":"r","idempotency_key":"short"}`,
		`{"sku":"8847291","quantity_units":24,"reason":"r","idempotency_key":"agent:2026-11-27:butter-47"}`,
		`{"sku":"8847291","quantity_units":24,"reason":"r","verbose":true}`, `{"z":1,"a":[true,null]}`, `{"a":1}`, `{"sku":{"a":1}}`,
	}
	for _, byTool := range typicalArgs {
		cases = append(cases, byTool...)
	}
	return cases
}

// FuzzFastArgs: whatever the input, for every tool, the fast path accepts
// only what decodeArgs accepts, with the same In. Seeded with
// fastArgsCases.
// Run: go test ./internal/tools -run '^$' -fuzz FuzzFastArgs -fuzztime 120s
func FuzzFastArgs(f *testing.F) {
	for _, raw := range fastArgsCases() {
		f.Add([]byte(raw))
	}
	tools := fastArgsTools(f)
	f.Fuzz(func(t *testing.T, raw []byte) {
		for _, tool := range tools {
			if err := tool.accepted(raw); err != nil {
				t.Errorf("%s %q: %v", tool.name, raw, err)
			}
		}
	})
}

// BenchmarkArgsDecode is the argument check of the risk check's usual
// arguments: by the checker (the fast path) and by decodeArgs alone (the
// schema walk).
func BenchmarkArgsDecode(b *testing.B) {
	var in jsonschema.Schema
	if err := json.Unmarshal([]byte(generatedSchemas["korral_check_stock_risk demo=false writes=false ceiling=0 lookback=14"][0]), &in); err != nil {
		b.Fatal(err)
	}
	c, err := newArgCheckerFor[stockRiskIn](&in)
	if err != nil {
		b.Fatal(err)
	}
	for _, raw := range []string{`{"sku":"8847291","store_id":"47"}`, `{"sku":"8847291","store_ids":["47"]}`} {
		b.Run("checker "+raw, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.decode([]byte(raw)); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("decodeArgs "+raw, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := decodeArgs[stockRiskIn]([]byte(raw), c.resolved, c.allowed); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
