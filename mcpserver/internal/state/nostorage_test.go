package state

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestDomainHoldsNoStorage keeps the storage out of the domain: no
// non-test file of this package imports database/sql or a database driver.
// The SQL lives in the backends, packages sqlite and postgres.
func TestDomainHoldsNoStorage(t *testing.T) {
	forbidden := []string{"database/sql", "modernc.org/sqlite", "github.com/jackc/pgx", "github.com/lib/pq", "github.com/mattn/go-sqlite3"}
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		f, err := parser.ParseFile(token.NewFileSet(), name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		checked++
		for _, imp := range f.Imports {
			path, err := strconv.Unquote(imp.Path.Value)
			if err != nil {
				t.Fatal(err)
			}
			for _, bad := range forbidden {
				if path == bad || strings.HasPrefix(path, bad+"/") {
					t.Errorf("%s imports %s: the domain package holds no storage; put it in state/sqlite or state/postgres", name, path)
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no Go files checked")
	}
}
