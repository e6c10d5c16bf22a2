package audit

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/korral/storelink/mcpserver/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// UndecodableCall reports whether req is a tools/call the SDK will refuse
// because its params do not decode into mcp.CallToolParamsRaw, with the
// tool name as far as it can be read (escaped and bounded, "-" when there
// is none) and the reason. Notifications are not calls: nothing answers
// them, and nothing is recorded.
func UndecodableCall(req *jsonrpc.Request) (tool, reason string, refused bool) {
	if req == nil || req.Method != "tools/call" || !req.IsCall() {
		return "", "", false
	}
	raw := bytes.TrimSpace(req.Params)
	if len(raw) == 0 || string(raw) == "null" {
		return "-", `"params" is missing`, true
	}
	// Almost every call's params decode as they are, and then the SDK's
	// exact-name decoding below succeeds too: encoding/json matches names
	// regardless of case, so every field the SDK would read was decoded
	// here with its type. This saves the reading below on every call.
	var whole mcp.CallToolParamsRaw
	if json.Unmarshal(raw, &whole) == nil {
		return "", "", false
	}
	// The SDK matches field names exactly; keep only the exact names, so
	// a "NAME" that it ignores is ignored here too.
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return "-", `"params" is not a JSON object`, true
	}
	tool = "-"
	var name string
	if v, ok := fields["name"]; ok {
		if err := json.Unmarshal(v, &name); err != nil {
			return tool, `"name" is not a string`, true
		}
		tool = ClientName(name)
	}
	exact := map[string]json.RawMessage{}
	for _, k := range []string{"_meta", "name", "arguments", "inputResponses", "requestState"} {
		if v, ok := fields[k]; ok {
			exact[k] = v
		}
	}
	b, _ := json.Marshal(exact)
	var p mcp.CallToolParamsRaw
	if err := json.Unmarshal(b, &p); err != nil {
		return tool, textsafe.Bound(fmt.Sprintf(`"params" do not decode: %v`, err), MaxReason), true
	}
	return "", "", false
}
