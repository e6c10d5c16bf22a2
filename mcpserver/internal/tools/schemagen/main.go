// Command schemagen writes schemas.gen.go, the tools' schemas as JSON for
// the configurations a deployment most often runs (see
// tools.GeneratedSchemasSource). `go generate` in package tools runs it.
package main

import (
	"fmt"
	"os"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/tools"
)

func main() {
	src, err := tools.GeneratedSchemasSource(config.DefaultMaxOrderUnits)
	if err == nil {
		err = os.WriteFile("schemas.gen.go", src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "schemagen:", err)
		os.Exit(1)
	}
}
