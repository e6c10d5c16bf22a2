package architecture_test

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// minLines is the size from which a function, or a type with its methods,
// counts as code: shorter bodies (a getter, a one-line wrapper) repeat by
// nature.
const minLines = 7

// acrossModules lists copies between modules where neither module may
// import the other's package, keyed by the copies' names, sorted.
var acrossModules = map[string]string{
	"sleep,sleep":          "notify (mcpserver) and the contract checker (openapi) each wait between retries",
	"WriteTokenFile,write": "the e2e harness (root module) cannot import mcpserver's internal test helpers",
	"SyncBuffer,SyncBuffer": "one buffer per module: e2etest (root module) cannot import mcpserver/internal/mcptest, " +
		"and mcpserver does not depend on the root module",
	"Clock,clock,fakeClock": "one settable clock per module: consoletest (mcpserver), foreignstorelink's tests (root module), " +
		"mockstorelink's tests; none imports another's test code",
	"Block,Block": "one fake authorization server per module (e2etest.Issuer, mcptest.Issuer): the root module may not " +
		"import mcpserver/internal, and a public one would widen mcpserver's surface (ADR 0033)",
	"componentName,storeFromPath": "the mock (mockstorelink) and the contract checker (openapi) each take a path's first " +
		"segment after a prefix; the modules share no package",
}

// TestNoCodeWrittenTwice: no function of seven lines or more, and no type
// with its methods, is written twice, tests included, generated code aside.
// Two units count as the same when they have the same shape once
// identifiers are renamed in order of appearance and literals reduced to
// their kind: a copy with other names is still a copy. A shared test helper
// lives in its module's one test package (internal/e2etest,
// mcpserver/internal/mcptest). The SQLite and PostgreSQL packages hold no
// near-copy of this size: each keeps its own SQL.
func TestNoCodeWrittenTwice(t *testing.T) {
	root := repoRoot(t)
	var files []parsedFile
	fset := token.NewFileSet()
	for _, p := range goFiles(t, root) {
		if strings.HasSuffix(p, ".gen.go") {
			continue
		}
		f, err := parser.ParseFile(fset, p, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		if ast.IsGenerated(f) {
			continue
		}
		rel, _ := filepath.Rel(root, p)
		files = append(files, parsedFile{rel, f})
	}
	for _, sites := range copies(fset, files) {
		key := copyKey(sites)
		if acrossModules[key] != "" && len(modulesOf(sites)) == len(sites) {
			continue
		}
		t.Errorf("the same code is written %d times: %s", len(sites), strings.Join(describe(sites), ", "))
	}
}

// TestNearCopiesAreFound: a function, and a type with its methods, copied
// with other names, other literals and other comments are found; a
// function of another shape is not.
func TestNearCopiesAreFound(t *testing.T) {
	const a = `package a
type buf struct{ mu sync.Mutex; b bytes.Buffer }
func (s *buf) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}
func (s *buf) String() string { s.mu.Lock(); defer s.mu.Unlock(); return s.b.String() }
func post(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Post(url, "application/json", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.Status
}`
	// b copies both under other names, literals and comments, and has a
	// function of another shape.
	const b = `package b
type lockedBuffer struct{ lock sync.Mutex; data bytes.Buffer }
// Write appends q.
func (l *lockedBuffer) Write(q []byte) (int, error) {
	l.lock.Lock() // held while the buffer grows
	defer l.lock.Unlock()
	return l.data.Write(q)
}
func (l *lockedBuffer) String() string { l.lock.Lock(); defer l.lock.Unlock(); return l.data.String() }
func send(tb *testing.T, target string) string {
	tb.Helper()
	answer, e := http.Post(target, "text/plain", nil)
	if e != nil {
		tb.Fatal(e)
	}
	defer answer.Body.Close()
	return answer.Status
}
func other(t *testing.T, url string) string {
	resp, err := http.Get(url)
	if err != nil || resp.StatusCode != 200 {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	return resp.Status
}`
	fset := token.NewFileSet()
	var files []parsedFile
	for name, src := range map[string]string{"a/a.go": a, "b/b.go": b} {
		f, err := parser.ParseFile(fset, name, src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, parsedFile{name, f})
	}
	var got []string
	for _, sites := range copies(fset, files) {
		got = append(got, strings.Join(describe(sites), ", "))
	}
	slices.Sort(got)
	want := []string{"a/a.go buf, b/b.go lockedBuffer", "a/a.go post, b/b.go send"}
	if !slices.Equal(got, want) {
		t.Fatalf("copies found: %q, want %q", got, want)
	}
}

// parsedFile is one Go file and its path from the repository root.
type parsedFile struct {
	rel  string
	file *ast.File
}

// site is one unit of code: a function, or a type with its methods.
type site struct{ file, name string }

// copies groups the units of at least minLines lines by their shape and
// returns the groups with more than one unit.
func copies(fset *token.FileSet, files []parsedFile) [][]site {
	byShape := map[string][]site{}
	add := func(rel, name string, lines int, nodes ...ast.Node) {
		if lines >= minLines {
			s := shape(nodes...)
			byShape[s] = append(byShape[s], site{rel, name})
		}
	}
	lines := func(n ast.Node) int { return fset.Position(n.End()).Line - fset.Position(n.Pos()).Line + 1 }
	for _, pf := range files {
		methods := map[string][]ast.Node{}
		size := map[string]int{}
		for _, decl := range pf.file.Decls {
			fd, ok := decl.(*ast.FuncDecl)
			if !ok || fd.Body == nil {
				continue
			}
			if fd.Recv != nil {
				recv := receiverName(fd.Recv.List[0].Type)
				methods[recv] = append(methods[recv], fd)
				size[recv] += lines(fd)
			}
			add(pf.rel, fd.Name.Name, lines(fd.Body)-1, fd.Type, fd.Body)
		}
		for _, decl := range pf.file.Decls {
			gd, ok := decl.(*ast.GenDecl)
			if !ok || gd.Tok != token.TYPE {
				continue
			}
			for _, spec := range gd.Specs {
				ts := spec.(*ast.TypeSpec)
				if ms := methods[ts.Name.Name]; len(ms) > 1 {
					add(pf.rel, ts.Name.Name, lines(ts)+size[ts.Name.Name], append([]ast.Node{ts}, ms...)...)
				}
			}
		}
	}
	var out [][]site
	for _, sites := range byShape {
		if len(sites) > 1 {
			out = append(out, sites)
		}
	}
	return out
}

// shape writes the nodes' syntax trees with each name the nodes declare
// (receiver, parameters, variables, the type's own name, its fields and
// methods) renamed
// to its order of first appearance, and each literal reduced to its kind.
// Names declared elsewhere (what the code calls) are kept: two functions
// that call different things are not copies.
func shape(nodes ...ast.Node) string {
	own := map[string]bool{}
	declare := func(ids ...*ast.Ident) {
		for _, id := range ids {
			own[id.Name] = true
		}
	}
	for _, n := range nodes {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case *ast.Field:
				declare(n.Names...)
			case *ast.ValueSpec:
				declare(n.Names...)
			case *ast.TypeSpec:
				declare(n.Name)
			case *ast.FuncDecl:
				declare(n.Name)
			case *ast.AssignStmt:
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok && n.Tok == token.DEFINE {
						declare(id)
					}
				}
			case *ast.RangeStmt:
				for _, e := range []ast.Expr{n.Key, n.Value} {
					if id, ok := e.(*ast.Ident); ok && n.Tok == token.DEFINE {
						declare(id)
					}
				}
			}
			return true
		})
	}
	var b strings.Builder
	names := map[string]int{}
	for _, n := range nodes {
		ast.Inspect(n, func(n ast.Node) bool {
			switch n := n.(type) {
			case nil:
				b.WriteByte(')')
				return false
			case *ast.CommentGroup, *ast.Comment:
				return false
			case *ast.Ident:
				if !own[n.Name] {
					fmt.Fprintf(&b, "(%s", n.Name)
					break
				}
				if _, ok := names[n.Name]; !ok {
					names[n.Name] = len(names)
				}
				fmt.Fprintf(&b, "(v%d", names[n.Name])
			case *ast.BasicLit:
				fmt.Fprintf(&b, "(%s", n.Kind)
			case *ast.BinaryExpr:
				fmt.Fprintf(&b, "(%s", n.Op)
			case *ast.UnaryExpr:
				fmt.Fprintf(&b, "(u%s", n.Op)
			case *ast.AssignStmt:
				fmt.Fprintf(&b, "(a%s", n.Tok)
			default:
				fmt.Fprintf(&b, "(%T", n)
			}
			return true
		})
	}
	return b.String()
}

// receiverName is the type name of a method's receiver.
func receiverName(e ast.Expr) string {
	if star, ok := e.(*ast.StarExpr); ok {
		e = star.X
	}
	if id, ok := e.(*ast.Ident); ok {
		return id.Name
	}
	return "" // a generic type: its methods count one by one
}

// copyKey names a group of copies by its units' names, sorted.
func copyKey(sites []site) string {
	var names []string
	for _, s := range sites {
		names = append(names, s.name)
	}
	slices.Sort(names)
	return strings.Join(names, ",")
}

// describe lists a group's units as "file name", sorted.
func describe(sites []site) []string {
	var where []string
	for _, s := range sites {
		where = append(where, s.file+" "+s.name)
	}
	slices.Sort(where)
	return where
}

// modulesOf is the set of workspace modules the group's files belong to.
func modulesOf(sites []site) map[string]bool {
	modules := map[string]bool{}
	for _, s := range sites {
		modules[moduleOf(s.file)] = true
	}
	return modules
}

// moduleOf names the workspace module a repo-relative path belongs to.
func moduleOf(rel string) string {
	for _, m := range []string{"openapi", "storelinkclient", "mockstorelink", "mcpserver", "tools"} {
		if rel == m || strings.HasPrefix(rel, m+"/") {
			return m
		}
	}
	return "."
}
