package architecture_test

import (
	"go/ast"
	"go/parser"
	"go/token"
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
	for _, p := range goFiles(t, root) {
		if filepath.Base(p) == "conventions_test.go" {
			continue
		}
		src, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		files++
		for i, line := range strings.Split(string(src), "\n") {
			if m := privateMetaphors.FindString(line); m != "" {
				rel, _ := filepath.Rel(root, p)
				t.Errorf("%s:%d says %q: use the plain word (entry point, caller, handler)", rel, i+1, m)
			}
		}
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
	seen := 0
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".go") || strings.HasSuffix(p, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(token.NewFileSet(), p, nil, 0)
		if err != nil {
			return err
		}
		if n := clientConstructions(f); n > 0 {
			rel, _ := filepath.Rel(root, p)
			if filepath.Dir(filepath.ToSlash(rel)) != "internal/upstream" {
				t.Errorf("mcpserver/%s constructs a StoreLink client: go through internal/upstream", rel)
			}
			seen += n
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if seen == 0 {
		t.Fatal("found no construction of a StoreLink client at all: the scan is out of date")
	}
}

// clientConstructions counts the calls of storelinkclient's New functions
// in f, under whatever name f imports the package.
func clientConstructions(f *ast.File) int {
	name := ""
	for _, imp := range f.Imports {
		if imp.Path.Value == `"github.com/korral/storelink/storelinkclient"` {
			name = "storelinkclient"
			if imp.Name != nil {
				name = imp.Name.Name
			}
		}
	}
	n := 0
	ast.Inspect(f, func(node ast.Node) bool {
		if sel, ok := node.(*ast.SelectorExpr); ok && name != "" {
			if x, ok := sel.X.(*ast.Ident); ok && x.Name == name && strings.HasPrefix(sel.Sel.Name, "NewClient") {
				n++
			}
		}
		return true
	})
	return n
}
