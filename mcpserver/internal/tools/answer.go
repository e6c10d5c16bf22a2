package tools

import "github.com/modelcontextprotocol/go-sdk/mcp"

// readAnnotations are the honest hints of every read tool, all set
// explicitly: in the SDK an unset destructive or open-world hint means true.
func readAnnotations() *mcp.ToolAnnotations {
	return &mcp.ToolAnnotations{
		ReadOnlyHint:    true,
		DestructiveHint: ptr(false),
		IdempotentHint:  true,
		OpenWorldHint:   ptr(true),
	}
}

// table is a list of records as a header and one short row per record: the
// same facts as a list of objects at about half the bytes.
type table struct {
	Columns []string `json:"columns"`
	Rows    [][]any  `json:"rows"`
}
