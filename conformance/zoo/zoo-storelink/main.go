// Command zoo-storelink serves one StoreLink variant of package zoo (the
// mock StoreLink behind the departures of one member) on a loopback
// address.
//
//	zoo-storelink -member NAME [-addr 127.0.0.1:0] [-keyring-out FILE]
//	zoo-storelink -list
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
	"github.com/korral/storelink/conformance/zoo"
	"github.com/korral/storelink/mockstorelink"
)

const usage = `usage: zoo-storelink -member NAME [-addr HOST:PORT] [-keyring-out FILE]
       zoo-storelink -list

Serves one StoreLink of the zoo: the mock StoreLink behind the departures of
a StoreLink that differs from openapi/storelink.yaml (see the zoo package).

  -member NAME         the member to serve (-list names them)
  -addr HOST:PORT      loopback address to listen on (default 127.0.0.1:0)
  -keyring-out FILE    write the member's keys, a JSON object store id -> key,
                       to FILE (mode 0600)
  -list                print each member and the departure it stands for
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
	fs := flag.NewFlagSet("zoo-storelink", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	member := fs.String("member", "", "")
	addr := fs.String("addr", "127.0.0.1:0", "")
	keyringOut := fs.String("keyring-out", "", "")
	list := fs.Bool("list", false, "")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, usage)
			return 0
		}
		fmt.Fprintf(stderr, "zoo-storelink: %v (see -h)\n", err)
		return 2
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "zoo-storelink: unexpected argument %q (see -h)\n", fs.Arg(0))
		return 2
	}
	if *list {
		for _, s := range zoo.Members() {
			fmt.Fprintf(stdout, "%-18s %s\n", s.Name, s.Kind)
		}
		return 0
	}
	spec, ok := zoo.Lookup(*member)
	if !ok {
		fmt.Fprintf(stderr, "zoo-storelink: -member: no member %q (zoo-storelink -list names them)\n", *member)
		return 2
	}
	if err := doublecmd.CheckLoopback(*addr); err != nil {
		fmt.Fprintf(stderr, "zoo-storelink: -addr: %v\n", err)
		return 2
	}
	mock, err := mockstorelink.New(mockstorelink.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "zoo-storelink: %v\n", err)
		return 1
	}
	if *keyringOut != "" {
		if err := doublecmd.WriteSecretJSON(*keyringOut, mock.DefaultKeyring()); err != nil {
			fmt.Fprintf(stderr, "zoo-storelink: -keyring-out: %v\n", err)
			return 1
		}
	}
	return doublecmd.Serve(ctx, "zoo-storelink", *addr, spec.Build(mock), stdout, stderr)
}
