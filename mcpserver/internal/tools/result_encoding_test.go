package tools

import (
	"bytes"
	"encoding/json"
	"reflect"
	"testing"
	"unsafe"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkWire is what the SDK's JSON-RPC layer writes for a result
// (jsonrpc2.jsonMarshal: an Encoder without HTML escaping, the newline cut).
func sdkWire(t *testing.T, v any) []byte {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatal(err)
	}
	return bytes.TrimRight(buf.Bytes(), "\n")
}

// withResultType sets the unexported field the SDK sets for 2026-07-28
// sessions.
func withResultType(t *testing.T, r *mcp.CallToolResult, rt string) *mcp.CallToolResult {
	t.Helper()
	if resultTypeField < 0 {
		t.Fatal("CallToolResult has no resultType field: the SDK changed, and encodeResult no longer applies")
	}
	f := reflect.ValueOf(r).Elem().Field(resultTypeField)
	reflect.NewAt(f.Type(), unsafe.Pointer(f.UnsafeAddr())).Elem().SetString(rt)
	return r
}

func TestEncodedResultsAreWhatTheSDKWrites(t *testing.T) {
	texts := []string{
		`{"ok":true,"data":{"headline":"Runs out between 17:55 and 18:24 today"}}`,
		`{"ok":true,"data":{"name":"<b>Mléko & máslo</b>","note":"line\u2028sep\u2029para","ctl":"\u0001\t\n\r\b\f\\\"","emoji":"🧈"}}`,
		"",
		"plain text, not JSON",
		"bad UTF-8 \xff\xfe in the text",
	}
	var cases []*mcp.CallToolResult
	for _, text := range texts {
		cases = append(cases,
			&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}},
			&mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, IsError: true},
		)
		if json.Valid([]byte(text)) && text != "" {
			// As succeed builds it: the same JSON as text and as structured
			// content, the latter from json.Marshal.
			var v any
			if err := json.Unmarshal([]byte(text), &v); err != nil {
				t.Fatal(err)
			}
			b, err := json.Marshal(v)
			if err != nil {
				t.Fatal(err)
			}
			cases = append(cases, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(b)}}, StructuredContent: json.RawMessage(b)})
			// White space in the structured content: the SDK compacts it.
			var indented bytes.Buffer
			_ = json.Indent(&indented, b, "", "  ")
			cases = append(cases, &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}, StructuredContent: json.RawMessage(indented.Bytes())})
		}
	}
	for i, r := range cases {
		for _, rt := range []string{"", "complete"} {
			r := withResultType(t, r, rt)
			raw, ok := encodeResult(r)
			if !ok {
				t.Fatalf("case %d (%q): not encoded", i, rt)
			}
			want := sdkWire(t, r)
			got := sdkWire(t, &encodedResult{CallToolResult: r, raw: raw})
			if !bytes.Equal(got, want) {
				t.Errorf("case %d, resultType %q:\n got %s\nwant %s", i, rt, got, want)
			}
		}
	}
}

func TestResultsOfAnotherShapeAreLeftToTheSDK(t *testing.T) {
	text := &mcp.TextContent{Text: "x"}
	for name, r := range map[string]*mcp.CallToolResult{
		"two contents":                      {Content: []mcp.Content{text, text}},
		"no content":                        {},
		"an image":                          {Content: []mcp.Content{&mcp.ImageContent{Data: []byte{1}, MIMEType: "image/png"}}},
		"text with _meta":                   {Content: []mcp.Content{&mcp.TextContent{Text: "x", Meta: mcp.Meta{"k": 1}}}},
		"text with annotations":             {Content: []mcp.Content{&mcp.TextContent{Text: "x", Annotations: &mcp.Annotations{Priority: 1}}}},
		"result _meta":                      {Content: []mcp.Content{text}, Meta: mcp.Meta{"k": 1}},
		"request state":                     {Content: []mcp.Content{text}, RequestState: "s"},
		"structured as a map":               {Content: []mcp.Content{text}, StructuredContent: map[string]any{"a": 1}},
		"a nil raw message":                 {Content: []mcp.Content{text}, StructuredContent: json.RawMessage(nil)},
		"structured with <":                 {Content: []mcp.Content{text}, StructuredContent: json.RawMessage(`{"a":"<b>"}`)},
		"structured with &":                 {Content: []mcp.Content{text}, StructuredContent: json.RawMessage(`{"a":"&"}`)},
		"structured with U+2028":            {Content: []mcp.Content{text}, StructuredContent: json.RawMessage("{\"a\":\"\u2028\"}")},
		"structured with U+2029":            {Content: []mcp.Content{text}, StructuredContent: json.RawMessage("{\"a\":\"\u2029\"}")},
		"input requests (nothing else set)": {InputRequests: mcp.InputRequestMap{}},
	} {
		if _, ok := encodeResult(r); ok {
			t.Errorf("%s: encoded, want it left to the SDK", name)
		}
	}
}
