package tools

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// ToolBudgetBytes is the ceiling for the model-visible definitions of all
// tools together, plus the prompts (PromptBytes). Every tool definition is
// sent to the model on every turn; the five tools of the original
// TypeScript server cost about 5.9 KB. The prompts joined the budget at
// issue 26 with 1,100 bytes of their own (ADR 0012), so they cannot grow at
// the tools' expense. The chain sweep (store_ids ["all"], issue 35) took it
// from 5,600 to 5,800: about 110 model-visible bytes of a new way to ask.
const ToolBudgetBytes = 5800

// ToolsListBudgetBytes is the ceiling for the whole tools/list result, output
// schemas included: every host downloads it and compiles the schemas before
// its first call, and the schemas' size is most of that compile time. The
// sweep's part of the risk answer's output schema took it from 13,000 to
// 14,000; the unknown qualifiers' lists of six answers (ADR 0030) to
// 14,100.
const ToolsListBudgetBytes = 14100

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

// PromptBytes is what the prompts cost: each prompts/list definition (name,
// title, description, arguments) as compact JSON, which a host shows as a
// slash command and may hand to the model, plus the text of the messages
// each prompt renders, which reaches the model when the buyer picks it.
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
