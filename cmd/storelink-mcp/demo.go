//go:build !nodemo

package main

import (
	"github.com/korral/storelink/internal/demostorelink"
	"github.com/korral/storelink/mcpserver/cli"
)

// embedded starts the demo StoreLink when UPSTREAM_BASE_URL is unset; nil
// in the nodemo build (ADR 0015).
var embedded cli.EmbeddedFunc = demostorelink.Start
