package tools

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// logLines finds every log call with a literal message in the module's
// code and reports for each message whether any call carries a call_id.
func logLines(t *testing.T) map[string]bool {
	t.Helper()
	chdirModuleRoot(t)
	withCallID := map[string]bool{}
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		// statetest is a behaviour suite for tests: its t.Error calls are
		// not log lines.
		if d.IsDir() && d.Name() == "statetest" {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, 0)
		if err != nil {
			return err
		}
		// A call that spreads a prepared slice (attrs...) carries what its
		// function put in the slice.
		funcHasCallID := false
		ast.Inspect(f, func(n ast.Node) bool {
			if fn, ok := n.(*ast.FuncDecl); ok {
				funcHasCallID = false
				ast.Inspect(fn, func(m ast.Node) bool {
					if e, ok := m.(ast.Expr); ok {
						if s, ok := stringLit(e); ok && s == "call_id" {
							funcHasCallID = true
						}
					}
					return true
				})
			}
			call, ok := n.(*ast.CallExpr)
			if !ok {
				return true
			}
			sel, ok := call.Fun.(*ast.SelectorExpr)
			if !ok || !slices.Contains([]string{"Debug", "Info", "Warn", "Error"}, strings.TrimSuffix(sel.Sel.Name, "Context")) {
				return true
			}
			args := call.Args
			if strings.HasSuffix(sel.Sel.Name, "Context") && len(args) > 0 {
				args = args[1:]
			}
			if len(args) == 0 {
				return true
			}
			msg, ok := stringLit(args[0])
			if !ok {
				return true
			}
			has := withCallID[msg] || (call.Ellipsis.IsValid() && funcHasCallID)
			for _, a := range args[1:] {
				if s, ok := stringLit(a); ok && s == "call_id" {
					has = true
				}
			}
			withCallID[msg] = has
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return withCallID
}

func stringLit(e ast.Expr) (string, bool) {
	lit, ok := e.(*ast.BasicLit)
	if !ok || lit.Kind != token.STRING {
		return "", false
	}
	s, err := strconv.Unquote(lit.Value)
	return s, err == nil
}

// TestObservabilityDocListsEveryLogLine: every log message is in
// docs/observability.md, in the table of call lines (with call_id) or in
// the list of lines without one.
func TestObservabilityDocListsEveryLogLine(t *testing.T) {
	chdirModuleRoot(t)
	b, err := os.ReadFile(filepath.Join("..", "docs", "observability.md"))
	if err != nil {
		t.Skipf("docs not next to the module: %v", err)
	}
	doc := string(b)
	start := strings.Index(doc, "Lines without a call id:")
	end := strings.Index(doc[start:], "\n\n")
	if start < 0 || end < 0 {
		t.Fatal("docs/observability.md has no list of lines without a call id")
	}
	without := map[string]bool{}
	for _, m := range regexp.MustCompile("`([a-z_.]+)`").FindAllStringSubmatch(doc[start:start+end], -1) {
		without[m[1]] = true
	}
	table := doc[:start]
	for msg, hasCallID := range logLines(t) {
		inTable := strings.Contains(table, "| `"+msg+"` |") || strings.Contains(table, "`"+msg+"` /") || strings.Contains(table, "/ `"+msg+"`")
		switch {
		case hasCallID && !inTable:
			t.Errorf("log line %q carries a call_id but is not in the table of a call's lines", msg)
		case !hasCallID && !without[msg]:
			t.Errorf("log line %q has no call_id but is not in the list of lines without one", msg)
		}
	}
}
