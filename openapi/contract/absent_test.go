package contract

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/korral/storelink/openapi"
	"github.com/korral/storelink/storelinkclient/rules"
)

// specWithOptional is the contract with "Component.property" made optional.
func specWithOptional(t *testing.T, props ...string) *spec {
	t.Helper()
	doc := parseContract(t)
	for _, p := range props {
		comp, prop, _ := strings.Cut(p, ".")
		ref := doc.Components.Schemas[comp]
		if ref == nil || ref.Value.Properties[prop] == nil || !slices.Contains(ref.Value.Required, prop) {
			t.Fatalf("the contract does not require %s", p)
		}
		ref.Value.Required = slices.DeleteFunc(ref.Value.Required, func(r string) bool { return r == prop })
	}
	sp, err := newSpec(doc)
	if err != nil {
		t.Fatal(err)
	}
	return sp
}

// eachLine edits every transaction of a POS page.
func eachLine(edit func(tx map[string]any)) func(map[string]any) {
	return func(b map[string]any) {
		for _, t := range b["transactions"].([]any) {
			edit(t.(map[string]any))
		}
	}
}

// dropKey deletes a top-level property.
func dropKey(name string) func(map[string]any) { return func(b map[string]any) { delete(b, name) } }

// sentCase is one edited good answer of TestRulesJudgeWhatStoreLinkSent.
type sentCase struct {
	name     string
	op       string
	optional []string // properties the contract in use does not require
	edit     func(body map[string]any)
	// rule is the one rule finding due ("" none), absent the number of
	// findings that name the field as missing (required or renamed).
	rule   string
	absent int
	// bound: the schema states the rule's bound too, and finds the
	// value outside it.
	bound bool
}

var sentCases = []sentCase{
	{name: "total_count left out, optional", op: opListPOS, optional: []string{"POSPage.total_count"}, edit: dropKey("total_count")},
	{name: "since left out, optional", op: opListPOS, optional: []string{"POSPage.since"}, edit: dropKey("since")},
	{name: "case_pack left out, optional", op: opGetSKU, optional: []string{"SKU.case_pack"}, edit: dropKey("case_pack")},
	{name: "opening_hours left out, optional", op: opGetStore, optional: []string{"Store.opening_hours"}, edit: dropKey("opening_hours")},
	{name: "units left out", op: opListPOS, edit: eachLine(func(tx map[string]any) { delete(tx, "units") }), absent: 1},
	{name: "timestamp left out", op: opListPOS, edit: eachLine(func(tx map[string]any) { delete(tx, "timestamp") }), absent: 1},

	{name: "units renamed", op: opListPOS, edit: eachLine(func(tx map[string]any) { tx["quantity"] = tx["units"]; delete(tx, "units") }), absent: 1},
	{name: "total_count left out", op: opListPOS, edit: dropKey("total_count"), absent: 1},
	{name: "monday left out, optional week", op: opGetStore, optional: []string{"WeeklyHours.monday"},
		edit: func(b map[string]any) { delete(b["opening_hours"].(map[string]any), "monday") }},

	// What StoreLink sent is checked, optional or not.
	{name: "total_count too small, optional", op: opListPOS, optional: []string{"POSPage.total_count"},
		edit: func(b map[string]any) { b["total_count"] = 1 }, rule: rules.POSTotalCount + " at /total_count"},
	{name: "since not the query's, optional", op: opListPOS, optional: []string{"POSPage.since"},
		edit: func(b map[string]any) { b["since"] = "2026-01-01T00:00:00Z" }, rule: rules.POSSince + " at /since"},
	{name: "case_pack 0, optional", op: opGetSKU, optional: []string{"SKU.case_pack"},
		edit: func(b map[string]any) { b["case_pack"] = 0 }, rule: rules.SKURange + " at /case_pack", bound: true},
	{name: "monday open without hours, optional", op: opGetStore, optional: []string{"Store.opening_hours"},
		edit: func(b map[string]any) {
			b["opening_hours"].(map[string]any)["monday"] = map[string]any{"closed": false}
		},
		rule: rules.StoreHoursOpen + " at /opening_hours/monday"},
	{name: "units 0 on a line beside lines without units", op: opListPOS,
		edit: func(b map[string]any) {
			txs := b["transactions"].([]any)
			delete(txs[0].(map[string]any), "units")
			txs[1].(map[string]any)["units"] = 0
		},
		rule: rules.POSUnits + " at /transactions/1/units", absent: 1, bound: true},
	{name: "a line before since beside a line without timestamp", op: opListPOS,
		edit: func(b map[string]any) {
			txs := b["transactions"].([]any)
			delete(txs[0].(map[string]any), "timestamp")
			txs[1].(map[string]any)["timestamp"] = "2026-01-01T00:00:00Z"
			txs[2].(map[string]any)["timestamp"] = "2025-12-31T00:00:00Z"
		},
		rule: rules.POSWindow + " at /transactions/1/timestamp", absent: 1},
	{name: "lines out of order around a line without timestamp", op: opListPOS,
		edit: func(b map[string]any) {
			// The first line is older than the third; the second, between
			// them, has no time.
			txs := b["transactions"].([]any)
			txs[0].(map[string]any)["timestamp"], txs[2].(map[string]any)["timestamp"] =
				txs[2].(map[string]any)["timestamp"], txs[0].(map[string]any)["timestamp"]
			delete(txs[1].(map[string]any), "timestamp")
		},
		rule: rules.POSOrder + " at /transactions/2/timestamp", absent: 1},
}

// TestRulesJudgeWhatStoreLinkSent: a rule about an absent field does not
// fire; the absence is one schema finding, or none when optional. A value
// StoreLink sent still breaks the rule.
func TestRulesJudgeWhatStoreLinkSent(t *testing.T) {
	t.Parallel()
	for _, c := range sentCases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			judgeSent(t, c)
		})
	}
}

// judgeSent checks the case's edited answer and checks its rule and
// absence findings.
func judgeSent(t *testing.T, c sentCase) {
	sp := mustSpec(t)
	if len(c.optional) > 0 {
		sp = specWithOptional(t, c.optional...)
	}
	q := rules.ExampleQuery(c.op)
	req, reqBody := exampleRequest(t, c.op, q)
	// A round trip through JSON: the edits see what a decoder sees.
	good, err := json.Marshal(rules.Good(c.op, q))
	var body map[string]any
	if err == nil {
		err = json.Unmarshal(good, &body)
	}
	c.edit(body)
	bad, err2 := json.Marshal(body)
	if err != nil || err2 != nil {
		t.Fatal(err, err2)
	}
	p := &probe{op: c.op, name: "answer", expect: []int{http.StatusOK}, positive: true}
	verdict, detail, fs := sp.judge(context.Background(), p, req, reqBody, q.Now, http.StatusOK, http.Header{"Content-Type": {"application/json"}}, bad)
	var got []string
	absent := 0
	for _, f := range fs {
		switch {
		case f.Kind == FindingRule:
			got = append(got, f.Rule+" at "+f.Path)
		case f.Kind == FindingRename, f.Kind == FindingSchema && strings.HasSuffix(f.Schema, "/required"):
			absent++
		case c.bound && f.Kind == FindingSchema && strings.HasSuffix(f.Schema, "/minimum"):
		default:
			t.Errorf("unexpected finding %+v", f)
		}
	}
	var want []string
	if c.rule != "" {
		want = []string{c.rule}
	}
	if !slices.Equal(got, want) || absent != c.absent {
		t.Errorf("rule findings %v and %d absence findings, want %v and %d\nverdict %s %q, findings %+v", got, absent, want, c.absent, verdict, detail, fs)
	}
	if wantPass := c.rule == "" && c.absent == 0; wantPass != (verdict == Pass) {
		t.Errorf("verdict %s, want pass: %v", verdict, wantPass)
	}
}

// TestSuggestedPatchAddsNoRuleFinding: absent fields are each one missing
// finding and no rule finding; after suggest makes them optional, the
// patched contract's check finds nothing.
func TestSuggestedPatchAddsNoRuleFinding(t *testing.T) {
	t.Parallel()
	f := newFake()
	leaveOut := rewrite(func(r *http.Request) bool {
		return r.Method == http.MethodGet && r.URL.Path != "/v1/stores"
	}, func(status int, body map[string]any) (int, any) {
		if status == http.StatusOK && body != nil {
			for _, name := range []string{"total_count", "since", "case_pack", "opening_hours"} {
				delete(body, name)
			}
		}
		return status, body
	})
	srv := f.serve(t, leaveOut)
	cfg := config(f, srv.URL)
	rep := check(t, cfg)
	var missing []string
	for _, c := range rep.Causes {
		switch {
		case c.Kind == FindingSchema && strings.HasSuffix(c.Schema, "/required"):
			missing = append(missing, c.Path)
		default:
			t.Errorf("cause %s %s %s at %s: want only the missing fields", c.ID, c.Kind, c.Rule, c.Path)
		}
	}
	slices.Sort(missing)
	if want := []string{"/case_pack", "/opening_hours", "/since", "/total_count"}; !slices.Equal(missing, want) {
		t.Errorf("missing fields %v, want %v", missing, want)
	}
	sug, err := Suggest(openapi.YAML, rep.Causes)
	if err != nil {
		t.Fatal(err)
	}
	if len(sug.Proposals) != 4 {
		t.Fatalf("proposals %+v, notes %+v; want the four made optional", sug.Proposals, sug.Notes)
	}
	cfg.Spec = sug.Patched
	again := check(t, cfg)
	for _, p := range again.Probes {
		for _, fd := range p.Findings {
			t.Errorf("re-check: %s/%s: %s %s at %s: %s", p.Operation, p.Probe, fd.Kind, fd.Rule, fd.Path, fd.Message)
		}
	}
	if again.ExitCode() != 0 {
		t.Errorf("re-check exit %d: %v", again.ExitCode(), failing(again))
	}
}
