package stdiotransport

import (
	"bytes"
	"reflect"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
)

// fastLines are requests decodeRequest must read itself.
var fastLines = []string{
	`{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"korral_check_stock_risk","arguments":{"sku":"8847291","store_id":"47"}}}`,
	`{"method":"tools/call","params":{"name":"korral_list_authorized_stores","arguments":{}},"jsonrpc":"2.0","id":3}`,
	`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
	`{"jsonrpc":"2.0","id":"req-7","method":"ping"}`,
	`{"jsonrpc":"2.0","id":-5,"method":"ping","params":[]}`,
	`{"jsonrpc":"2.0","id":0,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":-0,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":999999999999999999,"method":"ping"}`,
	` { "jsonrpc" : "2.0" ,	"id" : 1 , "method" : "x" , "params" : { "a" : [ 1 , { "b" : "}]\"{" } ] } } `,
	`{"jsonrpc":"2.0","id":1,"method":"","params":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"n","arguments":{"q":"Přírodní \u00e1 \\ \" /"}}}`,
	`{"jsonrpc":"2.0","id":"","method":"m"}`,
}

// generalLines go to decodeGeneral, whatever it makes of them.
var generalLines = []string{
	`{"jsonrpc":"2.0","id":1234567890123456789,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":12345678901234567890,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1.0,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1e2,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":true,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":{},"method":"ping"}`,
	`{"jsonrpc":"2.0","id":"r\u0031","method":"ping"}`,
	`{"jsonrpc":"2.0","id":"é","method":"ping"}`,
	`{"jsonrpc":"2\u002e0","id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0 ","id":1,"method":"ping"}`,
	`{"jsonrpc":2.0,"id":1,"method":"ping"}`,
	`{"jsonrpc":"1.0","id":1,"method":"ping"}`,
	`{"id":1,"method":"ping"}`,
	`{"jsonrpc":"2.0","id":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"pi\u006eg"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping\u0000"}`,
	`{"jsonrpc":"2.0","id":1,"method":"piñg"}`,
	"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"p\xffg\"}",
	`{"jsonrpc":"2.0","id":1,"method":null}`,
	`{"jsonrpc":"2.0","id":1,"method":5}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":null}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":"x"}`,
	`{"jsonrpc":"2.0","id":1,"method":"ping","params":7}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}`,
	`{"jsonrpc":"2.0","id":1,"id":2,"method":"a"}`,
	`{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","params":{},"params":[]}`,
	`{"Jsonrpc":"2.0","id":1,"method":"a"}`,
	`{"jsonrpc":"2.0","ID":1,"method":"a"}`,
	`{"jsonrpc":"2.0","id":1,"METHOD":"a"}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","extra":1}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","result":{}}`,
	`{"jsonrpc":"2.0","id":1,"method":"a","error":{"code":1,"message":"m"}}`,
	`{"jsonrpc":"2.0","id":1,"result":{}}`,
	`{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"no"}}`,
	`{"jsonrpc":"2.0","id":1,"method":"a"} {}`,
	`{"jsonrpc":"2.0","id":1,"method":"a"`,
	`{"jsonrpc":"2.0","id":1,"method":"a",}`,
	`{"json\u0072pc":"2.0","id":1,"method":"a"}`,
	`[{"jsonrpc":"2.0","id":1,"method":"a"}]`,
	`"2.0"`,
	`{}`,
	``,
	`   `,
	`nul`,
}

// sameAsGeneral fails unless decodeRequest's answer for line, when it
// gives one, is decodeGeneral's.
func sameAsGeneral(t *testing.T, line []byte) (fast bool) {
	t.Helper()
	got, ok := decodeRequest(line)
	if !ok {
		return false
	}
	want, ferr := decodeGeneral(line)
	if ferr != nil {
		t.Fatalf("%q: the one-scan read accepted a line the general read refuses (%+v)", line, ferr)
	}
	wreq, isReq := want.(*jsonrpc.Request)
	if !isReq {
		t.Fatalf("%q: the general read made a %T", line, want)
	}
	if !reflect.DeepEqual(got.ID, wreq.ID) || got.Method != wreq.Method || !bytes.Equal(got.Params, wreq.Params) ||
		(got.Params == nil) != (wreq.Params == nil) {
		t.Fatalf("%q:\none scan %+v (params %q)\ngeneral  %+v (params %q)", line, got, got.Params, wreq, wreq.Params)
	}
	return true
}

// TestOneScanRequestsReadAsTheGeneralDecode: the usual request lines are
// read in one scan, with the id, method and params the general decode
// gives; every other line goes to the general decode.
func TestOneScanRequestsReadAsTheGeneralDecode(t *testing.T) {
	for _, line := range fastLines {
		if !sameAsGeneral(t, []byte(line)) {
			t.Errorf("%s: not read in one scan", line)
		}
	}
	for _, line := range generalLines {
		if sameAsGeneral(t, []byte(line)) {
			t.Errorf("%s: read in one scan; it must go to the general decode", line)
		}
	}
	// Every hostile frame of the reader's tests is refused by both reads.
	for _, frame := range hostileFrames {
		sameAsGeneral(t, []byte(frame))
	}
}

// The line's buffer is read into again for the next line: params must not
// share it.
func TestOneScanParamsOwnTheirBytes(t *testing.T) {
	line := []byte(fastLines[0])
	req, ok := decodeRequest(line)
	if !ok {
		t.Fatal("not read in one scan")
	}
	before := string(req.Params)
	copy(line, bytes.Repeat([]byte("x"), len(line)))
	if string(req.Params) != before {
		t.Fatalf("params changed with the line's buffer: %q", req.Params)
	}
}

// FuzzDecodeRequest: whatever decodeRequest reads, the general decode reads
// the same way.
func FuzzDecodeRequest(f *testing.F) {
	for _, l := range fastLines {
		f.Add([]byte(l))
	}
	for _, l := range generalLines {
		f.Add([]byte(l))
	}
	f.Add([]byte(strings.Replace(fastLines[0], `"id":12`, `"id":"12"`, 1)))
	f.Fuzz(func(t *testing.T, line []byte) {
		sameAsGeneral(t, line)
	})
}
