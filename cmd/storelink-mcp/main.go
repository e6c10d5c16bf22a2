// Command storelink-mcp is the Korral StoreLink MCP server. With no
// UPSTREAM_BASE_URL it starts an embedded mock StoreLink on a loopback port,
// so it runs with no configuration at all.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/korral/storelink/mcpserver/cli"
	"github.com/korral/storelink/mockstorelink"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdin, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "storelink-mcp:", err)
		var exit *cli.ExitError
		if errors.As(err, &exit) {
			os.Exit(exit.Code)
		}
		os.Exit(1)
	}
}

func run(ctx context.Context, args []string, getenv func(string) string, stdin io.Reader, stdout, stderr io.Writer) error {
	return cli.Run(ctx, args, cli.Env{
		Getenv:   getenv,
		ReadFile: os.ReadFile,
		Stdin:    stdin,
		Stdout:   stdout,
		Stderr:   stderr,
		Embedded: startEmbedded,
	})
}

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
