package contract

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/storelinkclient/rules"
)

// exampleRequest is the request a rule's example answers, as the check
// would send it.
func exampleRequest(t *testing.T, op string, q rules.Query) (request, []byte) {
	t.Helper()
	store := "/v1/stores/" + q.StoreID
	var req request
	var body []byte
	switch op {
	case opListStores:
		req = get("/v1/stores", nil, keyOwn, "47")
	case opGetStore:
		req = get(store, nil, keyOwn, q.StoreID)
	case opGetInventory:
		req = get(store+"/inventory", url.Values{"sku": {q.SKU}}, keyOwn, q.StoreID)
	case opListPOS:
		v := url.Values{"sku": {q.SKU}, "since": {q.Since.Format(time.RFC3339)}}
		if q.Cursor != "" {
			v.Set("cursor", q.Cursor)
		}
		req = get(store+"/pos", v, keyOwn, q.StoreID)
		req.walk = q.Walk
	case opGetSKU:
		req = get("/v1/skus/"+q.SKU, nil, keyOwn, "47")
	case opGetSupplier:
		req = get("/v1/suppliers/"+q.SupplierID, nil, keyOwn, "47")
	case opGetOrder:
		req = get(store+"/replenishment/"+q.OrderID, nil, keyOwn, q.StoreID)
		req.raised = q.Raised
	case opCreateOrder:
		req = request{method: http.MethodPost, path: store + "/replenishment", key: keyOwn, store: q.StoreID}
		var err error
		if body, err = json.Marshal(q.Raised); err != nil {
			t.Fatal(err)
		}
	default:
		t.Fatalf("no request for %s", op)
	}
	return req, body
}

func successStatus(op string) int {
	if op == opCreateOrder {
		return http.StatusCreated
	}
	return http.StatusOK
}

// TestEveryRuleExampleIsAFindingOfTheJudge: each rule's violating example
// drifts with that rule at its field; the good answers pass. Its twin is
// TestEveryRuleIsAContractError in mcpserver/internal/upstream.
func TestEveryRuleExampleIsAFindingOfTheJudge(t *testing.T) {
	sp := mustSpec(t)
	jsonCT := http.Header{"Content-Type": {"application/json"}}
	covered := map[string]bool{}
	for _, ex := range rules.Examples() {
		t.Run(ex.Rule+"/"+ex.Operation, func(t *testing.T) {
			req, reqBody := exampleRequest(t, ex.Operation, ex.Query)
			p := &probe{op: ex.Operation, name: "example", expect: []int{successStatus(ex.Operation)}, positive: true}
			if fs := sp.validateRequest(context.Background(), ex.Operation, req, reqBody); fs != nil {
				t.Fatalf("the example's request breaks the contract: %v", fs)
			}
			verdict, _, fs := sp.judge(context.Background(), p, req, reqBody, ex.Query.Now, successStatus(ex.Operation), jsonCT, ex.Bad())
			var got []string
			for _, f := range fs {
				if f.Kind == FindingRule {
					got = append(got, f.Rule+" at "+f.Path)
					if f.Schema != sp.ops[ex.Operation].rulesLocation() {
						t.Errorf("finding names %s, want the operation's x-korral-rules", f.Schema)
					}
				}
			}
			if verdict != Drift || !slices.Equal(got, []string{ex.Rule + " at " + ex.Field}) {
				t.Fatalf("verdict %s, rule findings %v; want drift with %s at %s\nall findings: %+v", verdict, got, ex.Rule, ex.Field, fs)
			}
			covered[ex.Rule] = true
		})
	}
	for _, r := range rules.Rules() {
		if !covered[r.ID] {
			t.Errorf("rule %s: no example of it is a finding of the judge", r.ID)
		}
	}
	t.Run("good answers pass", func(t *testing.T) {
		for _, op := range slices.Sorted(func(yield func(string) bool) {
			for id := range sp.ops {
				if !yield(id) {
					return
				}
			}
		}) {
			q := rules.ExampleQuery(op)
			req, reqBody := exampleRequest(t, op, q)
			body, _ := json.Marshal(rules.Good(op, q))
			p := &probe{op: op, name: "good", expect: []int{successStatus(op)}}
			if verdict, detail, fs := sp.judge(context.Background(), p, req, reqBody, q.Now, successStatus(op), jsonCT, body); verdict != Pass {
				t.Errorf("%s: %s %q %+v", op, verdict, detail, fs)
			}
		}
	})
}

// TestContractListsEveryRule: each operation's x-korral-rules is exactly
// the rules that check it.
func TestContractListsEveryRule(t *testing.T) {
	sp := mustSpec(t)
	want := map[string][]string{}
	for _, r := range rules.Rules() {
		for _, op := range r.Operations {
			want[op] = append(want[op], r.ID)
		}
	}
	got := map[string][]string{}
	for id, o := range sp.ops {
		got[id] = slices.Clone(o.rules)
	}
	for _, m := range []map[string][]string{want, got} {
		for _, ids := range m {
			slices.Sort(ids)
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("x-korral-rules (-rules package +contract):\n%s", diff)
	}
}

// TestRuleBoundsAreTheContracts: the numbers and patterns the rules hold
// answers to are the contract's.
func TestRuleBoundsAreTheContracts(t *testing.T) {
	doc := mustSpec(t).doc
	for _, r := range rules.Ranges() {
		ref := doc.Components.Schemas[r.Schema]
		var prop *openapi3.SchemaRef
		if ref != nil {
			prop = propertyOf(ref.Value, r.Property)
		}
		if prop == nil {
			t.Errorf("%s: the contract has no %s.%s", r.Rule, r.Schema, r.Property)
			continue
		}
		p := prop.Value
		if p.Min == nil || p.Max == nil || int64(*p.Min) != r.Min || int64(*p.Max) != r.Max {
			t.Errorf("%s: %s.%s is %v to %v in the contract, %d to %d in the rule", r.Rule, r.Schema, r.Property, p.Min, p.Max, r.Min, r.Max)
		}
	}
	pattern := func(name string) string { return doc.Components.Schemas[name].Value.Pattern }
	if got := pattern("Timezone"); got != rules.TimezonePattern {
		t.Errorf("Timezone pattern %q, the rule's %q", got, rules.TimezonePattern)
	}
	if got := pattern("LocalTime"); got != rules.ClockPattern {
		t.Errorf("LocalTime pattern %q, the rule's %q", got, rules.ClockPattern)
	}
	for _, name := range []string{"Store", "StoreSummary"} {
		ref := propertyOf(doc.Components.Schemas[name].Value, "timezone")
		if ref != nil && ref.Ref == "" && ref.Value != nil && len(ref.Value.AllOf) == 1 {
			ref = ref.Value.AllOf[0] // renamed by suggest
		}
		if ref == nil || ref.Ref != "#/components/schemas/Timezone" {
			t.Errorf("%s.timezone is not the Timezone schema", name)
		}
	}
}

// propertyOf is the property the rules call name: the property of that
// name, or the one a rename gave StoreLink's name and an x-go-name that
// keeps name's Go field.
func propertyOf(schema *openapi3.Schema, name string) *openapi3.SchemaRef {
	if p := schema.Properties[name]; p != nil {
		return p
	}
	for _, p := range schema.Properties {
		if p.Value != nil && p.Value.Extensions[extGoName] == keepGoName(name) {
			return p
		}
		if p.Extensions[extGoName] == keepGoName(name) {
			return p
		}
	}
	return nil
}

// TestSpecRefusesUnknownExtensions: an unknown rule or a missing key scope
// is refused.
func TestSpecRefusesUnknownExtensions(t *testing.T) {
	for name, edit := range map[string]func(*openapi3.Operation){
		"unknown rule":     func(op *openapi3.Operation) { op.Extensions[extRules] = []any{"store.weather"} },
		"no key scope":     func(op *openapi3.Operation) { delete(op.Extensions, extKeyScope) },
		"odd key scope":    func(op *openapi3.Operation) { op.Extensions[extKeyScope] = "region" },
		"no list of rules": func(op *openapi3.Operation) { delete(op.Extensions, extRules) },
	} {
		t.Run(name, func(t *testing.T) {
			doc := parseContract(t)
			edit(doc.Paths.Value("/v1/stores/{store_id}").Get)
			if _, err := newSpec(doc); err == nil || !strings.Contains(err.Error(), "getStore") {
				t.Errorf("newSpec: %v, want an error naming getStore", err)
			}
		})
	}
}

// mutate makes one operation's successful answers break one rule.
func mutate(sp *spec, ex rules.Example, now time.Time) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			route, params, err := sp.router.FindRoute(r)
			if err != nil || route.Operation.OperationID != ex.Operation {
				next.ServeHTTP(w, r)
				return
			}
			rec := httptest.NewRecorder()
			next.ServeHTTP(rec, r)
			if rec.Code >= 300 {
				copyResponse(w, rec)
				return
			}
			dec := json.NewDecoder(bytes.NewReader(rec.Body.Bytes()))
			dec.UseNumber()
			var body map[string]any
			if dec.Decode(&body) != nil {
				copyResponse(w, rec)
				return
			}
			q := rules.Query{StoreID: params["store_id"], SKU: cmpOr(params["sku"], r.URL.Query().Get("sku")),
				SupplierID: params["supplier_id"], OrderID: params["order_id"], Cursor: r.URL.Query().Get("cursor"), Now: now}
			q.Since, _ = time.Parse(time.RFC3339, r.URL.Query().Get("since"))
			ex.Mutate(body, q)
			writeJSON(w, rec.Code, body)
		})
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func copyResponse(w http.ResponseWriter, rec *httptest.ResponseRecorder) {
	for k, v := range rec.Header() {
		w.Header()[k] = v
	}
	w.WriteHeader(rec.Code)
	_, _ = w.Write(rec.Body.Bytes())
}

// TestMutatingStoreLinkBreaksEachRule: the check catches each rule the
// double breaks, on a probe of its operation.
func TestMutatingStoreLinkBreaksEachRule(t *testing.T) {
	t.Parallel()
	sp := mustSpec(t)
	for _, ex := range rules.Examples() {
		t.Run(ex.Rule+"/"+ex.Operation, func(t *testing.T) {
			t.Parallel()
			f := newFake()
			srv := f.serve(t, mutate(sp, ex, fixedNow()))
			cfg := config(f, srv.URL)
			cfg.AllowWrites, cfg.WriteStore = true, "47"
			rep := check(t, cfg)
			var caught []string
			for _, p := range rep.Probes {
				for _, fd := range p.Findings {
					if fd.Kind == FindingRule {
						caught = append(caught, p.Operation+" "+fd.Rule)
						if p.Operation == ex.Operation && fd.Rule == ex.Rule && fd.Assumption {
							t.Errorf("%s on %q is labelled an assumption", fd.Rule, p.Probe)
						}
					}
				}
			}
			if !slices.Contains(caught, ex.Operation+" "+ex.Rule) {
				t.Fatalf("%s on %s not caught; rule findings: %v\nfailing: %v", ex.Rule, ex.Operation, caught, failing(rep))
			}
			if rep.ExitCode() != 1 {
				t.Errorf("exit %d, want 1", rep.ExitCode())
			}
		})
	}
}

// parseContract is a private, fresh copy of the contract to edit.
func parseContract(t *testing.T) *openapi3.T {
	t.Helper()
	doc, err := openapi.Parse(openapi.YAML)
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// answerEverything makes the fake answer 200 to every id and key and keep
// no state.
func answerEverything(f *fake) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-Korral-Store-Key") == unknownKey {
				r.Header.Set("X-Korral-Store-Key", f.keys["47"])
			}
			switch {
			case r.URL.Path == "/v1/skus/"+unknownSKU:
				writeJSON(w, 200, map[string]any{"sku": unknownSKU, "name": "Anything", "category": "dairy",
					"supplier_id": fakeSupplier, "unit": "piece", "case_pack": 6, "chilled": false})
			case r.URL.Path == "/v1/stores/47/inventory" && r.URL.Query().Get("sku") == unknownSKU:
				writeJSON(w, 200, map[string]any{"store_id": "47", "sku": unknownSKU, "on_hand_units": 0, "counted_at": "2026-11-27T06:30:00+01:00"})
			case r.URL.Path == "/v1/suppliers/"+unknownSupplier:
				writeJSON(w, 200, map[string]any{"supplier_id": unknownSupplier, "name": "Anyone", "lead_time_days": 1})
			case r.Method == http.MethodGet && r.Header.Get("X-Korral-Store-Key") == f.keys["47"] &&
				strings.HasPrefix(r.URL.Path, "/v1/stores/47/replenishment/") && r.URL.Path != "/v1/stores/47/replenishment/"+fakeOrder:
				id := strings.TrimPrefix(r.URL.Path, "/v1/stores/47/replenishment/")
				writeJSON(w, 200, map[string]any{"order_id": id, "store_id": "47", "sku": fakeSKU, "quantity_units": 24,
					"reason": "x", "status": "submitted", "submitted_at": "2026-11-26T10:00:00+01:00", "expected_arrival": "2026-11-28T06:00:00+01:00"})
			default:
				next.ServeHTTP(w, r)
			}
		})
	}
}

// TestAssumptionsAreLabelledAndSwitchable: against answerEverything the
// only drift is on labelled assumptions; NoAssumptions leaves them out.
func TestAssumptionsAreLabelledAndSwitchable(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t, answerEverything(f))
	cfg := config(f, srv.URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	want := []string{
		"listStores/unknown key drift",
		"getInventory/unknown SKU 99999999999999 drift",
		"getSKU/unknown SKU 99999999999999 drift",
		"getSupplier/unknown supplier drift",
		"getReplenishmentOrder/unknown order drift",
		"getReplenishmentOrder/read back the raised order drift",
	}
	if diff := cmp.Diff(want, failing(rep)); diff != "" {
		t.Fatalf("failing probes (-want +got):\n%s", diff)
	}
	for _, p := range rep.Probes {
		if p.Verdict == Drift && (p.Assumption == "" || !onAssumptions(p.Findings)) {
			t.Errorf("%s/%s: assumption %q, findings %+v; want every finding labelled", p.Operation, p.Probe, p.Assumption, p.Findings)
		}
	}
	if rep.Summary.DriftOnAssumptions != len(want) {
		t.Errorf("drift on assumptions %d, want %d", rep.Summary.DriftOnAssumptions, len(want))
	}
	rb := findProbe(t, rep, opGetOrder, "read back the raised order")
	if len(rb.Findings) != 1 || rb.Findings[0].Rule != rules.OrderReadBack {
		t.Errorf("read-back findings %+v, want order.readback", rb.Findings)
	}
	var table, js bytes.Buffer
	if err := rep.WriteTable(&table); err != nil {
		t.Fatal(err)
	}
	if err := rep.WriteJSON(&js); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"wrong-status (assumption): expected 404, got 200", "(assumption: the probe assumes that SKU 99999999999999 names nothing",
		"rule order.readback (assumption) at /quantity_units", "6 drift (6 only on an assumption of the check)", "--no-assumptions"} {
		if !strings.Contains(table.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, table.String())
		}
	}
	if !strings.Contains(js.String(), `"assumption": true`) || !strings.Contains(js.String(), `"drift_on_assumptions": 6`) {
		t.Errorf("JSON does not label the assumptions:\n%s", js.String())
	}

	cfg.NoAssumptions = true
	rep = check(t, cfg)
	if rep.ExitCode() != 0 {
		t.Fatalf("with NoAssumptions: exit %d, failing %v", rep.ExitCode(), failing(rep))
	}
	for _, name := range []string{"unknown SKU 99999999999999", "unknown supplier", "unknown order", "read back the raised order", "unknown key"} {
		for _, p := range rep.Probes {
			if p.Probe == name && (p.Verdict != Skipped || !strings.Contains(p.Detail, "--no-assumptions")) {
				t.Errorf("%s/%s = %s %q, want skipped by --no-assumptions", p.Operation, p.Probe, p.Verdict, p.Detail)
			}
		}
	}
}

// TestAbsentStoreComesFromTheList: the unknown-store id is outside the
// server's list.
func TestAbsentStoreComesFromTheList(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t, rewrite(func(r *http.Request) bool { return r.URL.Path == "/v1/stores" }, func(s int, b map[string]any) (int, any) {
		if s == 200 {
			b["stores"] = append(b["stores"].([]any), map[string]any{"store_id": "999999", "name": "Far away", "timezone": "Europe/Prague"})
		}
		return s, b
	}))
	rep := check(t, config(f, srv.URL))
	p := findProbe(t, rep, opGetStore, "store absent from the store list")
	if p.Verdict != Pass || p.Request != "GET /v1/stores/999998" {
		t.Errorf("probe %s %q sent %q, want a pass for store 999998", p.Verdict, p.Detail, p.Request)
	}
	if rep.ExitCode() != 0 {
		t.Errorf("exit %d: %v", rep.ExitCode(), failing(rep))
	}
}
