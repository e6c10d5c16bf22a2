package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"

	"github.com/korral/storelink/mcpserver/cliflag"
	"github.com/korral/storelink/openapi/contract"
)

const replaySynopsis = `Usage: storelink-contract replay FILE --keyring-file FILE [flags]

Send the cases of a replay file (written by check --generate --replay-out) again, exactly
as written, and say for each whether it still fails. Keys come from --keyring-file, as for
check; the file names them by store only. A case that writes is sent only with
--allow-writes and --write-store naming its store.
Exit codes: 0 every case passes now, 1 a case still fails, 2 usage error or replay not completed.`

// writeReplay writes a replay file, through the redaction of secrets as
// everything else the command writes.
func writeReplay(path string, f *contract.ReplayFile, secrets []string) error {
	data, err := json.MarshalIndent(f, "", "  ")
	if err != nil {
		return err
	}
	var b strings.Builder
	w := redacting(&b, secrets)
	if _, err := w.Write(append(data, '\n')); err != nil {
		return err
	}
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("storelink-contract replay", flag.ContinueOnError)
	var (
		baseURL     = fs.String("base-url", "", "StoreLink base URL (default: the one the file's cases failed against)")
		keyringFile = fs.String("keyring-file", "", `JSON file of store id to key, as for check (required)`)
		allowWrites = fs.Bool("allow-writes", false, "send the file's write cases to --write-store")
		writeStore  = fs.String("write-store", "", "the only store a write case may go to (needs --allow-writes)")
		maxOrders   = fs.Int("max-orders", contract.DefaultMaxOrders, "most orders the replay may leave at StoreLink; later writes are not sent (needs --allow-writes)")
		timeout     = fs.Duration("timeout", contract.DefaultRequestTimeout, "timeout of each request")
		deadline    = fs.Duration("deadline", contract.DefaultDeadline, "deadline of the whole replay")
		maxRequests = fs.Int("max-requests", contract.DefaultMaxRequests, "most requests the replay sends")
		caCert      = fs.String("ca-cert", "", "PEM `file` of a CA to trust besides the system's")
		rt          = rate(contract.DefaultRate)
		fmtName     = format(contract.FormatTable)
		headers     = headerList{h: http.Header{}}
	)
	fs.Var(&rt, "rate", "most requests per second, e.g. 10/s")
	fs.Var(&fmtName, "format", "report format: table, json or junit")
	fs.Var(&headers, "header", "`'Name: value'` added to every request (repeatable; the value is never printed)")
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "storelink-contract replay: "+format+"\n", a...)
		return exitUsage
	}
	rest, err := cliflag.Parse(fs, args, replaySynopsis, stdout)
	switch {
	case errors.Is(err, flag.ErrHelp):
		return exitConforms
	case err != nil:
		fmt.Fprintln(stderr, err)
		return exitUsage
	case len(rest) != 1:
		return fail("want exactly one replay file, got %d arguments", len(rest))
	case headers.err != nil:
		return fail("%v", headers.err)
	case *keyringFile == "":
		return fail("--keyring-file is required")
	case *timeout <= 0 || *deadline <= 0 || *maxRequests <= 0 || *maxOrders <= 0:
		return fail("--timeout, --deadline, --max-requests and --max-orders must be positive")
	}
	file, err := contract.ReadReplayFile(rest[0])
	if err != nil {
		return fail("%v", err)
	}
	keyring, err := contract.ReadKeyringFile(*keyringFile)
	if err != nil {
		return fail("%v", err)
	}
	cfg := contract.Config{BaseURL: *baseURL, Keyring: keyring, AllowWrites: *allowWrites, WriteStore: *writeStore,
		RequestTimeout: *timeout, Deadline: *deadline, Rate: float64(rt), MaxRequests: *maxRequests, Headers: headers.h}
	if cfg.BaseURL == "" {
		cfg.BaseURL = file.BaseURL
	}
	if *allowWrites {
		cfg.MaxOrders = *maxOrders
	}
	if *caCert != "" {
		if cfg.HTTPClient, err = clientWithCA(*caCert); err != nil {
			return fail("%v", err)
		}
	}
	secrets := contract.Secrets(cfg)
	stdout, stderr = redacting(stdout, secrets), redacting(stderr, secrets)
	rep, err := contract.Replay(ctx, cfg, file)
	if err != nil {
		return fail("%v", err)
	}
	if err := rep.Write(stdout, string(fmtName)); err != nil {
		return fail("write report: %v", err)
	}
	announceOrders(stderr, "storelink-contract replay", rep)
	still := 0
	for _, p := range rep.Probes {
		if p.Case != nil {
			still++
		}
	}
	switch code := rep.ExitCode(); code {
	case exitDrift:
		fmt.Fprintf(stderr, "storelink-contract replay: %d of %d cases still fail\n", still, len(file.Cases))
		return code
	case exitConforms:
		fmt.Fprintf(stderr, "storelink-contract replay: all %d cases pass now\n", len(file.Cases))
		return code
	default:
		if rep.Aborted != "" {
			fmt.Fprintf(stderr, "storelink-contract replay: %s\n", rep.Aborted)
		} else {
			fmt.Fprintf(stderr, "storelink-contract replay: %d cases could not be replayed\n", rep.Summary.Error)
		}
		return code
	}
}
