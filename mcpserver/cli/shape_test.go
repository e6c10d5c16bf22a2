package cli

import (
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// forbidden are the parts only the composition root (package app) puts
// together: the program's argv layer never reaches them itself.
var forbidden = []string{
	"github.com/korral/storelink/mcpserver/internal/state/postgres",
	"github.com/korral/storelink/mcpserver/internal/upstream",
	"github.com/korral/storelink/mcpserver/internal/httpserver",
	"github.com/korral/storelink/mcpserver/internal/oauth",
	"github.com/korral/storelink/mcpserver/internal/bearer",
	"github.com/korral/storelink/mcpserver/internal/notify",
	"github.com/korral/storelink/mcpserver/internal/replenish",
}

// maxFileLines keeps each command's file, and each test file, readable.
const maxFileLines = 250

// TestCLIStaysThin: cli is argv → command → exit code; assembling the
// server is package app's job.
func TestCLIStaysThin(t *testing.T) {
	files, err := filepath.Glob("*.go")
	if err != nil || len(files) < 10 {
		t.Fatalf("found %d files (%v)", len(files), err)
	}
	fset := token.NewFileSet()
	for _, name := range files {
		src, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		if n := strings.Count(string(src), "\n"); n > maxFileLines {
			t.Errorf("%s has %d lines, more than %d: split it by command", name, n, maxFileLines)
		}
		f, err := parser.ParseFile(fset, name, src, parser.ImportsOnly)
		if err != nil {
			t.Fatal(err)
		}
		for _, imp := range f.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			for _, bad := range forbidden {
				if p == bad || strings.HasPrefix(p, bad+"/") {
					t.Errorf("%s imports %s: reach it through package app", name, p)
				}
			}
		}
	}
}
