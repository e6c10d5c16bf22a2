package cli

import (
	"slices"

	"github.com/korral/storelink/mcpserver/internal/textsafe"
)

// sorted sorts s in place and returns it.
func sorted(s []string) []string {
	slices.Sort(s)
	return s
}

// shown is how a stored value appears in a human-facing table: agents and
// clients wrote it, so a line break, a tab or a terminal escape in it must
// show as an escape, never start a forged row or move the cursor. JSON
// output needs no such care: its encoder escapes control characters.
func shown(s string) string { return textsafe.Escape(s) }

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
