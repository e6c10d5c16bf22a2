// Package demostorelink is the embedded demo StoreLink of storelink-mcp:
// the mock StoreLink (package mockstorelink) started in-process, in the
// shape of the server's embedded-StoreLink hook (cli.EmbeddedFunc). The
// server itself decides when to start it, pins its clock, takes its
// keyring and closes it; this package only starts the mock.
//
// It is the one copy of that start-up: cmd/storelink-mcp links it (except
// in the nodemo build, ADR 0015), and the benchmarks (bench/profiledmcp,
// bench's in-process benchmarks) use it, so what they measure is the
// program the binary runs.
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
