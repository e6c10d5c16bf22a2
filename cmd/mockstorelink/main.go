// Command mockstorelink serves the mock StoreLink over HTTP, for demos,
// end-to-end runs and contract checks against a known world.
//
// It prints the base URL on stdout, logs JSON to stderr and stops on SIGINT
// or SIGTERM.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/korral/storelink/conformance/doublecmd"
	"github.com/korral/storelink/mcpserver/buildinfo"
	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mockstorelink"
)

const usage = `mockstorelink: a strict mock StoreLink with a deterministic fixture world.

Usage:
  mockstorelink [flags]    serve until SIGINT or SIGTERM; print the base URL on stdout
  mockstorelink version    print the version (also --version)

A large world (--stores, --skus) keeps the fixture stores and SKUs and adds
generated ones after them: store i (from 7) has the id 1000+i, SKU i (from 13)
the code 9000000+i, so --stores 180 --skus 18000 ends at store 1180 and SKU
9018000. In it, --keyring-out covers every store.

Logs go to stderr as JSON. See the mockstorelink package's README for the world
and the fault file format.`

// adminTokenEnv is read when --admin-token is not given, so the token need
// not appear in a process listing.
const adminTokenEnv = "MOCKSTORELINK_ADMIN_TOKEN"

// errUsage marks errors in the command line, which exit with status 2.
var errUsage = errors.New("usage")

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "mockstorelink:", err)
		if errors.Is(err, errUsage) {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

// run serves the mock until ctx ends.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	if len(args) > 0 && cliflag.IsVersion(args[0]) {
		_, err := fmt.Fprintln(stdout, buildinfo.Get().String("mockstorelink"))
		return err
	}
	fs := flag.NewFlagSet("mockstorelink", flag.ContinueOnError)
	addr := fs.String("addr", "127.0.0.1:8089", "`host:port` to listen on (port 0 picks a free one)")
	nowFlag := fs.String("now", "", "fixed clock as RFC 3339, or \"default\" for the tests' instant; empty = real time")
	seed := fs.Int64("seed", 0, "world seed (0 = the default seed)")
	stores := fs.Int("stores", 0, fmt.Sprintf("stores in the world, %d to %d (0 = the fixture world's %d)", mockstorelink.FixtureStores, mockstorelink.MaxStores, mockstorelink.FixtureStores))
	skus := fs.Int("skus", 0, fmt.Sprintf("SKUs in the world, %d to %d (0 = the fixture world's %d)", mockstorelink.FixtureSKUs, mockstorelink.MaxSKUs, mockstorelink.FixtureSKUs))
	keyringOut := fs.String("keyring-out", "", "write the default keyring (stores 47 and 102; every store in a large world) as JSON to this `file` (mode 0600)")
	allKeysOut := fs.String("all-keys-out", "", "write every store's key as JSON to this `file` (mode 0600)")
	adminToken := fs.String("admin-token", "", "bearer token that enables /_admin/ (default $"+adminTokenEnv+"; none = admin disabled)")
	faultsFile := fs.String("faults", "", "JSON `file` with an array of faults to start with")
	noResponseValidation := fs.Bool("no-response-validation", false, "do not check the mock's own responses against the contract (load runs)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error")
	rest, err := cliflag.Parse(fs, args, usage, stdout)
	if errors.Is(err, flag.ErrHelp) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: %v", errUsage, err)
	}
	if len(rest) > 0 {
		return fmt.Errorf("%w: unexpected arguments %q (see --help)", errUsage, rest)
	}

	if err := checkSize("--stores", *stores, mockstorelink.FixtureStores, mockstorelink.MaxStores); err != nil {
		return err
	}
	if err := checkSize("--skus", *skus, mockstorelink.FixtureSKUs, mockstorelink.MaxSKUs); err != nil {
		return err
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return fmt.Errorf("%w: --log-level: %v", errUsage, err)
	}
	logger := slog.New(slog.NewJSONHandler(stderr, &slog.HandlerOptions{Level: level}))

	opts := mockstorelink.Options{
		Seed:                 *seed,
		Stores:               *stores,
		SKUs:                 *skus,
		AdminToken:           *adminToken,
		NoResponseValidation: *noResponseValidation,
		Logger:               logger,
	}
	if opts.AdminToken == "" {
		opts.AdminToken = getenv(adminTokenEnv)
	}
	if opts.Now, err = clock(*nowFlag); err != nil {
		return err
	}
	faults, err := readFaults(*faultsFile)
	if err != nil {
		return err
	}

	m, err := mockstorelink.StartOn(*addr, opts)
	if err != nil {
		return err
	}
	defer m.Close()
	m.Server.SetFaults(faults...)
	if err := writeKeys(m.Server, *keyringOut, *allKeysOut); err != nil {
		return err
	}
	logger.Info("mock StoreLink listening", "url", m.URL, "stores", len(m.Server.Keys()), "fixed_clock", opts.Now != nil,
		"admin", opts.AdminToken != "", "response_validation", !opts.NoResponseValidation, "faults", len(faults))
	// The URL goes to stdout last, after the key files exist, so a script
	// that waits for it can use everything at once.
	if _, err := fmt.Fprintln(stdout, m.URL); err != nil {
		return err
	}

	<-ctx.Done()
	logger.Info("shutting down")
	return m.Close()
}

// checkSize checks a world size flag: 0, or lo to hi.
func checkSize(name string, n, lo, hi int) error {
	if n != 0 && (n < lo || n > hi) {
		return fmt.Errorf("%w: %s: want %d to %d (0 = the fixture world), got %d", errUsage, name, lo, hi, n)
	}
	return nil
}

// clock reads --now: empty is the real clock, "default" the tests' instant,
// anything else an RFC 3339 time.
func clock(now string) (func() time.Time, error) {
	switch now {
	case "":
		return nil, nil
	case "default":
		return mockstorelink.DefaultNow, nil
	}
	fixed, err := time.Parse(time.RFC3339, now)
	if err != nil {
		return nil, fmt.Errorf("%w: --now: %v", errUsage, err)
	}
	return func() time.Time { return fixed }, nil
}

// readFaults reads the --faults file, if one is given.
func readFaults(file string) ([]mockstorelink.Fault, error) {
	if file == "" {
		return nil, nil
	}
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--faults: %w", err)
	}
	faults, err := mockstorelink.ParseFaults(data)
	if err != nil {
		return nil, fmt.Errorf("--faults %s: %w", file, err)
	}
	return faults, nil
}

// writeKeys writes the default keyring and every store's key to the files
// given (mode 0600).
func writeKeys(s *mockstorelink.Server, keyringOut, allKeysOut string) error {
	if keyringOut != "" {
		if err := doublecmd.WriteSecretJSON(keyringOut, s.DefaultKeyring()); err != nil {
			return err
		}
	}
	if allKeysOut != "" {
		return doublecmd.WriteSecretJSON(allKeysOut, s.Keys())
	}
	return nil
}
