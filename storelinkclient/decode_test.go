package storelinkclient_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/google/go-cmp/cmp"
	sl "github.com/korral/storelink/storelinkclient"
)

// decodeTypes are the types the one-pass decode is compared with
// encoding/json against: every generated body type, the error body, and
// the odd types of the scanner's tests (which it leaves to encoding/json).
func decodeTypes() []any {
	return append(scanTypes(), &sl.Error{}, &sl.WeeklyHours{}, &sl.StoreSummary{}, &sl.POSTransaction{})
}

// sameDecode fails when decodeBody and json.Unmarshal into a new value of
// v's type differ: in accepting body, in the error, or in the value; and
// when the fields found are not those of BodyFields.
func sameDecode(t *testing.T, what string, body []byte, v any) {
	t.Helper()
	if reflect.TypeOf(v).Kind() != reflect.Pointer {
		return
	}
	typ := reflect.TypeOf(v).Elem()
	want, got := reflect.New(typ).Interface(), reflect.New(typ).Interface()
	wantErr := json.Unmarshal(body, want)
	fields, gotErr := sl.DecodeBody(body, got)
	if fmt.Sprint(wantErr) != fmt.Sprint(gotErr) || reflect.TypeOf(wantErr) != reflect.TypeOf(gotErr) {
		t.Fatalf("%s into %T: error %v, encoding/json %v\nbody: %.300q", what, v, gotErr, wantErr, body)
	}
	if wantErr != nil {
		return
	}
	if !reflect.DeepEqual(want, got) {
		t.Fatalf("%s into %T: value (-encoding/json +decode):\n%s\nbody: %.300q", what, v, cmp.Diff(want, got), body)
	}
	walk := sl.BodyFields(body, want)
	if !slices.Equal(walk.Problems, fields.Problems) || !slices.Equal(walk.Absent.Pointers(), fields.Absent.Pointers()) {
		t.Fatalf("%s into %T: fields %v %v, BodyFields %v %v\nbody: %.300q", what, v, fields.Problems, fields.Absent.Pointers(),
			walk.Problems, walk.Absent.Pointers(), body)
	}
}

// decodeEdges are bodies at the edges of what encoding/json accepts into
// the generated types.
func decodeEdges() []string {
	return []string{
		`{"on_hand_units":9223372036854775807,"store_id":"47","sku":"1","counted_at":"2026-11-27T06:00:00Z"}`,
		`{"on_hand_units":9223372036854775808}`,
		`{"on_hand_units":-9223372036854775808}`,
		`{"on_hand_units":-9223372036854775809}`,
		`{"on_hand_units":-0}`, `{"on_hand_units":1.0}`, `{"on_hand_units":1e2}`, `{"on_hand_units":01}`,
		`{"on_hand_units":"5"}`, `{"on_hand_units":true}`, `{"on_hand_units":null}`, `{"on_hand_units":[]}`,
		`{"counted_at":"2026-11-27T06:00:00+01:00"}`, `{"counted_at":"2026-11-27T06:00:00.123456789-13:30"}`,
		`{"counted_at":"2026-11-27 06:00:00Z"}`, `{"counted_at":"2026-11-27T06:00:00\u005a"}`, `{"counted_at":5}`,
		`{"counted_at":null}`, `{"counted_at":"2026-02-30T06:00:00Z"}`, `{"counted_at":"2026-11-27T24:00:00Z"}`,
		`{"counted_at":"2026-11-27T06:00:00+24:00"}`, `{"counted_at":""}`,
		`{"sku":"a\u00e9\ud83d\ude00\n\"b","store_id":"` + "\xff" + `x"}`, `{"sku":"` + "é" + `"}`,
		`{"SKU":"1"}`, `{"Sku":"1","sku":"2"}`, `{"sku":"1","SKU":"2"}`, `{"sku":"1","sku":"2"}`, `{"ſku":"1"}`,
		`{"sku":"1"} `, `{"sku":"1"} x`, `{"sku":"1"}{}`, ` null `, `[]`, `"s"`, `{}`, ``,
		`{"transactions":[]}`, `{"transactions":null}`, `{"transactions":[null,{}]}`, `{"transactions":{}}`,
		`{"transactions":[{"units":1},{"units":"x"}],"store_id":"47"}`, `{"next_cursor":null}`, `{"next_cursor":"c"}`,
		`{"next_cursor":5}`, `{"shelf_life_days":3,"chilled":true,"case_pack":12}`, `{"chilled":"true"}`, `{"chilled":null}`,
		`{"opening_hours":{"monday":{"closed":false,"opens":"08:00","closes":null}}}`, `{"opening_hours":[]}`,
		`{"error":{"code":"not_found","message":"no"}}`, `{"error":"boom"}`, `{"stores":[{"name":"A","store_id":"1"}]}`,
		`{"ratio":1e400}`, `{"ratio":-1.5e-3,"small":127}`, `{"small":128}`, `{"requested":{"count":-1}}`,
		`{"requested":{"count":4294967296}}`, `{"requested":{"count":4294967295}}`,
	}
}

// TestDecodeMatchesEncodingJSON: on every fixture, every mutation of the
// good answers and every edge body, against every type, the one-pass
// decode accepts, refuses and fills as json.Unmarshal does.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	bodies := [][]byte{}
	for _, b := range decodeEdges() {
		bodies = append(bodies, []byte(b))
	}
	for name, body := range fixtures(t) {
		bodies = append(bodies, body)
		if strings.HasPrefix(name, "good ") || strings.HasPrefix(name, "repeated") {
			bodies = append(bodies, mutations(body)...)
		}
	}
	for i, body := range bodies {
		for _, v := range decodeTypes() {
			sameDecode(t, fmt.Sprintf("body %d", i), body, v)
		}
	}
	t.Logf("%d bodies, each against %d types", len(bodies), len(decodeTypes()))
}

// TestGoodAnswersDecodeInOnePass: the contract's good answers, a POS page
// with offsets in its times and escapes in its strings, are filled by the
// decode itself, not left to encoding/json.
func TestGoodAnswersDecodeInOnePass(t *testing.T) {
	types := map[string]any{"listStores": &sl.StoreList{}, "getStore": &sl.Store{}, "getInventory": &sl.Inventory{},
		"listPOSTransactions": &sl.POSPage{}, "createReplenishmentOrder": &sl.Order{}, "getReplenishmentOrder": &sl.Order{},
		"getSKU": &sl.SKU{}, "getSupplier": &sl.Supplier{}}
	found := 0
	for name, body := range fixtures(t) {
		op, ok := strings.CutPrefix(name, "good ")
		if !ok {
			continue
		}
		v, ok := types[op]
		if !ok {
			t.Fatalf("no type for %s", op)
		}
		found++
		if !sl.DecodedInOnePass(body, v) {
			t.Errorf("%s: left to encoding/json: %s", op, body)
		}
	}
	if found != len(types) {
		t.Errorf("%d good answers, want %d", found, len(types))
	}
	page := bytes.Replace(posPageBody(t, 3), []byte(`"T-47`), []byte(`"\u0054-47`), 1)
	if !sl.DecodedInOnePass(page, &sl.POSPage{}) {
		t.Errorf("a POS page is left to encoding/json")
	}
	sameDecode(t, "a POS page", page, &sl.POSPage{})
}

// FuzzDecodeBody compares the one-pass decode with encoding/json on any
// body, against every type; the seeds are the fixtures and edge bodies,
// the POS ones included.
func FuzzDecodeBody(f *testing.F) {
	for _, body := range fixtures(f) {
		f.Add(body)
	}
	for _, body := range decodeEdges() {
		f.Add([]byte(body))
	}
	for _, body := range posEdges() {
		f.Add([]byte(body))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		deep := bytes.Count(body, []byte("{")) > 64
		for _, v := range decodeTypes() {
			switch v.(type) {
			case *oddNode, *oddShape:
				if deep {
					continue
				}
			}
			sameDecode(t, "fuzzed", body, v)
		}
	})
}

// TestParseReadsBodiesAsReadAll: with a Content-Length that is right, too
// small, too large or absent, the parse keeps the bytes io.ReadAll reads.
func TestParseReadsBodiesAsReadAll(t *testing.T) {
	body := posPageBody(t, 20)
	header := http.Header{"Content-Type": {"application/json"}}
	for _, n := range []int64{int64(len(body)), 10, int64(len(body)) + 100, -1, 0} {
		resp, err := sl.ParseListPOSTransactionsResponse(&http.Response{StatusCode: 200, Header: header, ContentLength: n,
			Body: io.NopCloser(iotest.OneByteReader(bytes.NewReader(body)))})
		if err != nil || !bytes.Equal(resp.Body, body) || resp.JSON200 == nil || len(resp.JSON200.Transactions) != 20 {
			t.Errorf("Content-Length %d: %v, %d bytes kept of %d", n, err, len(resp.Body), len(body))
		}
	}
	// A read error is the parse's error, as with io.ReadAll.
	_, err := sl.ParseListPOSTransactionsResponse(&http.Response{StatusCode: 200, Header: header, ContentLength: -1,
		Body: io.NopCloser(iotest.TimeoutReader(bytes.NewReader(body)))})
	if !errors.Is(err, iotest.ErrTimeout) {
		t.Errorf("read error: %v, want %v", err, iotest.ErrTimeout)
	}
}

// TestDecodedStringsOutliveTheReadBuffer: a body of unknown length is
// read into a reused buffer; neither the kept body nor a decoded string
// changes when the next body is read into it.
func TestDecodedStringsOutliveTheReadBuffer(t *testing.T) {
	header := http.Header{"Content-Type": {"application/json"}}
	parse := func(body []byte) *sl.ListPOSTransactionsResponse {
		resp, err := sl.ParseListPOSTransactionsResponse(&http.Response{StatusCode: 200, Header: header, ContentLength: -1,
			Body: io.NopCloser(bytes.NewReader(body))})
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	first := posPageBody(t, 5)
	kept := bytes.Clone(first)
	resp := parse(first)
	id := resp.JSON200.Transactions[0].TransactionID
	for range 10 {
		parse(bytes.ReplaceAll(posPageBody(t, 5), []byte("T-47"), []byte("X-99")))
	}
	if !bytes.Equal(resp.Body, kept) || id != "T-47-20261113-000000" || resp.JSON200.Transactions[0].TransactionID != id {
		t.Errorf("first answer changed: id %q, body equal %v", resp.JSON200.Transactions[0].TransactionID, bytes.Equal(resp.Body, kept))
	}
}

// TestCountItems: the capacity hint of an array counts its items after
// the '[', whatever strings and nested values hold, and stops at its end.
func TestCountItems(t *testing.T) {
	for _, c := range []struct {
		after string
		want  int
	}{
		{`1]`, 1},
		{`1,2,3]`, 3},
		{`1, 2 ,3 ] , 4, 5`, 3},
		{`"a,b]","c\",d",{"e":[1,2,3],"f":{"g":","}}],[9,9]`, 3},
		{`"\\",1]`, 2},
		{`[1,2],[3,4],{"a":1,"b":2}]`, 3},
		{`1,2`, 2}, // the body ends first
		{strings.Repeat(`{},`, 5000) + `{}]`, 4096},
	} {
		if got := sl.CountItems([]byte(c.after)); got != c.want {
			t.Errorf("[%.40s: %d items, want %d", c.after, got, c.want)
		}
	}
}

// TestDecodedLinesInOneAllocation: the decode sizes a page's slice of
// lines once, from the count of its items, so a page of 1,000 lines
// allocates as often as a page of one.
func TestDecodedLinesInOneAllocation(t *testing.T) {
	skipUnderRace(t)
	allocs := func(n int) float64 {
		body := posPageBody(t, n)
		return testing.AllocsPerRun(20, func() {
			var page sl.POSPage
			if _, err := sl.DecodeBody(body, &page); err != nil || len(page.Transactions) != n {
				t.Fatalf("%d lines: %d decoded, %v", n, len(page.Transactions), err)
			}
		})
	}
	one := allocs(1)
	for _, n := range []int{93, 1000} {
		if got := allocs(n); got != one {
			t.Errorf("decoding %d lines: %.0f allocations, one line %.0f", n, got, one)
		}
	}
}
