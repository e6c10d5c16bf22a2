package config

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGeneratedFilesAreCurrent checks that the README's configuration
// table, settings_help.gen.go and the bundle's user_config are what `go
// generate` writes from the settings table now (make check-generate checks
// the same in CI).
func TestGeneratedFilesAreCurrent(t *testing.T) {
	if SettingsHelp != helpText() {
		t.Error("settings_help.gen.go is out of date with the settings table: run go generate ./internal/config")
	}
	root := filepath.Join("..", "..", "..")
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
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
	if b, err := os.ReadFile(filepath.Join(root, BundleFile)); err != nil || string(b) != string(BundleUserConfig()) {
		t.Errorf("%s is out of date with the settings table (%v): run go generate ./internal/config", BundleFile, err)
	}
}
