package tools_test

import (
	"context"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// A 2026-07-28 session's tool results name the server in their _meta, as
// the SDK adds it after the middlewares (SEP-2575); the results our
// encoding middleware writes ahead of time must carry it too, on stdio,
// where the connection writes them itself.
func TestToolResultsNameTheServer(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the whole server")
	}
	cs := assembled(t)
	if v := cs.InitializeResult().ProtocolVersion; v < "2026-07-28" {
		t.Fatalf("the go-sdk client negotiated %s; this test needs a 2026-07-28 session", v)
	}
	for _, p := range []*mcp.CallToolParams{trivialCall, riskCall, riskCall} {
		res, err := cs.CallTool(context.Background(), p)
		if err != nil || res.IsError {
			t.Fatalf("%s: %v %+v", p.Name, err, res)
		}
		info, ok := res.Meta[mcp.MetaKeyServerInfo].(map[string]any)
		if !ok || info["name"] == "" || info["name"] == nil {
			t.Errorf("%s: result _meta = %v, want %s with the server's name", p.Name, res.Meta, mcp.MetaKeyServerInfo)
		}
		if res.StructuredContent == nil || len(res.Content) != 1 {
			t.Errorf("%s: result lost its content: %+v", p.Name, res)
		}
	}
}
