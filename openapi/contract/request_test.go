package contract

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/korral/storelink/openapi"
)

func TestFieldComplaints(t *testing.T) {
	for _, tc := range []struct {
		name, body, format string
		want               []fieldComplaint
	}{
		{"FastAPI missing", `{"detail":[{"loc":["body","quantity"],"msg":"Field required","type":"missing"}]}`, "a FastAPI validation error",
			[]fieldComplaint{{"quantity", complaintMissing}}},
		{"FastAPI v1 missing and extra", `{"detail":[{"loc":["body","quantity"],"msg":"field required","type":"value_error.missing"},{"loc":["body","quantity_units"],"msg":"Extra inputs are not permitted","type":"extra_forbidden"}]}`,
			"a FastAPI validation error", []fieldComplaint{{"quantity", complaintMissing}, {"quantity_units", complaintExtra}}},
		{"FastAPI value and query", `{"detail":[{"loc":["body","quantity_units"],"msg":"Input should be greater than or equal to 1","type":"greater_than_equal"},{"loc":["query","sku"],"msg":"Field required","type":"missing"},{"loc":["body","lines",0,"sku"],"msg":"Field required","type":"missing"}]}`,
			"a FastAPI validation error", []fieldComplaint{{"quantity_units", complaintInvalid}, {"lines", complaintInvalid}}},
		{"problem details", `{"type":"https://example.net/validation","title":"Invalid request","status":422,"invalid-params":[{"name":"quantity","reason":"is required"},{"name":"quantity_units","reason":"unknown property"},{"name":"sku","reason":"must be 7 digits"}]}`,
			"RFC 9457 problem details", []fieldComplaint{{"quantity", complaintMissing}, {"quantity_units", complaintExtra}, {"sku", complaintInvalid}}},
		{"JSON:API", `{"errors":[{"status":"422","source":{"pointer":"/data/attributes/quantity"},"title":"Missing attribute","detail":"quantity can't be blank"},{"source":{"pointer":"/quantity_units"},"detail":"unrecognized attribute"}]}`,
			"a JSON:API error", []fieldComplaint{{"quantity", complaintMissing}, {"quantity_units", complaintExtra}}},
		{"the contract's envelope", `{"error":{"code":"below_minimum_order","message":"quantity_units is required to be at least 12"}}`, "", nil},
		{"FastAPI text detail", `{"detail":"Not Found"}`, "", nil},
		{"not JSON", `quantity required`, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			format, got := fieldComplaints([]byte(tc.body))
			if format != tc.format || !slices.Equal(got, tc.want) {
				t.Errorf("fieldComplaints = %q %+v, want %q %+v", format, got, tc.format, tc.want)
			}
		})
	}
}

// orderBody is the request the write probes send.
var orderBody = []byte(`{"sku":"8847291","quantity_units":12,"reason":"contract check"}`)

// judgeCreate checks one answer to a create probe that expects want.
func judgeCreate(t *testing.T, want []int, status int, body string) (Verdict, []Finding) {
	t.Helper()
	sp := mustSpec(t)
	p := &probe{op: opCreateOrder, name: "raise one order", expect: want}
	req := request{method: http.MethodPost, path: "/v1/stores/47/replenishment", key: keyOwn, store: "47", body: json.RawMessage(orderBody)}
	v, _, fs := sp.judge(context.Background(), p, req, orderBody, judgeNow, status, http.Header{"Content-Type": {"application/json"}}, []byte(body))
	return v, fs
}

// TestRequestDepartureIsOneCause: a refusal naming the request field
// StoreLink wants is one rename cause in each error shape, and suggest
// renames the property keeping its Go name.
func TestRequestDepartureIsOneCause(t *testing.T) {
	bodies := map[string]string{
		"FastAPI":  `{"detail":[{"loc":["body","quantity"],"msg":"Field required","type":"missing"},{"loc":["body","quantity_units"],"msg":"Extra inputs are not permitted","type":"extra_forbidden"}]}`,
		"problem":  `{"title":"Invalid request","invalid-params":[{"name":"quantity","reason":"is required"}]}`,
		"JSON:API": `{"errors":[{"source":{"pointer":"/data/attributes/quantity"},"detail":"quantity is missing"}]}`,
	}
	for name, body := range bodies {
		t.Run(name, func(t *testing.T) {
			var results []Result
			for _, want := range [][]int{{400}, {422}, {201, 422}, {201}} {
				v, fs := judgeCreate(t, want, 422, body)
				if v != Drift || len(fs) == 0 || fs[0].Kind != FindingRename || fs[0].Evidence == nil {
					t.Fatalf("expecting %v: %s %+v", want, v, fs)
				}
				ev := fs[0].Evidence
				if ev.Component != "OrderRequest" || ev.Property != "quantity_units" || ev.Found != "quantity" || len(ev.Against) > 0 {
					t.Fatalf("evidence %+v", ev)
				}
				if !strings.HasPrefix(fs[0].Message, `request body: renamed? StoreLink requires "quantity", the contract sends "quantity_units"`) {
					t.Errorf("message %q", fs[0].Message)
				}
				if slices.ContainsFunc(fs, func(f Finding) bool { return f.Kind == FindingStatus }) {
					t.Errorf("expecting %v: a status finding beside the request's: %+v", want, fs)
				}
				results = append(results, Result{Operation: opCreateOrder, Probe: "p", Verdict: v, Findings: fs})
			}
			var renames []Cause
			for _, c := range causesOf(results) {
				if c.Kind == FindingRename {
					renames = append(renames, c)
				}
				if c.Kind == FindingStatus {
					t.Errorf("a status cause: %+v", c)
				}
			}
			if len(renames) != 1 || renames[0].Count != 4 {
				t.Fatalf("rename causes %+v, want one seen 4 times", renames)
			}
			sug, err := Suggest(openapi.YAML, renames)
			if err != nil {
				t.Fatal(err)
			}
			if len(sug.Proposals) != 1 || sug.Proposals[0].Change != "rename OrderRequest.quantity_units to quantity (Go field QuantityUnits)" {
				t.Fatalf("proposals %+v, notes %+v", sug.Proposals, sug.Notes)
			}
			if !strings.Contains(string(sug.Patched), "        quantity:\n          x-go-name: QuantityUnits\n          type: integer\n") {
				t.Errorf("the request schema is not patched:\n%s", sug.Diff)
			}
		})
	}
}

// TestRequestDepartureNotFound: the cases that are no request departure,
// and the unpaired ones that are request-field findings.
func TestRequestDepartureNotFound(t *testing.T) {
	for name, body := range map[string]string{
		"envelope":      `{"error":{"code":"below_minimum_order","message":"quantity is required to be at least 12"}}`,
		"refused value": `{"detail":[{"loc":["body","quantity_units"],"msg":"Input should be less than or equal to 10","type":"less_than_equal"}]}`,
	} {
		_, fs := judgeCreate(t, []int{201}, 422, body)
		if requestDeparted(fs) || !slices.ContainsFunc(fs, func(f Finding) bool { return f.Kind == FindingStatus }) {
			t.Errorf("%s: %+v", name, fs)
		}
	}
	sp := mustSpec(t)
	if fs := sp.requestDepartures(opGetInventory, nil, 422, []byte(`{"detail":[{"loc":["body","quantity"],"type":"missing","msg":"Field required"}]}`)); fs != nil {
		t.Errorf("a GET: %+v", fs)
	}
	_, fs := judgeCreate(t, []int{201}, 422, `{"detail":[{"loc":["body","delivery_window"],"msg":"Field required","type":"missing"}]}`)
	if len(fs) == 0 || fs[0].Kind != FindingRequestField || !strings.Contains(fs[0].Message, `StoreLink requires "delivery_window"`) {
		t.Errorf("a required field nothing pairs with: %+v", fs)
	}
	_, fs = judgeCreate(t, []int{201}, 400, `{"invalid-params":[{"name":"reason","reason":"not allowed"}]}`)
	if len(fs) == 0 || fs[0].Kind != FindingRequestField || !strings.Contains(fs[0].Message, `StoreLink refuses "reason"`) {
		t.Errorf("a refused field: %+v", fs)
	}
	got, err := Suggest(openapi.YAML, []Cause{{ID: "x", Kind: FindingRequestField, Count: 1, Evidence: fs[0].Evidence}})
	if err != nil || len(got.Notes) != 1 || got.Diff != "" {
		t.Errorf("suggest on a refused field: %v %+v", err, got)
	}
}

// TestRetryWithStoreLinksNames: the order write is resent with the renames
// StoreLink asked for, except for doubtful renames, probes without a learn
// step, another key, or a retry.
func TestRetryWithStoreLinksNames(t *testing.T) {
	raise := &probe{op: opCreateOrder, name: "raise one order", expect: []int{201}, learn: func(*state, []byte) []*probe { return nil }}
	req := request{method: http.MethodPost, path: "/v1/stores/47/replenishment", key: keyOwn, store: "47"}
	rename := Finding{Kind: FindingRename, Message: "request body: renamed? ...",
		Evidence: &Evidence{Component: "OrderRequest", Property: "quantity_units", Found: "quantity"}}
	retry := retryWithStoreLinksNames(raise, req, orderBody, []Finding{rename})
	if retry == nil {
		t.Fatal("no retry")
	}
	got, _ := retry.build(&state{})
	body, _ := json.Marshal(got.body)
	if string(body) != `{"quantity":12,"reason":"contract check","sku":"8847291"}` || !got.asGiven || got.raised == nil || got.raised.QuantityUnits != 12 {
		t.Errorf("retry sends %s (as given %v, raised %+v)", body, got.asGiven, got.raised)
	}
	if retryWithStoreLinksNames(retry, got, body, []Finding{rename}) != nil {
		t.Error("a retry is retried")
	}
	doubtful := rename
	doubtful.Evidence = &Evidence{Component: "OrderRequest", Property: "quantity_units", Found: "quantity_cases", Against: []string{"cases"}}
	noLearn := *raise
	noLearn.learn = nil
	other := req
	other.key = keyOther
	for name, r := range map[string]*probe{
		"doubtful":  retryWithStoreLinksNames(raise, req, orderBody, []Finding{doubtful}),
		"no learn":  retryWithStoreLinksNames(&noLearn, req, orderBody, []Finding{rename}),
		"other key": retryWithStoreLinksNames(raise, other, orderBody, []Finding{rename}),
		"no rename": retryWithStoreLinksNames(raise, req, orderBody, []Finding{{Kind: FindingStatus, Message: "expected 201, got 422"}}),
	} {
		if r != nil {
			t.Errorf("%s: retried", name)
		}
	}
}
