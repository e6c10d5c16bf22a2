package contract

import (
	"context"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
)

// judgeNow is after every time of the hand-made answers.
var judgeNow = time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)

// Answers of the judgeCases.
var (
	judgeInventory = `{"store_id":"47","sku":"8847291","on_hand_units":9,"counted_at":"2026-11-28T06:30:00+01:00"}`
	judgeErrBody   = `{"error":{"code":"internal","message":"boom"}}`
	judgeJSON      = http.Header{"Content-Type": {"application/json"}}
)

// judgeCase is one answer to the inventory read and how it is checked.
type judgeCase struct {
	name     string
	expect   []int
	status   int
	header   http.Header
	body     string
	verdict  Verdict
	detail   string
	findings []Finding
}

// judgeCases are the answers TestJudge checks.
var judgeCases = []judgeCase{{
	name: "conforming", expect: []int{200}, status: 200, header: judgeJSON, body: judgeInventory,
	verdict: Pass,
}, {
	name: "content type with charset", expect: []int{200}, status: 200,
	header: http.Header{"Content-Type": {"application/json; charset=utf-8"}}, body: judgeInventory,
	verdict: Pass,
}, {
	name: "either of two statuses", expect: []int{403, 404}, status: 404, header: judgeJSON, body: judgeErrBody,
	verdict: Pass,
}, {
	name: "200 with error body", expect: []int{200}, status: 200, header: judgeJSON, body: judgeErrBody,
	verdict: Drift, detail: `200 with error body (code "internal")`,
	findings: []Finding{
		{Kind: FindingErrorIn200, Path: "/error", Message: `200 with error body (code "internal"): a successful status never carries an error`,
			// One finding: the failed success schema follows from the error body.
			Details: []string{
				`schema at /store_id: property "store_id" is missing [#/components/schemas/Inventory/required]`,
				`schema at /sku: property "sku" is missing [#/components/schemas/Inventory/required]`,
				`schema at /on_hand_units: property "on_hand_units" is missing [#/components/schemas/Inventory/required]`,
				`schema at /counted_at: property "counted_at" is missing [#/components/schemas/Inventory/required]`,
				// A property the contract does not have comes after
				// the missing ones.
				`schema at /error: property "error" is unsupported [#/components/schemas/Inventory/additionalProperties]`,
			}},
	},
}, {
	name: "wrong type", expect: []int{200}, status: 200, header: judgeJSON,
	body:    `{"store_id":"47","sku":"8847291","on_hand_units":"9","counted_at":"2026-11-28T06:30:00+01:00"}`,
	verdict: Drift, detail: "value must be an integer",
	findings: []Finding{{Kind: FindingSchema, Path: "/on_hand_units",
		Schema: "#/components/schemas/Inventory/properties/on_hand_units/type", Message: "value must be an integer"}},
}, {
	name: "pattern of a referenced schema", expect: []int{200}, status: 200, header: judgeJSON,
	body:    `{"store_id":"47a","sku":"8847291","on_hand_units":9,"counted_at":"2026-11-28T06:30:00+01:00"}`,
	verdict: Drift, detail: `string doesn't match the regular expression "^[0-9]{1,6}$"`,
	findings: []Finding{{Kind: FindingSchema, Path: "/store_id",
		Schema: "#/components/schemas/StoreID/pattern", Message: `string doesn't match the regular expression "^[0-9]{1,6}$"`},
		// Not the path's store either: the rule says so too.
		{Kind: FindingRule, Rule: "path.store_id", Path: "/store_id", Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/x-korral-rules",
			Message: "not the store of the request: a body's store_id is the store of the request's path"}},
}, {
	name: "wrong status, declared", expect: []int{403}, status: 404, header: judgeJSON, body: judgeErrBody,
	verdict: Drift, detail: "expected 403, got 404",
	findings: []Finding{{Kind: FindingStatus, Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/responses/403", Message: "expected 403, got 404"}},
}, {
	name: "undeclared status", expect: []int{200}, status: 418, header: judgeJSON, body: judgeInventory,
	verdict: Drift, detail: "expected 200, got 418",
	findings: []Finding{
		{Kind: FindingStatus, Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/responses/200", Message: "expected 200, got 418"},
		{Kind: FindingUndeclaredStatus, Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/responses",
			Message: "status 418 is not declared for getInventory (declared: 200, 400, 401, 403, 404, 429, 500, 503)"},
	},
}, {
	name: "error body that is not the envelope", expect: []int{404}, status: 404, header: judgeJSON, body: `{"message":"not found"}`,
	verdict: Drift, detail: `the error body is not the contract's envelope: "error" is missing, the body has "message"`,
	findings: []Finding{
		// One departure, one finding: not a missing "error" and an
		// unexpected property for each name used instead.
		{Kind: FindingSchema, Path: "", Schema: "#/components/schemas/Error",
			Message: `the error body is not the contract's envelope: "error" is missing, the body has "message"`},
	},
}, {
	name: "renamed field", expect: []int{200}, status: 200, header: judgeJSON,
	body:    `{"store_id":"47","sku":"8847291","on_hand":9,"counted_at":"2026-11-28T06:30:00+01:00"}`,
	verdict: Drift, detail: `renamed? "on_hand" present, "on_hand_units" missing`,
	findings: []Finding{{Kind: FindingRename, Path: "/on_hand", Schema: "#/components/schemas/Inventory/properties/on_hand_units",
		Message: `renamed? "on_hand" present, "on_hand_units" missing`}},
}, {
	name: "an added field of another type is no rename", expect: []int{200}, status: 200, header: judgeJSON,
	body:    `{"store_id":"47","sku":"8847291","on_hand":"nine","counted_at":"2026-11-28T06:30:00+01:00"}`,
	verdict: Drift, detail: `property "on_hand_units" is missing`,
	findings: []Finding{
		{Kind: FindingSchema, Path: "/on_hand_units", Schema: "#/components/schemas/Inventory/required", Message: `property "on_hand_units" is missing`},
		{Kind: FindingSchema, Path: "/on_hand", Schema: "#/components/schemas/Inventory/additionalProperties", Message: `property "on_hand" is unsupported`},
	},
}, {
	name: "plain text error", expect: []int{401}, status: 401, header: http.Header{"Content-Type": {"text/plain"}}, body: "Unauthorized",
	verdict: Drift, detail: `response header Content-Type has unexpected value: "text/plain"`,
	findings: []Finding{{Kind: FindingHeader, Path: "Content-Type", Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/responses/401",
		Message: `response header Content-Type has unexpected value: "text/plain"`}},
}, {
	name: "malformed JSON", expect: []int{200}, status: 200, header: judgeJSON, body: judgeInventory[:40],
	verdict: Drift, detail: "failed to decode response body: unexpected EOF",
	findings: []Finding{{Kind: FindingBody, Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/responses/200",
		Message: "failed to decode response body: unexpected EOF"}},
}, {
	name: "429 without Retry-After", expect: []int{200}, status: 429, header: judgeJSON, body: judgeErrBody,
	verdict: Drift, detail: "expected 200, got 429",
	findings: []Finding{
		{Kind: FindingStatus, Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/responses/200", Message: "expected 200, got 429"},
		{Kind: FindingHeader, Path: "Retry-After", Schema: "#/paths/~1v1~1stores~1{store_id}~1inventory/get/responses/429", Message: `response header "Retry-After" missing`},
	},
}, {
	name: "429 as declared is inconclusive", expect: []int{200}, status: 429,
	header: http.Header{"Content-Type": {"application/json"}, "Retry-After": {"30"}}, body: `{"error":{"code":"rate_limited","message":"slow down"}}`,
	verdict: Error, detail: `StoreLink answered 429 (code "rate_limited"), so this probe could not be checked`,
}, {
	name: "503 as declared is inconclusive", expect: []int{401}, status: 503, header: judgeJSON, body: judgeErrBody,
	verdict: Error, detail: `StoreLink answered 503 (code "internal"), so this probe could not be checked`,
}}

// TestJudge classifies hand-made answers to the inventory read, offline.
func TestJudge(t *testing.T) {
	sp := mustSpec(t)
	req := get("/v1/stores/47/inventory", url.Values{"sku": {"8847291"}}, keyOwn, "47")
	for _, tc := range judgeCases {
		t.Run(tc.name, func(t *testing.T) {
			p := &probe{op: opGetInventory, name: tc.name, expect: tc.expect}
			verdict, detail, findings := sp.judge(context.Background(), p, req, nil, judgeNow, tc.status, tc.header, []byte(tc.body))
			if verdict != tc.verdict || detail != tc.detail {
				t.Errorf("verdict %s %q, want %s %q", verdict, detail, tc.verdict, tc.detail)
			}
			if diff := cmp.Diff(tc.findings, findings, cmpopts.IgnoreFields(Finding{}, "Evidence")); diff != "" {
				t.Errorf("findings (-want +got):\n%s", diff)
			}
		})
	}
}

func TestJudgeBoundsFindings(t *testing.T) {
	sp := mustSpec(t)
	// A hundred unexpected properties would be a hundred findings.
	body := []byte(`{`)
	for i := range 100 {
		body = append(body, []byte(`"x`+string(rune('a'+i%26))+string(rune('a'+i/26))+`":1,`)...)
	}
	body = append(body, []byte(`"stores":[]}`)...)
	p := &probe{op: opListStores, name: "valid key", expect: []int{200}}
	_, _, fs := sp.judge(context.Background(), p, get("/v1/stores", nil, keyOwn, "47"), nil, fixedNow(), 200,
		http.Header{"Content-Type": {"application/json"}}, body)
	if len(fs) != maxFindings || fs[maxFindings-1].Message != "and 81 more" {
		t.Errorf("%d findings, last %+v", len(fs), fs[len(fs)-1])
	}
}

func TestValidateRequestCatchesCheckerBugs(t *testing.T) {
	sp := mustSpec(t)
	ctx := context.Background()
	good := get("/v1/stores/47/pos", url.Values{"sku": {"8847291"}, "since": {"2026-11-20T00:00:00Z"}, "limit": {"10"}}, keyOwn, "47")
	if fs := sp.validateRequest(ctx, opListPOS, good, nil); fs != nil {
		t.Errorf("a well-formed probe was refused: %+v", fs)
	}
	for name, req := range map[string]request{
		"no key":       get("/v1/stores/47/pos", good.query, keyNone, "47"),
		"bad limit":    get("/v1/stores/47/pos", url.Values{"sku": {"8847291"}, "since": {"2026-11-20T00:00:00Z"}, "limit": {"0"}}, keyOwn, "47"),
		"no since":     get("/v1/stores/47/pos", url.Values{"sku": {"8847291"}}, keyOwn, "47"),
		"wrong routed": get("/v1/stores/47", nil, keyOwn, "47"),
	} {
		if fs := sp.validateRequest(ctx, opListPOS, req, nil); len(fs) == 0 || fs[0].Kind != FindingRequest {
			t.Errorf("%s: validateRequest = %+v, want a request finding", name, fs)
		}
	}
}

func TestSchemaLocations(t *testing.T) {
	sp := mustSpec(t)
	want := map[string]string{
		"Inventory": "#/components/schemas/Inventory",
		"StoreID":   "#/components/schemas/StoreID",
	}
	for name, loc := range want {
		if got := sp.schemaAt[sp.doc.Components.Schemas[name].Value]; got != loc {
			t.Errorf("%s at %q, want %q", name, got, loc)
		}
	}
	hours := sp.doc.Components.Schemas["WeeklyHours"].Value.Properties["monday"].Value
	if got := sp.schemaAt[hours]; got != "#/components/schemas/DayHours" {
		t.Errorf("a $ref property is named %q, want its component", got)
	}
	units := sp.doc.Components.Schemas["POSTransaction"].Value.Properties["units"].Value
	if got := sp.schemaAt[units]; got != "#/components/schemas/POSTransaction/properties/units" {
		t.Errorf("inline property named %q", got)
	}
	if sp.exampleSKU != "8847291" || sp.keyHeader != "X-Korral-Store-Key" {
		t.Errorf("example SKU %q, key header %q", sp.exampleSKU, sp.keyHeader)
	}
}
