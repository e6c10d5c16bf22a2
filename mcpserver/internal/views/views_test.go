package views

import (
	"regexp"
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

// TestViewsKeepTheCSPStrict: the documents hold no style attribute, event
// handler attribute, javascript: URL or string evaluation, so a host's
// policy without 'unsafe-inline' for attributes or 'unsafe-eval' takes
// nothing from them; the host's style variables are set through the CSSOM
// (style.setProperty), which such a policy allows.
func TestViewsKeepTheCSPStrict(t *testing.T) {
	bad := regexp.MustCompile(`\sstyle=|setAttribute\("(style|on[a-z]+)"|\son[a-z]+=["']|javascript:|\beval\(|new Function\(|\.cssText|setTimeout\("`)
	for _, v := range All() {
		if m := bad.FindString(v.HTML); m != "" {
			t.Errorf("%s contains %q", v.URI, m)
		}
		if n := strings.Count(v.HTML, "<script>"); n != 1 || strings.Count(v.HTML, "<style>") != 1 {
			t.Errorf("%s: %d script and %d style elements, want one each", v.URI, n, strings.Count(v.HTML, "<style>"))
		}
	}
}
