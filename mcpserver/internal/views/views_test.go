package views

import (
	"strings"
	"testing"
)

// TestDocumentsAreWhole: each view is one document with the shared parts
// inlined once and no placeholder left, and names a tool.
func TestDocumentsAreWhole(t *testing.T) {
	for _, v := range All() {
		if strings.Contains(v.HTML, "{{") {
			t.Errorf("%s: a placeholder is left: %.80q", v.URI, v.HTML[strings.Index(v.HTML, "{{"):])
		}
		for _, part := range []string{bridge, style} {
			if strings.Count(v.HTML, part) != 1 {
				t.Errorf("%s: a shared part is inlined %d times", v.URI, strings.Count(v.HTML, part))
			}
		}
		if !strings.HasPrefix(v.URI, "ui://") || !strings.HasPrefix(v.Tool, "korral_") {
			t.Errorf("view %q for tool %q", v.URI, v.Tool)
		}
	}
}

func TestDeclared(t *testing.T) {
	for exts, want := range map[*map[string]any]bool{
		{Extension: map[string]any{}}:                       true,
		{"io.modelcontextprotocol/other": map[string]any{}}: false,
		{}: false,
	} {
		if got := Declared(*exts); got != want {
			t.Errorf("Declared(%v) = %v", *exts, got)
		}
	}
	if Declared(nil) {
		t.Error("Declared(nil)")
	}
}
