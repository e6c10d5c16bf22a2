package tools

import (
	"context"
	"encoding/json"
	"reflect"
	"sync/atomic"

	"github.com/korral/storelink/mcpserver/internal/stdiotransport"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK encodes a tool's result by reflection: CallToolResult.MarshalJSON
// encodes a wire struct, which encodes the text content through its own
// MarshalJSON and compacts the structured content, and the JSON-RPC layer
// then compacts the whole result once more. For a risk check that is four
// passes over each copy of the answer. encodeResults writes the result of
// the shape our tools return in one pass, with the same bytes
// (TestEncodedResultsAreWhatTheSDKWrites), and the JSON-RPC layer's own
// compaction is the only other pass. See docs/benchmarks.md, run G. On our
// stdio transport that pass goes too: the connection writes the bytes in
// the response itself (stdiotransport.Deferred).

// encodedResult is a tool result with its JSON already written. Embedding
// the result keeps it an mcp.Result.
type encodedResult struct {
	*mcp.CallToolResult
	raw []byte
	// resultType is the result's resultType when raw was written.
	resultType string
	// deferred, when set, is the connection that writes raw in the
	// response in place of a placeholder.
	deferred    *stdiotransport.Deferred
	placeholder [stdiotransport.MaxPlaceholderBytes]byte
}

// MarshalJSON returns the JSON written by encodeResult, or a placeholder
// the connection writes it in place of.
//
// For a 2026-07-28 request the SDK sets the result's _meta (its
// serverInfo) and may set its resultType after the middlewares have run,
// so raw is brought up to date first: with the _meta written as the SDK
// writes it, or, after any other change, by the SDK's own encoding.
func (r *encodedResult) MarshalJSON() ([]byte, error) {
	raw := r.raw
	if r.Meta != nil || resultTypeOf(r.CallToolResult) != r.resultType {
		var ok bool
		if raw, ok = r.withMeta(); !ok {
			return r.CallToolResult.MarshalJSON()
		}
	}
	if p, ok := r.deferred.Defer(r.placeholder[:0], raw); ok {
		return p, nil
	}
	return raw, nil
}

// withMeta is raw with the result's _meta written first in the object, as
// the SDK's encoding places it; ok is false when the resultType changed
// too, or the _meta is not JSON.
func (r *encodedResult) withMeta() (raw []byte, ok bool) {
	if resultTypeOf(r.CallToolResult) != r.resultType {
		return nil, false
	}
	if len(r.Meta) == 0 {
		// The SDK omits an empty _meta.
		return r.raw, true
	}
	meta, err := encodeMeta(r.Meta)
	if err != nil {
		return nil, false
	}
	b := make([]byte, 0, len(`{"_meta":,`)+len(meta)+len(r.raw))
	b = append(b, `{"_meta":`...)
	b = append(b, meta...)
	b = append(b, ',')
	return append(b, r.raw[1:]...), true
}

// serverInfoMeta is the encoding of the last _meta that held only the
// SDK's serverInfo: the same *mcp.Implementation (the server's own, never
// changed once the server is made) on every result of a session.
var serverInfoMeta atomic.Pointer[encodedServerInfo]

type encodedServerInfo struct {
	impl *mcp.Implementation
	json []byte
}

// encodeMeta is json.Marshal(meta), taken from serverInfoMeta when meta
// holds only the serverInfo it was written for.
func encodeMeta(meta mcp.Meta) ([]byte, error) {
	impl, only := meta[mcp.MetaKeyServerInfo].(*mcp.Implementation)
	if !only || len(meta) != 1 || impl == nil {
		return json.Marshal(map[string]any(meta))
	}
	if c := serverInfoMeta.Load(); c != nil && c.impl == impl {
		return c.json, nil
	}
	b, err := json.Marshal(map[string]any(meta))
	if err == nil {
		serverInfoMeta.Store(&encodedServerInfo{impl: impl, json: b})
	}
	return b, err
}

// encodeResults is a receiving middleware that writes tools/call results of
// the shape encodeResult handles; it is the first of the server's
// middlewares, so the others see the result as the tool returned it.
func encodeResults(next mcp.MethodHandler) mcp.MethodHandler {
	return func(ctx context.Context, method string, req mcp.Request) (mcp.Result, error) {
		res, err := next(ctx, method, req)
		if err != nil {
			return res, err
		}
		if r, ok := res.(*mcp.CallToolResult); ok {
			if raw, ok := encodeResult(r); ok {
				return &encodedResult{CallToolResult: r, raw: raw, resultType: resultTypeOf(r),
					deferred: stdiotransport.DeferredFrom(ctx)}, nil
			}
		}
		return res, err
	}
}

// resultTypeField is the index of CallToolResult's unexported resultType,
// which the SDK sets for 2026-07-28 sessions before the result reaches the
// middlewares; -1 when the SDK has no such field, and then nothing is
// written here.
var resultTypeField = func() int {
	f, ok := reflect.TypeFor[mcp.CallToolResult]().FieldByName("resultType")
	if !ok || f.Type.Kind() != reflect.String || len(f.Index) != 1 {
		return -1
	}
	return f.Index[0]
}()

// resultTypeOf is r's resultType; "" when the SDK has no such field.
func resultTypeOf(r *mcp.CallToolResult) string {
	if resultTypeField < 0 {
		return ""
	}
	return reflect.ValueOf(r).Elem().Field(resultTypeField).String()
}

// encodeResult writes r as the SDK would, when r has the shape our tools
// return: one text content without _meta or annotations, structured content
// absent or raw JSON, no _meta, input requests or request state. ok is false
// for any other result, which the SDK then encodes itself.
func encodeResult(r *mcp.CallToolResult) (raw []byte, ok bool) {
	if resultTypeField < 0 || r.Meta != nil || r.InputRequests != nil || r.RequestState != "" || len(r.Content) != 1 {
		return nil, false
	}
	text, ok := r.Content[0].(*mcp.TextContent)
	if !ok || text == nil || text.Meta != nil || text.Annotations != nil {
		return nil, false
	}
	var structured json.RawMessage
	switch sc := r.StructuredContent.(type) {
	case nil:
	case json.RawMessage:
		if sc == nil {
			// A nil RawMessage in an interface is encoded as null.
			return nil, false
		}
		if htmlEscaped(sc) {
			return nil, false
		}
		structured = sc
	default:
		return nil, false
	}
	resultType := resultTypeOf(r)
	// The text is quoted as TextContent.MarshalJSON quotes it (json.Marshal,
	// so with <, > and & escaped); the answer's JSON as text gains a
	// backslash for each of its quotes, hence the room for a quarter more.
	b := make([]byte, 0, len(`{"content":[{"type":"text","text":""}],"structuredContent":,"isError":true,"resultType":""}`)+
		len(text.Text)+len(text.Text)/4+len(structured)+len(resultType))
	b = append(b, `{"content":[{"type":"text","text":`...)
	b = appendJSONString(b, text.Text)
	b = append(b, "}]"...)
	if structured != nil {
		b = append(b, `,"structuredContent":`...)
		b = append(b, structured...)
	}
	if r.IsError {
		b = append(b, `,"isError":true`...)
	}
	if resultType != "" {
		rt, err := json.Marshal(resultType)
		if err != nil {
			return nil, false
		}
		b = append(b, `,"resultType":`...)
		b = append(b, rt...)
	}
	return append(b, '}'), true
}

// htmlEscaped reports whether the SDK's encoding would change raw JSON
// beyond its white space: json.Marshal escapes <, > and &, U+2028 and
// U+2029 in a RawMessage. Our tools' structured content comes from
// json.Marshal, which has escaped them already.
func htmlEscaped(raw []byte) bool {
	for i, c := range raw {
		switch c {
		case '<', '>', '&':
			return true
		case 0xe2:
			if i+2 < len(raw) && raw[i+1] == 0x80 && (raw[i+2] == 0xa8 || raw[i+2] == 0xa9) {
				return true
			}
		}
	}
	return false
}
