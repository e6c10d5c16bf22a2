package views

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/projection"
)

// TestDocumentsAreWhole: each view is one document with the shared parts
// inlined once and no placeholder left, and names a tool.
func TestDocumentsAreWhole(t *testing.T) {
	for _, v := range All() {
		if strings.Contains(v.HTML, "{{") {
			t.Errorf("%s: a placeholder is left: %.80q", v.URI, v.HTML[strings.Index(v.HTML, "{{"):])
		}
		for _, part := range []string{bridgeWithWords(), style} {
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

// TestFlagWordsHaveOneSource: every flag's words come from package
// projection and are written once. Each view carries each flag's words
// exactly once (written into bridge.js by views.go), and neither the
// views' hand-written JavaScript nor the console's Go and templates spell
// a flag's words or map a flag's id to words of their own.
func TestFlagWordsHaveOneSource(t *testing.T) {
	words := map[string]string{}
	var ids []string
	for _, f := range projection.Flags() {
		words[string(f)] = projection.FlagWords(f)
		ids = append(ids, string(f))
	}
	for _, f := range projection.DayFlags() {
		words[string(f)] = projection.DayFlagWords(f)
		ids = append(ids, string(f))
	}
	for id, w := range words {
		if w == "" || w == id {
			t.Errorf("the flag %s has no words", id)
		}
		for _, v := range All() {
			if n := strings.Count(v.HTML, id+": "+jsString(w)); n != 1 {
				t.Errorf("%s carries the words of %s %d times, want once", v.URI, id, n)
			}
		}
	}
	// A map from a flag's id to a string: `possible_stockout_days: "…"` in
	// JavaScript, `"possible_stockout_days": "…"` in Go.
	keyed := regexp.MustCompile(`"?\b(` + strings.Join(ids, "|") + `)"?\s*:\s*["\x60]`)
	sources := map[string]string{"bridge.js": bridge, "risk.js": riskJS, "order.js": orderJS}
	console, _ := filepath.Glob(filepath.Join("..", "..", "console", "*.go"))
	templates, _ := filepath.Glob(filepath.Join("..", "..", "console", "templates", "*.html"))
	if len(console) == 0 || len(templates) == 0 {
		t.Fatal("the console's sources are not found")
	}
	for _, p := range append(console, templates...) {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		sources[p] = string(b)
	}
	for name, src := range sources {
		if m := keyed.FindString(src); m != "" {
			t.Errorf("%s maps a flag to words of its own: %q", name, m)
		}
		for id, w := range words {
			// A sentence anywhere; a day's few words as a string literal.
			if len(w) > 30 && strings.Contains(src, w) || strings.Contains(src, jsString(w)) {
				t.Errorf("%s spells the words of %s (%q): take them from package projection", name, id, w)
			}
		}
	}
}
