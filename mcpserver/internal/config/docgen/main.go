// Command docgen writes what is generated from the settings table of
// package config: the README's configuration table (between its settings
// markers), the help text's settings section (settings_help.gen.go) and
// the MCP bundle's user_config (config.BundleFile, read by tools/distpack).
// It runs from the package's directory through `go generate`; `make
// check-generate` fails when an output is out of date.
package main

import (
	"log"
	"os"
	"path/filepath"

	"github.com/korral/storelink/mcpserver/internal/config"
)

// root is the repository root, from mcpserver/internal/config.
const root = "../../.."

func main() {
	readme := filepath.Join(root, "README.md")
	b, err := os.ReadFile(readme)
	if err != nil {
		log.Fatal(err)
	}
	out, err := config.SpliceREADME(string(b))
	if err != nil {
		log.Fatal(err)
	}
	write(readme, []byte(out))
	write("settings_help.gen.go", []byte(config.GeneratedHelp()))
	write(filepath.Join(root, config.BundleFile), config.BundleUserConfig())
}

// write replaces path's content with b, leaving a file that already holds
// b untouched.
func write(path string, b []byte) {
	if old, err := os.ReadFile(path); err == nil && string(old) == string(b) {
		return
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		log.Fatal(err)
	}
}
