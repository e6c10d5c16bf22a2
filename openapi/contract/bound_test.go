package contract

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/google/go-cmp/cmp"
)

// storeList is a conforming store list of n stores.
func storeList(n int) []byte {
	items := make([]string, n)
	for i := range items {
		items[i] = `{"store_id":"47","name":"Praha","timezone":"Europe/Prague"}`
	}
	return []byte(`{"stores":[` + strings.Join(items, ",") + `]}`)
}

func TestBoundLeavesNormalBodiesWhole(t *testing.T) {
	sp := mustSpec(t)
	for name, body := range map[string][]byte{
		"largest store list": storeList(1000), // 4,001 elements
		"error envelope":     []byte(judgeErrBody),
		"not JSON":           []byte(`{"stores":[1,`),
		"empty":              nil,
	} {
		if b := sp.bound(body); b.cut || string(b.view) != string(body) {
			t.Errorf("%s: cut %v, view %.80s", name, b.cut, b.view)
		}
	}
}

func TestBoundKeepsTheFirstElementsAndTheNamedMembers(t *testing.T) {
	sp := mustSpec(t)
	for _, tc := range []struct {
		n          int
		body, want string
		at         string
	}{
		{2, `[1, 2, 3, 4]`, `[1, 2]`, ""},
		{0, `[1,2]`, `[]`, ""},
		{3, `{"a":[1,2],"b":3}`, `{"a":[1,2]}`, ""},
		{2, `{"a":[1,2],"b":3}`, `{"a":[1]}`, "/a"},
		// Past the budget an object keeps the members the contract names,
		// so no required property goes missing.
		{1, `{"x":1,"y":2,"store_id":"47","z":{"name":"n","w":0}}`, `{"x":1,"store_id":"47"}`, ""},
		{0, `{"x":1,"y":2,"store_id":"47","stores":[1,2]}`, `{"store_id":"47","stores":[]}`, "/stores"},
		{1, `{"a~/b":[1,2]}`, `{"a~/b":[]}`, "/a~0~1b"},
		{1, `{"\u0073tores": [ 1 , 2 ], "q": "a,\"]}"}`, `{"\u0073tores": [   ]}`, "/stores"},
	} {
		b := sp.boundTo([]byte(tc.body), tc.n)
		if !b.cut || string(b.view) != tc.want || b.note().Path != tc.at || !json.Valid(b.view) {
			t.Errorf("boundTo(%s, %d) = %s at %q (cut %v), want %s at %q", tc.body, tc.n, b.view, b.note().Path, b.cut, tc.want, tc.at)
		}
	}
}

// schemaErrors counts the errors kin-openapi builds for the bounded view
// of a store list answer.
func schemaErrors(t testing.TB, sp *spec, body []byte) int {
	in, err := sp.input(opListStores, get("/v1/stores", nil, keyOwn, "47"), nil)
	if err != nil {
		t.Fatal(err)
	}
	err = openapi3filter.ValidateResponse(context.Background(), &openapi3filter.ResponseValidationInput{
		RequestValidationInput: in, Status: 200, Header: judgeJSON, Body: ioNop(sp.bound(body).view), Options: responseOptions})
	return len(flatten(err))
}

// TestWideBodyErrorsDoNotGrow counts the errors built and the allocations
// of judging bodies 10 and 100 times wider than what is itemised: neither
// grows with the body.
func TestWideBodyErrorsDoNotGrow(t *testing.T) {
	sp := mustSpec(t)
	narrow := repeatedN(`{"stores":[`, "{}", `]}`, 2*itemised)
	wide := repeatedN(`{"stores":[`, "{}", `]}`, 20*itemised)
	if n, m := schemaErrors(t, sp, narrow), schemaErrors(t, sp, wide); n != m || n > 4*itemised {
		t.Errorf("%d errors for %d items, %d for %d items; want the same, at most %d", n, 2*itemised, m, 20*itemised, 4*itemised)
	}
	judgeOnce := func(body []byte) func() {
		return func() {
			p := &probe{op: opListStores, name: "valid key", expect: []int{200}}
			sp.judge(context.Background(), p, get("/v1/stores", nil, keyOwn, "47"), nil, fixedNow(), 200, judgeJSON, body)
		}
	}
	a, b := testing.AllocsPerRun(1, judgeOnce(narrow)), testing.AllocsPerRun(1, judgeOnce(wide))
	if b > a*1.05 {
		t.Errorf("%.0f allocations for %d items, %.0f for %d items; want no growth", a, 2*itemised, b, 20*itemised)
	}
}

// repeatedN is head, n items separated by commas, then tail.
func repeatedN(head, item, tail string, n int) []byte {
	return []byte(head + strings.Repeat(item+",", n-1) + item + tail)
}

// judgeStores judges a store list answer.
func judgeStores(t *testing.T, body []byte) (Verdict, string, []Finding) {
	t.Helper()
	p := &probe{op: opListStores, name: "valid key", expect: []int{200}}
	return mustSpec(t).judge(context.Background(), p, get("/v1/stores", nil, keyOwn, "47"), nil, fixedNow(), http.StatusOK, judgeJSON, body)
}

func TestJudgeNotesCutFindings(t *testing.T) {
	verdict, detail, fs := judgeStores(t, repeatedN(`{"stores":[`, `{"store_id":"47","name":"Praha","timezone":"Europe/Prague","extra":1}`, `]}`, 50*itemised))
	if verdict != Drift || detail != "maximum number of items is 1000" || len(fs) != 3 {
		t.Fatalf("%s %q, %d findings: %+v", verdict, detail, len(fs), fs)
	}
	// The first 10,000 elements hold 1,999 stores (five elements each), and
	// the 2,000th store is the first to lose a member.
	if f := fs[1]; f.Path != "/stores/*/extra" || f.Count != 1999 {
		t.Errorf("second finding %+v, want the extra property of 1999 stores", f)
	}
	if last := fs[len(fs)-1]; last.Kind != FindingBody || last.Path != "/stores/1999" || !strings.HasPrefix(last.Message, "findings cut: ") {
		t.Errorf("last finding %+v, want the note that findings were cut", last)
	}
	// Many broken kinds still end with the note, within the limit.
	_, _, fs = judgeStores(t, repeatedN(`{"stores":[`, `{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7,"h":8,"i":9,"j":10,"k":11,"l":12,"m":13,"n":14,"o":15,"p":16,"q":17,"r":18,"s":19,"t":20}`, `]}`, itemised))
	if len(fs) != maxFindings || !strings.HasPrefix(fs[maxFindings-1].Message, "findings cut: ") {
		t.Errorf("%d findings, last %+v", len(fs), fs[len(fs)-1])
	}
}

// judgeView validates a store list answer through its view of n elements.
func judgeView(t *testing.T, body string, n int) []Finding {
	t.Helper()
	sp := mustSpec(t)
	in, err := sp.input(opListStores, get("/v1/stores", nil, keyOwn, "47"), nil)
	if err != nil {
		t.Fatal(err)
	}
	b := sp.boundTo([]byte(body), n)
	if !b.cut {
		t.Fatalf("%s is not cut at %d elements", body, n)
	}
	return sp.judgeBody(context.Background(), in, sp.ops[opListStores], 200, judgeJSON, b, []byte(body))
}

// TestJudgeFindsABreakPastTheView: when the bounded view conforms, the
// whole body is still validated, up to its first break.
func TestJudgeFindsABreakPastTheView(t *testing.T) {
	store := `{"store_id":"47","name":"Praha","timezone":"Europe/Prague"}`
	if fs := judgeView(t, `{"stores":[`+store+`,`+store+`]}`, 3); len(fs) != 0 {
		t.Errorf("a conforming body past the view: %+v", fs)
	}
	fs := judgeView(t, `{"stores":[`+store+`,{"store_id":"102","name":"Brno"}]}`, 3)
	if len(fs) != 1 || fs[0].Path != "/stores/1/timezone" {
		t.Errorf("a break past the view: %+v", fs)
	}
}

// TestJudgeFindsStructuralBreaksWithoutDecoding: a view that conforms
// with a long array or a lost property behind it is a break at once.
func TestJudgeFindsStructuralBreaksWithoutDecoding(t *testing.T) {
	store := `{"store_id":"47","name":"Praha","timezone":"Europe/Prague"}`
	for body, want := range map[string]Finding{
		`{"stores":[` + store + strings.Repeat(`,1`, 1000) + `]}`: {Kind: FindingSchema, Path: "/stores",
			Schema: "#/components/schemas/StoreList/properties/stores/maxItems", Message: "maximum number of items is 1000"},
		`{"stores":[` + store + `],"extra":1}`: {Kind: FindingSchema, Path: "/extra",
			Schema: "#/components/schemas/StoreList/additionalProperties", Message: `property "extra" is unsupported`},
	} {
		if fs := judgeView(t, body, 3); len(fs) != 1 || !cmp.Equal(fs[0], want) {
			t.Errorf("%+v, want %+v", fs, want)
		}
		// Found from what the trimmer saw, before any decoding.
		sp := mustSpec(t)
		if got := sp.firstBreak(sp.ops[opListStores], 200, sp.boundTo([]byte(body), 3).cuts); len(got) != 1 || !cmp.Equal(got[0], want) {
			t.Errorf("firstBreak = %+v, want %+v", got, want)
		}
	}
}

// TestRepeatedKeysCostTheViewNothing: a name repeated past the budget
// neither cuts a body nor changes the value it decodes to.
func TestRepeatedKeysCostTheViewNothing(t *testing.T) {
	sp := mustSpec(t)
	body := `{"stores":[{"store_id":"47","timezone":"Europe/Prague"` + strings.Repeat(`,"name":"a"`, 3*itemised) + `,"name":"b"}]}`
	if b := sp.bound([]byte(body)); b.cut {
		t.Errorf("repeated names cut the body at %q", b.note().Path)
	}
	if b := sp.boundTo([]byte(`{"a":1,"x":2,"a":3}`), 1); string(b.view) != `{"a":1,"a":3}` {
		t.Errorf("view %s, want the repeated key kept", b.view)
	}
}

// FuzzBound: the view of any JSON document is a JSON document.
func FuzzBound(f *testing.F) {
	for _, s := range []string{`[1, 2, 3]`, `{"a":[1,2],"b":3}`, `{"x":1,"store_id":"47","z":{"name":"n"}}`, `{"\u0073tores": [ 1 , 2 ], "q": "a,\"]}"}`, `[[[]],{}]`, `"s"`} {
		f.Add([]byte(s), 1)
	}
	sp, err := loadSpec()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, body []byte, n int) {
		b := sp.boundTo(body, max(n%50, 0))
		if json.Valid(body) && !json.Valid(b.view) {
			t.Errorf("boundTo(%s, %d) = %s, not JSON", body, n, b.view)
		}
	})
}

// TestProxyCutsFindingsOfAWideAnswer: the proxy forwards a wide answer
// whole and writes its first findings, ending with the note.
func TestProxyCutsFindingsOfAWideAnswer(t *testing.T) {
	body := repeatedN(`{"stores":[`, "{}", `]}`, 10*itemised)
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
	t.Cleanup(upstream.Close)
	srv, _, out := startProxy(t, upstream.URL)
	got := send(t, http.MethodGet, srv.URL+"/v1/stores", newFake().keys["47"], nil)
	if got.status != http.StatusOK || len(got.body) != len(body) {
		t.Fatalf("forwarded %d with %d bytes, want 200 with %d", got.status, len(got.body), len(body))
	}
	fs := out.findings(t)
	if len(fs) == 0 || len(fs) > maxFindings || fs[0].Field != "/stores/*/store_id" || fs[0].Count != itemised-1 {
		t.Fatalf("%d findings: %+v", len(fs), fs)
	}
	if last := fs[len(fs)-1]; last.Kind != FindingBody || !strings.HasPrefix(last.Message, "findings cut: ") {
		t.Errorf("last finding %+v, want the note", last)
	}
}
