// Command storelink-contract checks that a live StoreLink honours the
// StoreLink contract (openapi/storelink.yaml).
//
//	storelink-contract check --base-url URL --keyring-file FILE [flags]
//	storelink-contract demo [--format table|json|junit]
//	storelink-contract proxy --upstream URL [--listen ADDR] [--findings FILE]
//	storelink-contract replay FILE --keyring-file FILE [flags]
//	storelink-contract version
//
// check probes every endpoint of a live StoreLink; demo checks an
// in-process mock; proxy validates live traffic and writes findings as JSON
// lines; replay resends the failing cases check --generate wrote. Exit code:
// 0 conforms, 1 drift, 2 usage error or incomplete check. No output shows a
// store key.
package main

import (
	"cmp"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/korral/storelink/mcpserver/buildinfo"
	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/mockstorelink"
	"github.com/korral/storelink/openapi/contract"
)

// Exit codes.
const (
	exitConforms = 0
	exitDrift    = 1
	exitUsage    = 2
)

const usage = `storelink-contract: check a StoreLink deployment against the contract.

Usage:
  storelink-contract check --base-url URL --keyring-file FILE [flags]
      Probe a StoreLink deployment and validate every answer against the contract.
  storelink-contract demo [--format table|json|junit]
      Run the check against a fresh in-process mock StoreLink.
  storelink-contract check --generate [--seed N] [--replay-out FILE] ...
      Add cases generated from the contract (data, auth, methods, content types, links).
  storelink-contract replay FILE --keyring-file FILE [flags]
      Send the failing cases of a replay file again and say whether each still fails.
  storelink-contract proxy --upstream URL [--listen ADDR] [--findings FILE]
      Forward traffic to StoreLink unchanged and validate every request and answer.
  storelink-contract suggest FINDINGS [--spec FILE] [--out FILE]
      Propose a patch to the contract from the causes of a check report or proxy findings.
  storelink-contract version
      Print the version (also --version).

Exit codes: 0 conforms, 1 drift, 2 usage error or check not completed.
Run "storelink-contract check --help" for the flags of check (and --generate).
`

const checkSynopsis = `Usage: storelink-contract check --base-url URL --keyring-file FILE [flags]

Probe a StoreLink deployment and validate every answer against the contract. With
--generate, also send cases generated from the contract: boundary and negative data,
missing, unknown and other stores' keys, methods and content types the contract does not
have, and the chains of its links; --seed makes a run reproducible, and --replay-out
writes the failing cases, shrunk, for "storelink-contract replay".
Exit codes: 0 conforms, 1 drift, 2 usage error or check not completed.`

const demoSynopsis = `Usage: storelink-contract demo [--format table|json|junit]

Run the check against a fresh in-process mock StoreLink, writes included.`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run is the whole program behind main, returning the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprintln(stderr, "storelink-contract: missing command: want check, demo, proxy, replay, suggest or version (see --help)")
		return exitUsage
	}
	switch args[0] {
	case "check":
		return runCheck(ctx, args[1:], stdout, stderr)
	case "demo":
		return runDemo(ctx, args[1:], stdout, stderr)
	case "proxy":
		return runProxy(ctx, args[1:], stdout, stderr)
	case "replay":
		return runReplay(ctx, args[1:], stdout, stderr)
	case "suggest":
		return runSuggest(args[1:], stdout, stderr)
	}
	switch {
	case cliflag.IsHelp(args[0]):
		fmt.Fprint(stdout, usage)
		return exitConforms
	case cliflag.IsVersion(args[0]):
		fmt.Fprintln(stdout, buildinfo.Get().String("storelink-contract"))
		return exitConforms
	}
	fmt.Fprintf(stderr, "storelink-contract: unknown command %q: want check, demo, proxy, replay, suggest or version (see --help)\n", args[0])
	return exitUsage
}

// headerList is the repeatable --header flag; Set keeps its error so the
// flag package never quotes a value.
type headerList struct {
	h   http.Header
	err error
}

func (l *headerList) String() string { return "" }

func (l *headerList) Set(s string) error {
	name, value, err := contract.ParseHeader(s)
	if err != nil {
		l.err = cmp.Or(l.err, fmt.Errorf("--header: %w", err))
		return nil
	}
	l.h.Add(name, value)
	return nil
}

// operationList is the repeatable --operation flag.
type operationList []string

func (o *operationList) String() string { return strings.Join(*o, ",") }

func (o *operationList) Set(s string) error {
	*o = append(*o, s)
	return nil
}

// clientWithCA returns an HTTP client that trusts the system's roots and
// the PEM certificates in file, for a StoreLink behind a private CA.
func clientWithCA(file string) (*http.Client, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("--ca-cert: %w", err)
	}
	pool, err := x509.SystemCertPool()
	if err != nil {
		pool = x509.NewCertPool()
	}
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("--ca-cert %s: no PEM certificate in the file", file)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	// contract.Check stops at redirects whatever client it is given; this
	// client stops too, so that it is safe wherever it is used.
	noRedirect := func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	return &http.Client{Transport: tr, CheckRedirect: noRedirect}, nil
}

// rate is a --rate value: requests per second, written "10" or "10/s".
type rate float64

func (r *rate) String() string { return strconv.FormatFloat(float64(*r), 'g', -1, 64) + "/s" }

func (r *rate) Set(s string) error {
	v, err := strconv.ParseFloat(strings.TrimSuffix(s, "/s"), 64)
	if err != nil || v <= 0 {
		return errors.New("want a positive number of requests per second, e.g. 10/s")
	}
	*r = rate(v)
	return nil
}

// format is a --format value.
type format string

func (f *format) String() string { return string(*f) }

func (f *format) Set(s string) error {
	if !slices.Contains(contract.Formats, s) {
		return errors.New("want table, json or junit")
	}
	*f = format(s)
	return nil
}

func runCheck(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("storelink-contract check", flag.ContinueOnError)
	f := checkFlagsOn(fs)
	if code, done := parseNoArgs(fs, args, checkSynopsis, stdout, stderr); done {
		return code
	}
	cfg, err := f.config(fs)
	if err != nil {
		fmt.Fprintf(stderr, "storelink-contract check: %v\n", err)
		return exitUsage
	}
	return checkTo(ctx, cfg, string(f.format), f.replayOut, stdout, stderr)
}

// checkFlags are the flags of the check command.
type checkFlags struct {
	baseURL, keyringFile, store, sku, order, supplier string
	specFile, writeStore, caCert, replayOut           string
	allowWrites, noAssume, generate                   bool
	maxOrders, maxRequests                            int
	timeout, deadline                                 time.Duration
	seed                                              uint64
	rate                                              rate
	format                                            format
	headers                                           headerList
	operations                                        operationList
}

func checkFlagsOn(fs *flag.FlagSet) *checkFlags {
	f := &checkFlags{rate: rate(contract.DefaultRate), format: format(contract.FormatTable), headers: headerList{h: http.Header{}}}
	fs.StringVar(&f.baseURL, "base-url", "", "StoreLink base URL, e.g. https://storelink.korral.example (required)")
	fs.StringVar(&f.keyringFile, "keyring-file", "", `JSON file of store id to key, e.g. {"47":"...","102":"..."} (required)`)
	fs.StringVar(&f.store, "store", "", "store to probe with its own key (default: the lowest store id of the keyring)")
	fs.StringVar(&f.sku, "sku", "", "a SKU the store stocks (default: the contract's example SKU)")
	fs.StringVar(&f.order, "order", "", "an existing order `id` of the store to read, in any shape (default: that probe is skipped)")
	fs.StringVar(&f.supplier, "supplier", "", "a supplier `id` to read, in any shape (default: the supplier the SKU names)")
	fs.StringVar(&f.specFile, "spec", "", "check against this contract `file` instead of the embedded one, e.g. a copy patched by suggest")
	fs.BoolVar(&f.allowWrites, "allow-writes", false, "raise ONE replenishment order at --write-store and read it back")
	fs.StringVar(&f.writeStore, "write-store", "", "the only store an order may be raised at (needs --allow-writes)")
	fs.IntVar(&f.maxOrders, "max-orders", contract.DefaultMaxOrders, "most orders the check may leave at StoreLink, a negative write probe it wrongly accepts included; later writes are not sent (needs --allow-writes)")
	fs.DurationVar(&f.timeout, "timeout", contract.DefaultRequestTimeout, "timeout of each request")
	fs.DurationVar(&f.deadline, "deadline", contract.DefaultDeadline, "deadline of the whole check")
	fs.IntVar(&f.maxRequests, "max-requests", contract.DefaultMaxRequests, fmt.Sprintf("most requests the check sends (with --generate the default is %d)", contract.DefaultGenerateMaxRequests))
	fs.StringVar(&f.caCert, "ca-cert", "", "PEM `file` of a CA to trust besides the system's, for a StoreLink behind a private CA")
	fs.BoolVar(&f.noAssume, "no-assumptions", false, "leave out the probes that stand on an assumption the contract does not make (made-up ids and key name nothing, a raised order reads back)")
	fs.BoolVar(&f.generate, "generate", false, "also send cases generated from the contract (data, auth, methods, content types, links)")
	fs.Uint64Var(&f.seed, "seed", 0, "`seed` of the generated cases: the same seed sends the same requests (default: a random seed, printed)")
	fs.StringVar(&f.replayOut, "replay-out", "", "write the failing generated cases, shrunk, to this JSON `file` for storelink-contract replay")
	fs.Var(&f.rate, "rate", "most requests per second, e.g. 10/s")
	fs.Var(&f.format, "format", "report format: table, json or junit")
	fs.Var(&f.headers, "header", "`'Name: value'` added to every request, e.g. a gateway's API key (repeatable; the value is never printed)")
	fs.Var(&f.operations, "operation", "probe only this operation `id`, e.g. getInventory (repeatable; default: all)")
	return f
}

// validate refuses flags that contradict one another; set holds the
// flags given on the command line.
func (f *checkFlags) validate(set map[string]bool) error {
	switch {
	case f.headers.err != nil:
		return f.headers.err
	case (set["seed"] || set["replay-out"]) && !f.generate:
		return errors.New("--seed and --replay-out need --generate")
	case f.baseURL == "" || f.keyringFile == "":
		return errors.New("--base-url and --keyring-file are required")
	case f.timeout <= 0 || f.deadline <= 0 || f.maxRequests <= 0 || f.maxOrders <= 0:
		return errors.New("--timeout, --deadline, --max-requests and --max-orders must be positive")
	case set["max-orders"] && !f.allowWrites:
		return errors.New("--max-orders needs --allow-writes (without it nothing is written)")
	}
	return nil
}

// config validates the flags and builds the check's configuration,
// reading the files they name.
func (f *checkFlags) config(fs *flag.FlagSet) (contract.Config, error) {
	set := map[string]bool{}
	fs.Visit(func(fl *flag.Flag) { set[fl.Name] = true })
	if err := f.validate(set); err != nil {
		return contract.Config{}, err
	}
	keyring, err := contract.ReadKeyringFile(f.keyringFile)
	if err != nil {
		return contract.Config{}, err
	}
	cfg := contract.Config{BaseURL: f.baseURL, Keyring: keyring, Store: f.store, SKU: f.sku, OrderID: f.order,
		SupplierID: f.supplier, AllowWrites: f.allowWrites, WriteStore: f.writeStore, RequestTimeout: f.timeout,
		Deadline: f.deadline, Rate: float64(f.rate), MaxRequests: f.maxRequests, Headers: f.headers.h,
		Operations: f.operations, NoAssumptions: f.noAssume, Generate: f.generate, Seed: f.seed}
	if f.specFile != "" {
		if cfg.Spec, err = os.ReadFile(f.specFile); err != nil {
			return cfg, fmt.Errorf("read --spec: %w", err)
		}
		cfg.SpecName = f.specFile
	}
	if f.allowWrites {
		cfg.MaxOrders = f.maxOrders
	}
	if f.generate && !set["max-requests"] {
		cfg.MaxRequests = 0 // the library's default for generated cases
	}
	if f.generate && !set["seed"] {
		// The report names the seed, so that the run can be repeated.
		cfg.Seed = rand.Uint64()
	}
	if f.caCert != "" {
		if cfg.HTTPClient, err = clientWithCA(f.caCert); err != nil {
			return cfg, err
		}
	}
	return cfg, nil
}

// check runs the check, writes the report and returns the exit code.
// Everything it prints passes through the keyring's redaction first.
func check(ctx context.Context, cfg contract.Config, format string, stdout, stderr io.Writer) int {
	return checkTo(ctx, cfg, format, "", stdout, stderr)
}

// checkTo is check, writing the failing generated cases to replayOut
// when it is not empty.
func checkTo(ctx context.Context, cfg contract.Config, format, replayOut string, stdout, stderr io.Writer) int {
	secrets := contract.Secrets(cfg)
	stdout, stderr = redacting(stdout, secrets), redacting(stderr, secrets)
	rep, err := contract.Check(ctx, cfg)
	if err != nil {
		fmt.Fprintf(stderr, "storelink-contract check: %v\n", err)
		return exitUsage
	}
	if replayOut != "" {
		if err := writeReplay(replayOut, rep.ReplayFile(), secrets); err != nil {
			fmt.Fprintf(stderr, "storelink-contract check: --replay-out: %v\n", err)
			return exitUsage
		}
	}
	if err := rep.Write(stdout, format); err != nil {
		fmt.Fprintf(stderr, "storelink-contract check: write report: %v\n", err)
		return exitUsage
	}
	if rep.Aborted != "" {
		fmt.Fprintf(stderr, "storelink-contract check: %s\n", rep.Aborted)
	}
	announceOrders(stderr, "storelink-contract check", rep)
	switch code := rep.ExitCode(); code {
	case exitDrift:
		fmt.Fprintf(stderr, "storelink-contract check: drift: %d of %d probes do not conform to the contract\n",
			rep.Summary.Drift, rep.Summary.Probes)
		return code
	case exitConforms:
		return code
	default:
		if rep.Aborted == "" {
			fmt.Fprintf(stderr, "storelink-contract check: %d probes could not be checked\n", rep.Summary.Error)
		}
		return code
	}
}

// announceOrders names on stderr every order the run left at StoreLink,
// so that whoever ran it cancels them; the report names them too.
func announceOrders(stderr io.Writer, cmd string, rep *contract.Report) {
	for _, o := range rep.OrdersCreated {
		fmt.Fprintf(stderr, "%s: left at StoreLink: %s\n", cmd, o)
	}
}

// runDemo checks an in-process mock with its default keyring, writes
// included.
func runDemo(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("storelink-contract demo", flag.ContinueOnError)
	fmtName := format(contract.FormatTable)
	fs.Var(&fmtName, "format", "report format: table, json or junit")
	if code, done := parseNoArgs(fs, args, demoSynopsis, stdout, stderr); done {
		return code
	}
	mock, err := mockstorelink.Start(mockstorelink.Options{})
	if err != nil {
		fmt.Fprintf(stderr, "storelink-contract demo: start the mock: %v\n", err)
		return exitUsage
	}
	defer mock.Close()
	fmt.Fprintf(stderr, "storelink-contract demo: mock StoreLink at %s\n", mock.URL)
	cfg := contract.Config{
		BaseURL: mock.URL,
		Keyring: mock.Server.DefaultKeyring(),
		Store:   mockstorelink.StoreSmichov,
		// The SKU whose supplier has a minimum order, so the demo also
		// shows the 422 of an order below it.
		SKU:         mockstorelink.SKUMinimumOrder,
		OrderID:     mockstorelink.OrderOpen,
		AllowWrites: true,
		WriteStore:  mockstorelink.StoreSmichov,
		Rate:        100,
		Deadline:    30 * time.Second,
	}
	return check(ctx, cfg, string(fmtName), stdout, stderr)
}

// redactingWriter redacts store keys and header values in everything
// written through it.
type redactingWriter struct {
	w   io.Writer
	rep *strings.Replacer
}

func redacting(w io.Writer, secrets []string) io.Writer {
	var pairs []string
	for _, k := range secrets {
		if k != "" {
			pairs = append(pairs, k, contract.Redacted)
		}
	}
	if pairs == nil {
		return w
	}
	return &redactingWriter{w: w, rep: strings.NewReplacer(pairs...)}
}

func (r *redactingWriter) Write(p []byte) (int, error) {
	if _, err := io.WriteString(r.w, r.rep.Replace(string(p))); err != nil {
		return 0, err
	}
	return len(p), nil
}

// parseNoArgs parses a subcommand's flags (no positional arguments); done
// means the command is over, with exit code code.
func parseNoArgs(fs *flag.FlagSet, args []string, synopsis string, stdout, stderr io.Writer) (code int, done bool) {
	rest, err := cliflag.Parse(fs, args, synopsis, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitConforms, true
	case err != nil:
		fmt.Fprintln(stderr, err)
		return exitUsage, true
	case len(rest) > 0:
		fmt.Fprintf(stderr, "%s: unexpected argument %q\n", fs.Name(), rest[0])
		return exitUsage, true
	}
	return 0, false
}
