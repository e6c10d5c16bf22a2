package mcpserver

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolBudgetBytes is the ceiling for the model-visible definitions of all
// tools together. Every definition is sent to the model on every turn; the
// five tools of the original TypeScript server cost about 5.9 KB.
const ToolBudgetBytes = 4600

// ToolsListBudgetBytes is the ceiling for the whole tools/list result, output
// schemas included: every host downloads it and compiles the schemas before
// its first call, and the schemas' size is most of that compile time.
const ToolsListBudgetBytes = 13000

// ModelVisibleBytes is what a host puts in front of the model for the tools:
// name, title, description, input schema and annotations of each, as compact
// JSON. Output schemas are left out: hosts use them to check results, not to
// choose or call a tool.
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
