package tools

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolBudgetBytes is the ceiling, in bytes, for the model-visible
// definitions of all tools plus the prompts (PromptBytes), which the model
// receives on every turn (ADR 0012).
const ToolBudgetBytes = 5800

// ToolsListBudgetBytes is the ceiling for the whole tools/list result,
// output schemas included: every host downloads it and compiles the
// schemas before its first call.
const ToolsListBudgetBytes = 14400

// ModelVisibleBytes is what a host shows the model for the tools: name,
// title, description, input schema and annotations of each, as compact
// JSON. Output schemas are left out.
func ModelVisibleBytes(tools []*mcp.Tool) int {
	n := 0
	for _, tool := range tools {
		b, _ := json.Marshal(struct {
			Name        string               `json:"name"`
			Title       string               `json:"title"`
			Description string               `json:"description"`
			InputSchema any                  `json:"inputSchema"`
			Annotations *mcp.ToolAnnotations `json:"annotations"`
		}{tool.Name, tool.Title, tool.Description, tool.InputSchema, tool.Annotations})
		n += len(b)
	}
	return n
}

// PromptBytes is what the prompts cost: each prompts/list definition as
// compact JSON plus the text of the messages each prompt renders.
func PromptBytes(prompts []*mcp.Prompt, rendered []*mcp.GetPromptResult) int {
	n := 0
	for _, p := range prompts {
		b, _ := json.Marshal(p)
		n += len(b)
	}
	for _, r := range rendered {
		for _, m := range r.Messages {
			if t, ok := m.Content.(*mcp.TextContent); ok {
				n += len(t.Text)
			}
		}
	}
	return n
}
