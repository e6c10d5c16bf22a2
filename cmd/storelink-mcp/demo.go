//go:build !nodemo

package main

import (
	"context"
	"time"

	"github.com/korral/storelink/mcpserver/cli"
	"github.com/korral/storelink/mockstorelink"
)

// embedded starts the demo StoreLink when UPSTREAM_BASE_URL is unset. The
// nodemo build leaves it nil, and with it the mock and its validation
// libraries out of the binary (ADR 0015).
var embedded cli.EmbeddedFunc = startEmbedded

// startEmbedded runs the mock StoreLink in-process on an ephemeral loopback
// port, with its default keyring (stores 47 and 102). It neither checks its
// own responses against the contract nor keeps a request log: the test
// suite proves the mock conforms, and a demo server may run for days, so
// both would only cost time and memory on every call (docs/benchmarks.md).
func startEmbedded(_ context.Context, fixedNow time.Time) (*cli.EmbeddedUpstream, error) {
	opts := mockstorelink.Options{NoResponseValidation: true, MaxRequestLog: -1}
	if !fixedNow.IsZero() {
		opts.Now = func() time.Time { return fixedNow }
	}
	r, err := mockstorelink.Start(opts)
	if err != nil {
		return nil, err
	}
	return &cli.EmbeddedUpstream{BaseURL: r.URL, Keyring: r.Server.DefaultKeyring(), Close: r.Close}, nil
}
