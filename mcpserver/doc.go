// Package mcpserver holds what a client of the Korral StoreLink MCP server
// may rely on without building one: the notice that marks demo answers, the
// size budgets of the tool definitions, and the reader of the markers around
// text that came from StoreLink.
//
// The server itself is built and run by the storelink-mcp command (package
// cli); its tools live in internal/tools and are not a library (ADR 0033).
package mcpserver

import (
	"github.com/korral/storelink/mcpserver/internal/tools"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// DemoNotice travels with every answer served from the embedded demo
// StoreLink.
const DemoNotice = tools.DemoNotice

// ToolBudgetBytes is the ceiling for the model-visible definitions of all
// tools and prompts together.
const ToolBudgetBytes = tools.ToolBudgetBytes

// ToolsListBudgetBytes is the ceiling for the whole tools/list result,
// output schemas included.
const ToolsListBudgetBytes = tools.ToolsListBudgetBytes

// ModelVisibleBytes is the size of what a host shows the model for the
// given tools: name, title, description, input schema and annotations.
func ModelVisibleBytes(t []*mcp.Tool) int { return tools.ModelVisibleBytes(t) }

// UntrustedText returns the text inside a marker the server put around
// text from StoreLink, and whether s was such a marker.
func UntrustedText(s string) (string, bool) { return tools.UntrustedText(s) }
