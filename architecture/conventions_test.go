package architecture_test

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// privateMetaphors are figures of speech this code base once used for
// plain things (issue 41): an entry point, a caller or a handler.
var privateMetaphors = regexp.MustCompile(`(?i)\b(doors?|doorway|in (its|their) rooms?|one house|turned away at)\b`)

// TestCodeUsesPlainWords: no line of Go in the repository (comments and
// messages included) uses the metaphors above.
func TestCodeUsesPlainWords(t *testing.T) {
	root := repoRoot(t)
	files := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "node_modules" || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(p, ".go") || filepath.Base(p) == "conventions_test.go" {
			return nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for i, line := range strings.Split(string(src), "\n") {
			if m := privateMetaphors.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d says %q: use the plain word (entry point, caller, handler)", rel, i+1, m)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 300 {
		t.Fatalf("read only %d files: the walk missed the repository", files)
	}
}

// TestOnlyUpstreamBuildsAStoreLinkClient: in the server's production code,
// only internal/upstream constructs a StoreLink client, so every request to
// StoreLink goes through its breaker, budget and checks (ADR 0005).
func TestOnlyUpstreamBuildsAStoreLinkClient(t *testing.T) {
	root := filepath.Join(repoRoot(t), "mcpserver")
	constructs := regexp.MustCompile(`storelinkclient\.New\w*\(`)
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		if !constructs.Match(src) {
			return nil
		}
		if filepath.Dir(filepath.ToSlash(rel)) != "internal/upstream" {
			t.Errorf("mcpserver/%s constructs a StoreLink client: go through internal/upstream", rel)
		}
		seen++
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("found no construction of a StoreLink client at all: the pattern is out of date")
	}
}
