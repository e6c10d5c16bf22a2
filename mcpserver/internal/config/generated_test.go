package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent checks that the README's configuration
// table and settings_help.gen.go are what `go generate` writes from the
// settings table now (make check-generate checks the same in CI).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	if SettingsHelp != helpText() {
		t.Error("settings_help.gen.go is out of date with the settings table: run go generate ./internal/config")
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Skipf("README not found next to the module: %v", err)
	}
	want, err := SpliceREADME(string(b))
	if err != nil {
		t.Fatal(err)
	}
	if want != string(b) {
		t.Error("README.md's configuration table is out of date with the settings table: run go generate ./internal/config")
	}
}
