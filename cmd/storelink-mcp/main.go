// Command storelink-mcp is the Korral StoreLink MCP server. With no
// UPSTREAM_BASE_URL it starts an embedded mock StoreLink on a loopback port,
// so it runs with no configuration at all.
//
// Built with the nodemo tag (ADR 0015) it has no embedded mock and refuses
// to start without UPSTREAM_BASE_URL.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/korral/storelink/internal/gcdefault"
	"github.com/korral/storelink/mcpserver/cli"
)

func main() {
	// Before any work: the collector's defaults, unless GOGC or GOMEMLIMIT
	// is set (ADR 0045).
	gcdefault.Apply(os.Getenv)
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
		Embedded: embedded,
	})
}
