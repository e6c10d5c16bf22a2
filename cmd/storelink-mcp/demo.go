//go:build !nodemo

package main

import (
	"github.com/korral/storelink/internal/demostorelink"
	"github.com/korral/storelink/mcpserver/cli"
)

// embedded starts the demo StoreLink when UPSTREAM_BASE_URL is unset. The
// nodemo build leaves it nil, and with it the mock and its validation
// libraries out of the binary (ADR 0015).
var embedded cli.EmbeddedFunc = demostorelink.Start
