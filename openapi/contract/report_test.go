package contract

import (
	"bytes"
	"encoding/json"
	"encoding/xml"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func sample() *Report {
	errorBody := func(op, endpoint string) Result {
		return Result{Operation: op, Endpoint: endpoint, Probe: "no key", Request: "GET /v1/stores/47",
			Key: "no key", Expected: []int{401}, Got: 401, Verdict: Drift, Detail: `property "error" is missing`, Findings: []Finding{
				{Kind: FindingSchema, Path: "/error", Schema: "#/components/schemas/Error/required", Message: `property "error" is missing`},
				{Kind: FindingSchema, Path: "/detail", Schema: "#/components/schemas/Error/additionalProperties", Message: `property "detail" is unsupported`},
			}}
	}
	r := &Report{BaseURL: "https://storelink.example", ContractVersion: "1.0.0", Store: "47", SKU: "8847291", Requests: 4,
		Probes: []Result{
			{Operation: opListStores, Endpoint: "GET /v1/stores", Probe: "valid key", Request: "GET /v1/stores",
				Key: "key of store 47", Expected: []int{200}, Got: 200, Verdict: Pass},
			{Operation: opGetInventory, Endpoint: "GET /v1/stores/{store_id}/inventory", Probe: "valid key",
				Request: "GET /v1/stores/47/inventory?sku=8847291", Key: "key of store 47", Expected: []int{200}, Got: 200,
				Verdict: Drift, Detail: `renamed? "on_hand" present, "on_hand_units" missing`, Findings: []Finding{
					{Kind: FindingRename, Path: "/on_hand", Schema: "#/components/schemas/Inventory/properties/on_hand_units",
						Message:  `renamed? "on_hand" present, "on_hand_units" missing`,
						Evidence: &Evidence{Component: "Inventory", Property: "on_hand_units", Found: "on_hand", JSONType: "integer"}},
				}},
			errorBody(opGetStore, "GET /v1/stores/{store_id}"),
			errorBody(opGetInventory, "GET /v1/stores/{store_id}/inventory"),
			{Operation: opGetStore, Endpoint: "GET /v1/stores/{store_id}", Probe: "another store's key", Request: "GET /v1/stores/47",
				Key: "key of store 102", Expected: []int{403}, Verdict: Error, Detail: "no answer within 10s (the request timeout)"},
			{Operation: opCreateOrder, Endpoint: "POST /v1/stores/{store_id}/replenishment", Probe: "raise an order",
				Expected: []int{201}, Verdict: Skipped, Detail: "writes not allowed"},
		}}
	r.finish()
	return r
}

func TestWriteTable(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().WriteTable(&buf); err != nil {
		t.Fatal(err)
	}
	// The causes lead, each once: the error body's two departures are
	// seen on two probes, the missing field before the extra one.
	want := `StoreLink contract check of https://storelink.example against contract 1.0.0 (store 47, SKU 8847291)

Causes of drift (3), most telling first:
  1. rename at /on_hand: renamed? "on_hand" present, "on_hand_units" missing [#/components/schemas/Inventory/properties/on_hand_units]
     seen once on getInventory
  2. schema at /error: property "error" is missing [#/components/schemas/Error/required]
     seen 2 times on getInventory, getStore
  3. schema at /detail: property "detail" is unsupported [#/components/schemas/Error/additionalProperties]
     seen 2 times on getInventory, getStore

ENDPOINT                                  PROBE                EXPECTED  GOT  VERDICT  DETAIL
GET /v1/stores                            valid key            200       200  PASS
GET /v1/stores/{store_id}/inventory       valid key            200       200  DRIFT    rename at /on_hand: renamed? "on_hand" present, "on_hand_units" missing [#/components/schemas/Inventory/properties/on_hand_units]
GET /v1/stores/{store_id}                 no key               401       401  DRIFT    schema at /error: property "error" is missing [#/components/schemas/Error/required]
                                                                                       schema at /detail: property "detail" is unsupported [#/components/schemas/Error/additionalProperties]
GET /v1/stores/{store_id}/inventory       no key               401       401  DRIFT    schema at /error: property "error" is missing [#/components/schemas/Error/required]
                                                                                       schema at /detail: property "detail" is unsupported [#/components/schemas/Error/additionalProperties]
GET /v1/stores/{store_id}                 another store's key  403       -    ERROR    no answer within 10s (the request timeout)
POST /v1/stores/{store_id}/replenishment  raise an order       201       -    SKIPPED  writes not allowed

6 probes, 4 requests: 1 pass, 3 drift, 1 skipped, 1 error.
Result: DRIFT: StoreLink does not conform to the contract.
`
	if diff := cmp.Diff(want, buf.String()); diff != "" {
		t.Errorf("table (-want +got):\n%s", diff)
	}
}

func TestVerdictAndExitCode(t *testing.T) {
	r := sample()
	if r.Verdict != Drift || r.ExitCode() != 1 {
		t.Errorf("drift and error: verdict %s exit %d, want drift 1", r.Verdict, r.ExitCode())
	}
	r.Probes = r.Probes[4:]
	r.finish()
	if r.Verdict != Error || r.ExitCode() != 2 {
		t.Errorf("error only: verdict %s exit %d, want error 2", r.Verdict, r.ExitCode())
	}
	r.Probes = r.Probes[1:]
	r.finish()
	if r.Verdict != Pass || r.ExitCode() != 0 {
		t.Errorf("skipped only: verdict %s exit %d, want pass 0", r.Verdict, r.ExitCode())
	}
	r.Aborted = "cannot reach StoreLink"
	r.finish()
	if r.ExitCode() != 2 {
		t.Errorf("aborted: exit %d, want 2", r.ExitCode())
	}
}

func TestWriteJSONRoundTrips(t *testing.T) {
	var buf bytes.Buffer
	in := sample()
	if err := in.Write(&buf, FormatJSON); err != nil {
		t.Fatal(err)
	}
	var out Report
	if err := json.Unmarshal(buf.Bytes(), &out); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(in, &out); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
}

func TestWriteJUnit(t *testing.T) {
	var buf bytes.Buffer
	if err := sample().Write(&buf, FormatJUnit); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(buf.String(), `<?xml version="1.0" encoding="UTF-8"?>`) {
		t.Errorf("no XML declaration:\n%s", buf.String())
	}
	var doc junitSuites
	if err := xml.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not XML: %v\n%s", err, buf.String())
	}
	// The causes' suite leads, one failing case per cause; the probes
	// follow.
	if doc.Tests != 9 || doc.Failures != 6 || doc.Errors != 1 || doc.Skipped != 1 || len(doc.Suites) != 2 {
		t.Fatalf("counts %+v", doc)
	}
	got := []string{}
	for _, suite := range doc.Suites {
		for _, c := range suite.Cases {
			state := "pass"
			switch {
			case c.Failure != nil:
				state = "failure: " + c.Failure.Message
			case c.Error != nil:
				state = "error: " + c.Error.Message
			case c.Skipped != nil:
				state = "skipped: " + c.Skipped.Message
			}
			got = append(got, c.ClassName+" | "+c.Name+" | "+state)
		}
	}
	renamed := `rename at /on_hand: renamed? "on_hand" present, "on_hand_units" missing [#/components/schemas/Inventory/properties/on_hand_units]`
	missing := `schema at /error: property "error" is missing [#/components/schemas/Error/required]`
	extra := `schema at /detail: property "detail" is unsupported [#/components/schemas/Error/additionalProperties]`
	want := []string{
		"cause | " + renamed + " | failure: " + renamed,
		"cause | " + missing + " | failure: " + missing,
		"cause | " + extra + " | failure: " + extra,
		"listStores | GET /v1/stores valid key | pass",
		`getInventory | GET /v1/stores/{store_id}/inventory valid key | failure: renamed? "on_hand" present, "on_hand_units" missing`,
		`getStore | GET /v1/stores/{store_id} no key | failure: property "error" is missing`,
		`getInventory | GET /v1/stores/{store_id}/inventory no key | failure: property "error" is missing`,
		"getStore | GET /v1/stores/{store_id} another store's key | error: no answer within 10s (the request timeout)",
		"createReplenishmentOrder | POST /v1/stores/{store_id}/replenishment raise an order | skipped: writes not allowed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("test cases (-want +got):\n%s", diff)
	}
	if c := doc.Suites[1].Cases[1]; !strings.Contains(c.Failure.Text, "rename at /on_hand") {
		t.Errorf("failure text lacks the finding's place:\n%s", c.Failure.Text)
	}
	if c := doc.Suites[0].Cases[1]; !strings.Contains(c.Failure.Text, "seen 2 times on getInventory, getStore") {
		t.Errorf("a cause's text lacks its count and operations:\n%s", c.Failure.Text)
	}
}

func TestUnknownFormat(t *testing.T) {
	if err := sample().Write(&bytes.Buffer{}, "yaml"); err == nil {
		t.Error("Write accepted an unknown format")
	}
}

// TestKeysNeverInReports: a StoreLink that echoes the key in a 200's error
// code; no format shows it.
func TestKeysNeverInReports(t *testing.T) {
	t.Parallel()
	f := newFake()
	srv := f.serve(t, rewrite(func(r *http.Request) bool { return r.URL.Path == "/v1/stores/47" },
		func(s int, b map[string]any) (int, any) {
			return 200, map[string]any{"error": map[string]any{"code": f.keys["47"], "message": "key " + f.keys["102"]}}
		}))
	cfg := config(f, srv.URL)
	cfg.AllowWrites, cfg.WriteStore = true, "47"
	rep := check(t, cfg)
	if rep.Summary.Drift == 0 {
		t.Fatal("the echoing StoreLink was not reported as drift")
	}
	for _, format := range Formats {
		var buf bytes.Buffer
		if err := rep.Write(&buf, format); err != nil {
			t.Fatal(err)
		}
		for store, key := range f.keys {
			if strings.Contains(buf.String(), key) {
				t.Errorf("%s report contains the key of store %s", format, store)
			}
		}
		if !strings.Contains(buf.String(), Redacted) {
			t.Errorf("%s report: the echoed key was not visibly redacted", format)
		}
	}
}

// TestReportNamesTheGivenSpec: a check against a spec given with --spec
// names it in the table's header, the JSON report and the JUnit properties;
// the embedded contract is named by its version alone.
func TestReportNamesTheGivenSpec(t *testing.T) {
	r := sample()
	r.ContractSpec = "storelink-suggested.yaml"
	var table, js, junit bytes.Buffer
	for format, buf := range map[string]*bytes.Buffer{FormatTable: &table, FormatJSON: &js, FormatJUnit: &junit} {
		if err := r.Write(buf, format); err != nil {
			t.Fatal(err)
		}
	}
	if want := "against the spec storelink-suggested.yaml (contract 1.0.0 as it declares)"; !strings.Contains(table.String(), want) {
		t.Errorf("table header %q lacks %q", strings.SplitN(table.String(), "\n", 2)[0], want)
	}
	if !strings.Contains(js.String(), `"contract_spec": "storelink-suggested.yaml"`) && !strings.Contains(js.String(), `"contract_spec":"storelink-suggested.yaml"`) {
		t.Errorf("JSON report lacks contract_spec: %s", js.String()[:200])
	}
	if !strings.Contains(junit.String(), `name="contract_spec" value="storelink-suggested.yaml"`) {
		t.Errorf("JUnit lacks the contract_spec property")
	}
	if specName(Config{}) != "" || specName(Config{Spec: []byte("x")}) != "a given spec" || specName(Config{Spec: []byte("x"), SpecName: "f.yaml"}) != "f.yaml" {
		t.Error("specName")
	}
}
