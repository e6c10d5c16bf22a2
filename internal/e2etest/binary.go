package e2etest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

// build is the one storelink-mcp of a test run.
var build struct {
	once sync.Once
	dir  string // removed by Run
	path string
	err  error
}

// Binary is storelink-mcp, built on first use and shared by the run.
func Binary(t testing.TB) string {
	t.Helper()
	build.once.Do(func() {
		root, err := findRoot()
		if err != nil {
			build.err = err
			return
		}
		if build.dir, err = os.MkdirTemp("", "storelink-e2e-"); err != nil {
			build.err = err
			return
		}
		build.path = filepath.Join(build.dir, "storelink-mcp")
		cmd := exec.Command("go", "build", "-o", build.path, "./cmd/storelink-mcp")
		cmd.Dir = root
		if out, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("%w\n%s", err, out)
		}
	})
	if build.err != nil {
		t.Fatalf("build storelink-mcp: %v", build.err)
	}
	return build.path
}

// Run runs the tests, then removes the binary Binary built, if any; its
// result is the exit code for os.Exit.
func Run(m *testing.M) int {
	code := m.Run()
	if build.dir != "" {
		_ = os.RemoveAll(build.dir)
	}
	return code
}

// Root is the repository's root, the directory holding go.work: tests run
// in their package's directory, and find the repository's files from here.
func Root(t testing.TB) string {
	t.Helper()
	root, err := findRoot()
	if err != nil {
		t.Fatal(err)
	}
	return root
}

// Path is a file of the repository, named by its slash-separated path from
// the root (as in "docs/operations.md").
func Path(t testing.TB, rel string) string {
	t.Helper()
	return filepath.Join(Root(t), filepath.FromSlash(rel))
}

// findRoot walks up from the working directory to the one holding go.work.
func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.work")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("no go.work above the working directory: the tests run inside the repository")
		}
		dir = parent
	}
}
