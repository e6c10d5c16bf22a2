package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// instrumentNames finds every metric instrument with a literal name in the
// module's code.
func instrumentNames(t *testing.T) []string {
	t.Helper()
	chdirModuleRoot(t)
	kinds := []string{"Float64Histogram", "Int64Histogram", "Int64Counter", "Float64Counter", "Int64UpDownCounter",
		"Int64ObservableGauge", "Float64ObservableGauge", "Int64ObservableCounter", "Int64Gauge", "Float64Gauge"}
	var names []string
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		ast.Inspect(f, func(n ast.Node) bool {
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			if sel, ok := call.Fun.(*ast.SelectorExpr); ok && slices.Contains(kinds, sel.Sel.Name) && len(call.Args) > 0 {
				if s, ok := stringLit(call.Args[0]); ok {
					names = append(names, s)
				}
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return names
}

// TestObservabilityDocListsEveryMetric: every instrument is a row of
// docs/observability.md's metrics table, under its Prometheus name.
func TestObservabilityDocListsEveryMetric(t *testing.T) {
	chdirModuleRoot(t)
	b, err := os.ReadFile(filepath.Join("..", "docs", "observability.md"))
	if err != nil {
		t.Skipf("docs not next to the module: %v", err)
	}
	doc := string(b)
	names := instrumentNames(t)
	if len(names) < 8 {
		t.Fatalf("found only %d instruments: %v", len(names), names)
	}
	for _, n := range names {
		if !strings.Contains(doc, "| `"+strings.ReplaceAll(n, ".", "_")) {
			t.Errorf("instrument %s has no row in docs/observability.md's metrics table", n)
		}
	}
}
