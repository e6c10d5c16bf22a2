// Command foreign-storelink serves the foreign StoreLink double (package
// foreignstorelink): the contract's eight endpoints with deliberate
// departures from openapi/storelink.yaml, on a loopback address.
//
//	foreign-storelink [-addr 127.0.0.1:0] [-keyring-out FILE]
//
// It prints "listening on http://ADDR" as the first line on stdout once it
// listens, and stops cleanly on SIGINT or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"

	"github.com/korral/storelink/conformance/doublecmd"
	"github.com/korral/storelink/conformance/foreignstorelink"
)

const usage = `usage: foreign-storelink [-addr HOST:PORT] [-keyring-out FILE]

Serves a StoreLink double that departs from openapi/storelink.yaml on purpose
(departures D1-D8, see the foreignstorelink package documentation).

  -addr HOST:PORT      loopback address to listen on (default 127.0.0.1:0)
  -keyring-out FILE    write the default keys, a JSON object store id -> key,
                       to FILE (mode 0600)
  -h, --help           show this help

Prints "listening on http://ADDR" as the first line on stdout once listening;
stops on SIGINT or SIGTERM.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the command without the process around it; it returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("foreign-storelink", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	addr := fs.String("addr", "127.0.0.1:0", "")
	keyringOut := fs.String("keyring-out", "", "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "foreign-storelink: %v (see -h)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "foreign-storelink: unexpected argument %q (see -h)\n", fs.Arg(0))
		return 2
	}
	if err := doublecmd.CheckLoopback(*addr); err != nil {
		fmt.Fprintf(stderr, "foreign-storelink: -addr: %v\n", err)
		return 2
	}
	if *keyringOut != "" {
		if err := doublecmd.WriteSecretJSON(*keyringOut, foreignstorelink.DefaultKeys); err != nil {
			fmt.Fprintf(stderr, "foreign-storelink: -keyring-out: %v\n", err)
			return 1
		}
	}
	return doublecmd.Serve(ctx, "foreign-storelink", *addr, foreignstorelink.New(foreignstorelink.Options{}), stdout, stderr)
}
