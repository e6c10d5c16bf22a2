package architecture_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
)

// repoRoot is the directory holding go.work.
func repoRoot(t *testing.T) string { return e2etest.Root(t) }

// goList runs `go list` in dir and returns its output's fields.
func goList(t *testing.T, dir string, args ...string) []string {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list"}, args...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return strings.Fields(string(out))
}

// TestRootHoldsNoTests: the repo root keeps doc.go and the module files;
// the end-to-end suite lives in e2e/, the release and deploy checks beside
// what they check.
func TestRootHoldsNoTests(t *testing.T) {
	entries, err := os.ReadDir(repoRoot(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if strings.HasSuffix(e.Name(), "_test.go") {
			t.Errorf("%s: the repo root holds no tests; end-to-end tests go in e2e/", e.Name())
		}
	}
}

const mcp = "github.com/korral/storelink/mcpserver"

// TestCLIIsThin: cli turns argv into a command and an exit code; the parts
// are put together in internal/app, the one package that imports them all.
func TestCLIIsThin(t *testing.T) {
	root := repoRoot(t)
	imports := goList(t, filepath.Join(root, "mcpserver"), "-f", `{{join .Imports " "}} {{join .TestImports " "}}`, "./cli")
	for _, forbidden := range []string{
		"internal/state/postgres", "internal/state/sqlite", "internal/upstream", "internal/httpserver",
		"internal/oauth", "internal/bearer", "internal/notify", "internal/replenish",
	} {
		if slices.Contains(imports, mcp+"/"+forbidden) {
			t.Errorf("mcpserver/cli imports %s: assemble it in internal/app", forbidden)
		}
	}
	files, err := filepath.Glob(filepath.Join(root, "mcpserver", "cli", "*.go"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no files in mcpserver/cli (%v)", err)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if n := bytes.Count(b, []byte("\n")); n > 250 {
			t.Errorf("%s has %d lines; a cli file stays under 250: one command per file", filepath.Base(f), n)
		}
	}
}

// TestStateIsTheDomain: internal/state holds entries, transitions and rules
// and no SQL; SQLite and PostgreSQL are sibling packages with embedded
// migrations, neither importing the other.
func TestStateIsTheDomain(t *testing.T) {
	root := repoRoot(t)
	dir := filepath.Join(root, "mcpserver")
	for _, imp := range goList(t, dir, "-f", `{{join .Imports " "}}`, "./internal/state") {
		if imp == "database/sql" || strings.Contains(imp, "sqlite") || strings.Contains(imp, "pgx") || strings.Contains(imp, "/lib/pq") {
			t.Errorf("internal/state imports %s: SQL belongs to a backend package", imp)
		}
	}
	for _, backend := range []string{"sqlite", "postgres"} {
		migrations, _ := filepath.Glob(filepath.Join(dir, "internal", "state", backend, "migrations", "*.sql"))
		if len(migrations) == 0 {
			t.Errorf("internal/state/%s has no migrations/*.sql", backend)
		}
		other := map[string]string{"sqlite": "postgres", "postgres": "sqlite"}[backend]
		if slices.Contains(goList(t, dir, "-f", `{{join .Imports " "}}`, "./internal/state/"+backend), mcp+"/internal/state/"+other) {
			t.Errorf("internal/state/%s imports its sibling %s", backend, other)
		}
	}
}

// TestOneCompositionRoot: only internal/app opens a backend or builds the
// upstream adapter; the other packages get them through interfaces.
func TestOneCompositionRoot(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "mcpserver", "internal", "tools")
	for _, line := range goList(t, dir, "-f", `{{.ImportPath}}:{{join .Imports ","}}`, "./...") {
		pkg, imps, _ := strings.Cut(line, ":")
		if pkg == mcp+"/internal/app" || strings.HasPrefix(pkg, mcp+"/internal/state/") {
			continue
		}
		for _, imp := range strings.Split(imps, ",") {
			if imp == mcp+"/internal/state/sqlite" || imp == mcp+"/internal/state/postgres" {
				t.Errorf("%s imports %s: only internal/app opens the state's storage", strings.TrimPrefix(pkg, mcp+"/"), strings.TrimPrefix(imp, mcp+"/"))
			}
		}
	}
}

// TestEveryToolHasItsTestAndSnapshot: each tool file has its own test file
// and its definition's snapshot in testdata/tools.
func TestEveryToolHasItsTestAndSnapshot(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "mcpserver", "internal", "tools")
	tools, _ := filepath.Glob(filepath.Join(dir, "tool_*.go"))
	n := 0
	for _, f := range tools {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		n++
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "tool_"), ".go")
		if _, err := os.Stat(strings.TrimSuffix(f, ".go") + "_test.go"); err != nil {
			t.Errorf("%s has no test file of its own", filepath.Base(f))
		}
		if _, err := os.Stat(filepath.Join(dir, "testdata", "tools", "korral_"+name+".golden.json")); err != nil {
			t.Errorf("%s has no snapshot testdata/tools/korral_%s.golden.json", filepath.Base(f), name)
		}
	}
	if n != 5 {
		t.Errorf("found %d tool files, want the five tools", n)
	}
}

// TestLayoutNamesEveryFolder: the README's layout section shows every
// top-level folder a clone has.
func TestLayoutNamesEveryFolder(t *testing.T) {
	root := repoRoot(t)
	readme, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, after, _ := strings.Cut(string(readme), "## Layout")
	block, _, _ := strings.Cut(after, "\n## ")
	cmd := exec.Command("git", "ls-files")
	cmd.Dir = root
	out, err := cmd.Output()
	if err != nil {
		t.Skipf("git ls-files: %v (not a clone)", err)
	}
	folders := map[string]bool{}
	for _, f := range strings.Split(string(out), "\n") {
		if top, _, ok := strings.Cut(f, "/"); ok {
			folders[top] = true
		}
	}
	for f := range folders {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(f) + `/\s`).MatchString(block) {
			t.Errorf("the README's layout leaves out %s/", f)
		}
	}
}
