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
	r := &Report{BaseURL: "https://storelink.example", ContractVersion: "1.0.0", Store: "47", SKU: "8847291", Requests: 3,
		Probes: []Result{
			{Operation: opListStores, Endpoint: "GET /v1/stores", Probe: "valid key", Request: "GET /v1/stores",
				Key: "key of store 47", Expected: []int{200}, Got: 200, Verdict: Pass},
			{Operation: opGetInventory, Endpoint: "GET /v1/stores/{store_id}/inventory", Probe: "valid key",
				Request: "GET /v1/stores/47/inventory?sku=8847291", Key: "key of store 47", Expected: []int{200}, Got: 200,
				Verdict: Drift, Detail: `property "on_hand" is unsupported`, Findings: []Finding{
					{Kind: FindingSchema, Path: "/on_hand", Schema: "#/components/schemas/Inventory/properties", Message: `property "on_hand" is unsupported`},
					{Kind: FindingSchema, Path: "/on_hand_units", Schema: "#/components/schemas/Inventory/required", Message: `property "on_hand_units" is missing`},
				}},
			{Operation: opGetStore, Endpoint: "GET /v1/stores/{store_id}", Probe: "no key", Request: "GET /v1/stores/47",
				Key: "no key", Expected: []int{401}, Verdict: Error, Detail: "no answer within 10s (the request timeout)"},
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
	want := `StoreLink contract check of https://storelink.example against contract 1.0.0 (store 47, SKU 8847291)

ENDPOINT                                  PROBE           EXPECTED  GOT  VERDICT  DETAIL
GET /v1/stores                            valid key       200       200  PASS
GET /v1/stores/{store_id}/inventory       valid key       200       200  DRIFT    schema at /on_hand: property "on_hand" is unsupported [#/components/schemas/Inventory/properties]
                                                                                  schema at /on_hand_units: property "on_hand_units" is missing [#/components/schemas/Inventory/required]
GET /v1/stores/{store_id}                 no key          401       -    ERROR    no answer within 10s (the request timeout)
POST /v1/stores/{store_id}/replenishment  raise an order  201       -    SKIPPED  writes not allowed

4 probes, 3 requests: 1 pass, 1 drift, 1 skipped, 1 error.
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
	r.Probes = r.Probes[2:]
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
	if doc.Tests != 4 || doc.Failures != 1 || doc.Errors != 1 || doc.Skipped != 1 || len(doc.Suites) != 1 {
		t.Fatalf("counts %+v", doc)
	}
	cases := doc.Suites[0].Cases
	got := []string{}
	for _, c := range cases {
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
	want := []string{
		"listStores | GET /v1/stores valid key | pass",
		`getInventory | GET /v1/stores/{store_id}/inventory valid key | failure: property "on_hand" is unsupported`,
		"getStore | GET /v1/stores/{store_id} no key | error: no answer within 10s (the request timeout)",
		"createReplenishmentOrder | POST /v1/stores/{store_id}/replenishment raise an order | skipped: writes not allowed",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("test cases (-want +got):\n%s", diff)
	}
	if !strings.Contains(cases[1].Failure.Text, "schema at /on_hand_units") {
		t.Errorf("failure text lacks the schema path:\n%s", cases[1].Failure.Text)
	}
}

func TestUnknownFormat(t *testing.T) {
	if err := sample().Write(&bytes.Buffer{}, "yaml"); err == nil {
		t.Error("Write accepted an unknown format")
	}
}

// TestKeysNeverInReports runs a check against a StoreLink that misbehaves in
// the worst way for secrecy: it answers with the caller's key as the error
// code of a 200. No format may show any key.
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
