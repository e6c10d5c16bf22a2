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
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

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
	if err := checkLoopback(*addr); err != nil {
		fmt.Fprintf(stderr, "foreign-storelink: -addr: %v\n", err)
		return 2
	}
	if *keyringOut != "" {
		if err := writeKeyring(*keyringOut); err != nil {
			fmt.Fprintf(stderr, "foreign-storelink: -keyring-out: %v\n", err)
			return 1
		}
	}
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		fmt.Fprintf(stderr, "foreign-storelink: %v\n", err)
		return 1
	}
	srv := &http.Server{
		Handler:           foreignstorelink.New(foreignstorelink.Options{}),
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "foreign-storelink: %v\n", err)
		return 1
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		fmt.Fprintf(stderr, "foreign-storelink: shutdown: %v\n", err)
		return 1
	}
	return 0
}

// checkLoopback refuses any address that is not on the loopback interface.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address (use 127.0.0.1, ::1 or localhost)", host)
}

// writeKeyring writes the default keys as a JSON object, store id -> key,
// readable by the owner only.
func writeKeyring(path string) error {
	data, err := json.MarshalIndent(foreignstorelink.DefaultKeys, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
