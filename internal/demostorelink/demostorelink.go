// Package demostorelink starts the mock StoreLink in-process as
// storelink-mcp's embedded StoreLink (cli.EmbeddedFunc). It only starts the
// mock; the server decides the rest. cmd/storelink-mcp (except nodemo, ADR
// 0015) and the benchmarks use it.
package demostorelink

import (
	"context"
	"time"

	"github.com/korral/storelink/mcpserver/cli"
	"github.com/korral/storelink/mockstorelink"
)

// Options are the choices a benchmark may make about the mock; the zero
// value is storelink-mcp's.
type Options struct {
	// ValidateResponses has the mock check its own responses against the
	// contract, as the test suite does; the binary does not.
	ValidateResponses bool
}

// Start runs the mock StoreLink in-process on an ephemeral loopback port,
// with its default keyring (stores 47 and 102), as storelink-mcp does. It
// neither checks its own responses against the contract nor keeps a
// request log: the test suite proves the mock conforms, and a demo server
// may run for days, so both would only cost time and memory on every call
// (docs/benchmarks.md).
func Start(ctx context.Context, fixedNow time.Time) (*cli.EmbeddedUpstream, error) {
	return Func(Options{})(ctx, fixedNow)
}

// Func is Start with o's choices.
func Func(o Options) cli.EmbeddedFunc {
	return func(_ context.Context, fixedNow time.Time) (*cli.EmbeddedUpstream, error) {
		opts := mockstorelink.Options{NoResponseValidation: !o.ValidateResponses, MaxRequestLog: -1}
		if !fixedNow.IsZero() {
			opts.Now = func() time.Time { return fixedNow }
		}
		r, err := mockstorelink.Start(opts)
		if err != nil {
			return nil, err
		}
		return &cli.EmbeddedUpstream{BaseURL: r.URL, Keyring: r.Server.DefaultKeyring(), Close: r.Close}, nil
	}
}
