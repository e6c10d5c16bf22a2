package audit

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/korral/storelink/mcpserver/internal/jsonscan"
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
	if plainParams(raw) {
		return "", "", false
	}
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

// plainParams reports, more cheaply than decoding them, that raw decodes
// as mcp.CallToolParamsRaw: an object whose name and requestState are
// strings (or null), whose _meta is an object (or null), and with no
// inputResponses, whose decoding it leaves to the full check. arguments
// may hold any value. false means only "not known to decode".
func plainParams(raw json.RawMessage) bool {
	return plainMembers(raw) || plainFields(raw)
}

// plainFields is plainParams by decoding raw's fields.
func plainFields(raw json.RawMessage) bool {
	var p struct {
		Meta           json.RawMessage `json:"_meta"`
		Name           json.RawMessage `json:"name"`
		InputResponses json.RawMessage `json:"inputResponses"`
		RequestState   json.RawMessage `json:"requestState"`
	}
	if json.Unmarshal(raw, &p) != nil || len(p.InputResponses) > 0 {
		return false
	}
	return oneOf(p.Name, '"') && oneOf(p.RequestState, '"') && oneOf(p.Meta, '{')
}

// oneOf reports whether v is absent, null, or a value opening with first.
func oneOf(v json.RawMessage, first byte) bool {
	return len(v) == 0 || v[0] == first || string(v) == "null"
}

// plainMembers is plainParams for the usual params, read in one scan
// without decoding: valid JSON, an object whose keys are "_meta", "name",
// "arguments" and "requestState", each at most once and written without
// escapes, with the values plainParams asks for. For anything else it is
// false and plainFields decides. When it is true, so is plainFields
// (TestPlainMembersImpliesPlainFields, FuzzPlainMembers).
func plainMembers(raw []byte) bool {
	if !json.Valid(raw) {
		return false
	}
	i := jsonscan.SkipSpace(raw, 0)
	if raw[i] != '{' {
		return false
	}
	var seen [4]bool
	for i = jsonscan.SkipSpace(raw, i+1); raw[i] != '}'; {
		// A key with an escape matches none of the four below, so the
		// first quote ends every key that does.
		end := bytes.IndexByte(raw[i+1:], '"') + i + 1
		key := raw[i+1 : end]
		i = jsonscan.SkipSpace(raw, jsonscan.SkipSpace(raw, end+1)+1) // past the ':'
		var k int
		var ok bool
		switch string(key) {
		case "_meta":
			k, ok = 0, raw[i] == '{' || raw[i] == 'n'
		case "name":
			k, ok = 1, raw[i] == '"' || raw[i] == 'n'
		case "arguments":
			k, ok = 2, true
		case "requestState":
			k, ok = 3, raw[i] == '"' || raw[i] == 'n'
		}
		if !ok || seen[k] {
			return false
		}
		seen[k] = true
		if i = jsonscan.SkipSpace(raw, jsonscan.SkipValue(raw, i)); raw[i] == ',' {
			i = jsonscan.SkipSpace(raw, i+1)
		}
	}
	return true
}
