package tools

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// Where environment variables may be read: only package config, whose
// settings table is the whole list; cli's Env hands getenv to config.Load
// alone.
const (
	configDir = "internal/config"
	// statetestDir is a test harness, never linked in; the scan checks that
	// only tests import it.
	statetestDir    = "internal/state/statetest"
	statetestImport = "github.com/korral/storelink/mcpserver/" + statetestDir
)

// envFuncs are the standard library's ways to read the environment.
var envFuncs = map[string][]string{
	"os":      {"Getenv", "LookupEnv", "Environ", "ExpandEnv"},
	"syscall": {"Getenv", "Environ"},
}

// getenvNames are the names a passed-around getenv goes by.
var getenvNames = []string{"Getenv", "getenv", "LookupEnv", "lookupEnv"}

// envReads lists, as "file:line: what", every disallowed environment read
// in src. dir is the file's directory relative to the module root.
func envReads(fset *token.FileSet, f *ast.File, dir string) []string {
	if dir == configDir || dir == statetestDir {
		return nil
	}
	// The names the file gives the os and syscall packages.
	pkgs := map[string]string{}
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := envFuncs[path]; !ok {
			continue
		}
		name := path
		if imp.Name != nil {
			name = imp.Name.Name
		}
		pkgs[name] = path
	}
	// Allowed by position: config.Load's arguments, the Env getenv method's
	// body, and app.Options' Getenv (which app hands only to config.Load).
	allowed := map[ast.Node]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.CompositeLit:
			if sel, ok := n.Type.(*ast.SelectorExpr); ok && dir == "cli" && sel.Sel.Name == "Options" && isIdent(sel.X, "app") {
				for _, e := range n.Elts {
					if kv, ok := e.(*ast.KeyValueExpr); ok && isIdent(kv.Key, "Getenv") {
						allowed[kv.Value] = true
					}
				}
			}
		case *ast.CallExpr:
			if sel, ok := n.Fun.(*ast.SelectorExpr); ok && sel.Sel.Name == "Load" && isIdent(sel.X, "config") {
				for _, a := range n.Args {
					allowed[a] = true
				}
			}
		case *ast.FuncDecl:
			if dir == "cli" && n.Name.Name == "getenv" && n.Recv != nil && len(n.Recv.List) == 1 && isIdent(n.Recv.List[0].Type, "Env") {
				ast.Inspect(n.Body, func(m ast.Node) bool {
					if sel, ok := m.(*ast.SelectorExpr); ok && sel.Sel.Name == "Getenv" {
						allowed[sel] = true
					}
					return true
				})
			}
		}
		return true
	})
	var out []string
	report := func(n ast.Node, format string, args ...any) {
		out = append(out, fmt.Sprintf("%s: %s", fset.Position(n.Pos()), fmt.Sprintf(format, args...)))
	}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.SelectorExpr:
			if x, ok := n.X.(*ast.Ident); ok {
				if path, ok := pkgs[x.Name]; ok && slices.Contains(envFuncs[path], n.Sel.Name) {
					report(n, "%s.%s", path, n.Sel.Name)
					return true
				}
			}
			if slices.Contains(getenvNames, n.Sel.Name) && !allowed[n] {
				report(n, ".%s", n.Sel.Name)
			}
		case *ast.CallExpr:
			if id, ok := n.Fun.(*ast.Ident); ok && slices.Contains(getenvNames, id.Name) {
				report(n, "%s(...)", id.Name)
			}
		}
		return true
	})
	return out
}

func isIdent(e ast.Expr, name string) bool {
	id, ok := e.(*ast.Ident)
	return ok && id.Name == name
}

// TestOnlyConfigReadsTheEnvironment keeps every environment variable in
// package config, where it is documented and validated.
func TestOnlyConfigReadsTheEnvironment(t *testing.T) {
	chdirModuleRoot(t)
	fset := token.NewFileSet()
	var found []string
	files := 0
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || (path != "." && strings.HasPrefix(d.Name(), "."))) {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		files++
		dir := filepath.ToSlash(filepath.Dir(path))
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == statetestImport && dir != statetestDir {
				found = append(found, fmt.Sprintf("%s: imports the test harness %s into the program", path, statetestDir))
			}
		}
		found = append(found, envReads(fset, f, dir)...)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files < 50 {
		t.Fatalf("scanned only %d files: the walk missed the module", files)
	}
	for _, f := range found {
		t.Errorf("%s: read the variable through package config (add a row to its settings table), not here", f)
	}
}

// TestEnvironmentScanCatchesReads runs the scan on code reading the
// environment each way it knows, so the test above cannot pass vacuously.
func TestEnvironmentScanCatchesReads(t *testing.T) {
	const src = `package cli

import (
	"os"
	sys "syscall"
	"github.com/korral/storelink/mcpserver/internal/app"
	"github.com/korral/storelink/mcpserver/internal/config"
)

type Env struct{ Getenv func(string) string }

func (e Env) getenv(name string) string { return e.Getenv(name) }

func allowed(env Env) { _, _ = config.Load(env.getenv, nil) }

func handed(env Env) app.Options { return app.Options{Getenv: env.getenv} }

func reads(env Env) {
	_ = os.Getenv("A")
	_, _ = os.LookupEnv("B")
	f := os.Getenv
	_, _ = sys.Getenv("C")
	_ = env.Getenv("D")
	_ = env.getenv("E")
	g := env.Getenv
	_ = getenv("F")
	_, _ = f, g
}
`
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "sample.go", src, parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	got := envReads(fset, f, "cli")
	want := []string{"os.Getenv", "os.LookupEnv", "os.Getenv", "syscall.Getenv", ".Getenv", ".getenv", ".Getenv", "getenv(...)"}
	var what []string
	for _, g := range got {
		what = append(what, g[strings.LastIndex(g, ": ")+2:])
	}
	if !slices.Equal(what, want) {
		t.Errorf("flagged %q, want %q", got, want)
	}
	if got := envReads(fset, f, configDir); len(got) != 0 {
		t.Errorf("package config may read the environment, yet got %q", got)
	}
}

// chdirModuleRoot moves the test into the module's root, if not there.
func chdirModuleRoot(t *testing.T) {
	t.Helper()
	if _, err := os.Stat("go.mod"); err == nil {
		return
	}
	t.Chdir(filepath.Join("..", ".."))
}
