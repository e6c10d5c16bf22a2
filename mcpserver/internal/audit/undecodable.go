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
// because its params do not decode, with the tool name as far as readable
// (escaped and bounded, "-" for none) and the reason. Notifications are
// not calls.
func UndecodableCall(req *jsonrpc.Request) (tool, reason string, refused bool) {
	if req == nil || req.Method != "tools/call" || !req.IsCall() {
		return "", "", false
	}
	raw := bytes.TrimSpace(req.Params)
	if len(raw) == 0 || string(raw) == "null" {
		return "-", `"params" is missing`, true
	}
	// Fast path: params that decode here decode for the SDK too, since
	// encoding/json matches names regardless of case.
	var whole mcp.CallToolParamsRaw
	if json.Unmarshal(raw, &whole) == nil {
		return "", "", false
	}
	// The SDK matches names exactly; so must this.
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
