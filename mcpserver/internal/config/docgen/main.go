// Command docgen writes, from the settings table of package config, the
// README's configuration table (between its settings markers) and the
// help text's settings section (settings_help.gen.go). It runs from the
// package's directory through `go generate`; `make check-generate` fails
// when either output is out of date.
package main

import (
	"log"
	"os"

	"github.com/korral/storelink/mcpserver/internal/config"
)

// readme is the repository's README, from mcpserver/internal/config.
const readme = "../../../README.md"

func main() {
	b, err := os.ReadFile(readme)
	if err != nil {
		log.Fatal(err)
	}
	out, err := config.SpliceREADME(string(b))
	if err != nil {
		log.Fatal(err)
	}
	if out != string(b) {
		if err := os.WriteFile(readme, []byte(out), 0o644); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile("settings_help.gen.go", []byte(config.GeneratedHelp()), 0o644); err != nil {
		log.Fatal(err)
	}
}
