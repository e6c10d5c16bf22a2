//go:build nodemo

package main

import "github.com/korral/storelink/mcpserver/cli"

// embedded is nil in the production build: without UPSTREAM_BASE_URL the
// server exits 2 (ADR 0015).
var embedded cli.EmbeddedFunc
