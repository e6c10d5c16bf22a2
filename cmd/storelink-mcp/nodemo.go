//go:build nodemo

package main

import "github.com/korral/storelink/mcpserver/cli"

// embedded is nil in the production build: with UPSTREAM_BASE_URL unset the
// server exits 2 naming the setting instead of serving made-up data, and the
// embedded mock's packages (kin-openapi, whose JSON Schema library compiles
// its meta-schemas at init) stay out of the binary (ADR 0015).
var embedded cli.EmbeddedFunc
