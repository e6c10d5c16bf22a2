package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
	"github.com/korral/storelink/mcpserver/internal/stdiotransport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// sdkWire is what the SDK's JSON-RPC layer writes for a result
// (jsonrpc2.jsonMarshal: an Encoder without HTML escaping, the newline cut).
func sdkWire(t *testing.T, v any) []byte {
	t.Helper()
	b, err := wireOf(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// wireOf is sdkWire that returns the error.
func wireOf(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	err := enc.Encode(v)
	return bytes.TrimRight(buf.Bytes(), "\n"), err
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

// stdioAnswers sends lines to the tools server over our stdio transport,
// served by serve, and returns the answers; an outermost middleware counts
// the encoded results that carried their connection's Deferred.
func stdioAnswers(t *testing.T, lines []string, serve func(context.Context, *mcp.Server, *stdiotransport.Transport) error) (answers []string, encoded, deferred int) {
	t.Helper()
	ms := New(Options{Upstream: newFake(), Keyring: func() *keyring.Keyring { return mustKeyring(t, `{"47":"k1"}`) },
		Now: func() time.Time { return testNow }})
	var mu sync.Mutex
	ms.AddReceivingMiddleware(func(next mcp.MethodHandler) mcp.MethodHandler {
		return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
			res, err := next(ctx, method, req)
			if r, ok := res.(*encodedResult); ok {
				mu.Lock()
				encoded++
				if r.deferred != nil {
					deferred++
				}
				mu.Unlock()
			}
			return res, err
		}
	})
	answers = mcptest.StdioAnswers(t, lines, func(ctx context.Context, in io.Reader, out io.Writer) error {
		return serve(ctx, ms, &stdiotransport.Transport{Reader: in, Writer: out})
	})
	mu.Lock()
	defer mu.Unlock()
	return answers, encoded, deferred
}

// TestDeferredResultLinesAreUnchanged runs the same calls through the
// tools server over our stdio transport, once with Server.Run (every
// result encoded by the JSON-RPC layer) and once with Serve (results
// written by the connection in place of a placeholder): the lines are byte
// for byte the same, for a 2025 session and a 2026-07-28 one.
func TestDeferredResultLinesAreUnchanged(t *testing.T) {
	call := func(id, args, meta string) string {
		return `{"jsonrpc":"2.0","id":` + id + `,"method":"tools/call","params":{"name":"korral_check_stock_risk","arguments":` + args + meta + `}}`
	}
	butter := `{"store_id":"47","sku":"8847291"}`
	meta := `,"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}`
	for _, tc := range []struct {
		name     string
		lines    []string
		answers  int
		encoded  int
		contains map[int]string
	}{
		{"2025-06-18", []string{
			`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"host","version":"1"}}}`,
			`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
			call(`1`, butter, ""),
			call(`"risk-2"`, butter, ""),
			call(`"needs \"escapes\""`, butter, ""),
			call(`4`, `{"store_id":"102","sku":"8847291"}`, ""),
			`{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"korral_list_authorized_stores","arguments":{}}}`,
			`{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"korral_nope","arguments":{}}}`,
			`{"jsonrpc":"2.0","id":7,"method":"ping"}`,
		}, 8, 5, map[int]string{
			1: `"id":1,"result":{"content":[{"type":"text","text":"{\"ok\":true`,
			4: `"id":4,"result":{"content":[{"type":"text","text":"{\"ok\":false`,
			6: `"id":6,"error":{`,
		}},
		{"2026-07-28", []string{
			`{"jsonrpc":"2.0","id":0,"method":"server/discover","params":{` + meta[1:] + `}}`,
			call(`1`, butter, meta),
			call(`"needs \"escapes\""`, butter, meta),
			call(`3`, `{"store_id":"102","sku":"8847291"}`, meta),
		}, 4, 3, map[int]string{
			1: `"resultType":"complete"}}`,
			3: `{\"ok\":false`,
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want, encoded, deferred := stdioAnswers(t, tc.lines, func(ctx context.Context, s *mcp.Server, tr *stdiotransport.Transport) error {
				return s.Run(ctx, tr)
			})
			if encoded != tc.encoded || deferred != 0 {
				t.Fatalf("Server.Run: %d results encoded, %d with a Deferred; want %d and 0", encoded, deferred, tc.encoded)
			}
			got, encoded, deferred := stdioAnswers(t, tc.lines, func(ctx context.Context, s *mcp.Server, tr *stdiotransport.Transport) error {
				return tr.Serve(ctx, s)
			})
			if encoded != tc.encoded || deferred != tc.encoded {
				t.Fatalf("Serve: %d results encoded, %d with a Deferred; want %d and %d", encoded, deferred, tc.encoded, tc.encoded)
			}
			if len(got) != tc.answers || len(want) != tc.answers {
				t.Fatalf("%d answers through Serve, %d through Run, want %d", len(got), len(want), tc.answers)
			}
			for i := range want {
				if got[i] != want[i] {
					t.Errorf("answer %d:\nServe %s\n  Run %s", i, got[i], want[i])
				}
			}
			for i, part := range tc.contains {
				if !strings.Contains(got[i], part) {
					t.Errorf("answer %d lacks %s: ...%s", i, part, got[i][max(0, len(got[i])-150):])
				}
			}
		})
	}
}

// The SDK sets _meta (serverInfo) and resultType on a 2026-07-28 request's
// result after the middlewares: the result written is still what the SDK
// writes for it.
func TestResultsChangedAfterEncodingAreWhatTheSDKWrites(t *testing.T) {
	impl := &mcp.Implementation{Name: "storelink <mcp> & co", Version: "1.2.3", Title: "Korral\u2028StoreLink"}
	for name, change := range map[string]func(r *mcp.CallToolResult){
		"serverInfo":            func(r *mcp.CallToolResult) { r.SetMeta(mcp.Meta{mcp.MetaKeyServerInfo: impl}) },
		"two keys":              func(r *mcp.CallToolResult) { r.SetMeta(mcp.Meta{mcp.MetaKeyServerInfo: impl, "a": []int{1}}) },
		"empty _meta":           func(r *mcp.CallToolResult) { r.SetMeta(mcp.Meta{}) },
		"resultType":            func(r *mcp.CallToolResult) { withResultType(t, r, "complete") },
		"resultType and _meta":  func(r *mcp.CallToolResult) { withResultType(t, r, "complete"); r.SetMeta(mcp.Meta{"k": "v"}) },
		"_meta that is no JSON": func(r *mcp.CallToolResult) { r.SetMeta(mcp.Meta{"f": func() {}}) },
	} {
		for _, isError := range []bool{false, true} {
			r := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: `{"ok":true}`}}, IsError: isError}
			if !isError {
				r.StructuredContent = json.RawMessage(`{"ok":true}`)
			}
			raw, ok := encodeResult(r)
			if !ok {
				t.Fatal("not encoded")
			}
			enc := &encodedResult{CallToolResult: r, raw: raw, resultType: resultTypeOf(r)}
			change(r)
			got, gotErr := wireOf(enc)
			want, wantErr := wireOf(r)
			if !bytes.Equal(got, want) || (gotErr == nil) != (wantErr == nil) {
				t.Errorf("%s: changed after encoding:\n got %s (%v)\nwant %s (%v)", name, got, gotErr, want, wantErr)
			}
		}
	}
}

// encodeMeta reuses a serverInfo's encoding only for the same server, and
// only when the _meta holds nothing else.
func TestServerInfoEncodingIsReusedOnlyForTheSameServer(t *testing.T) {
	one := &mcp.Implementation{Name: "one", Version: "1"}
	two := &mcp.Implementation{Name: "two", Version: "2"}
	for i, meta := range []mcp.Meta{
		{mcp.MetaKeyServerInfo: one},
		{mcp.MetaKeyServerInfo: one},
		{mcp.MetaKeyServerInfo: two},
		{mcp.MetaKeyServerInfo: one, "k": "v"},
		{mcp.MetaKeyServerInfo: one},
		{mcp.MetaKeyServerInfo: map[string]any{"name": "three"}},
		{mcp.MetaKeyServerInfo: (*mcp.Implementation)(nil)},
		{mcp.MetaKeyServerInfo: two},
	} {
		got, err := encodeMeta(meta)
		want, wantErr := json.Marshal(map[string]any(meta))
		if !bytes.Equal(got, want) || (err == nil) != (wantErr == nil) {
			t.Errorf("%d: %s (%v), want %s (%v)", i, got, err, want, wantErr)
		}
	}
}
