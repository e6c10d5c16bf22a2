package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/openapi/contract"
)

// defaultListen is where the proxy listens unless told otherwise: loopback
// only, since every request through it carries a store key.
const defaultListen = "127.0.0.1:8089"

// shutdownGrace is how long the proxy waits for requests in flight once it
// is told to stop, before it writes the summary.
const shutdownGrace = 5 * time.Second

const proxySynopsis = `Usage: storelink-contract proxy --upstream URL [--listen ADDR] [--findings FILE] [flags]

Forward every request to StoreLink unchanged and validate the request and its answer
against the contract and its semantic rules. Findings are JSON lines (--findings, default
stdout); on SIGINT or SIGTERM a summary line follows and the proxy exits.
Exit codes: 0 no finding, 1 at least one finding, 2 usage error or the proxy could not run.`

// onListen is told the proxy's address once it listens; tests replace it.
var onListen = func(string) {}

func runProxy(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("storelink-contract proxy", flag.ContinueOnError)
	var (
		upstream    = fs.String("upstream", "", "StoreLink base URL to forward to, e.g. https://storelink.korral.example (required)")
		listen      = fs.String("listen", defaultListen, "`address` to listen on; loopback only unless --allow-non-loopback")
		allowRemote = fs.Bool("allow-non-loopback", false, "allow a --listen address off loopback (the traffic carries store keys: put TLS in front)")
		findings    = fs.String("findings", "-", "`file` the findings go to as JSON lines, - for stdout")
		timeout     = fs.Duration("timeout", contract.DefaultProxyTimeout, "timeout of each forwarded request")
		caCert      = fs.String("ca-cert", "", "PEM `file` of a CA to trust besides the system's, for a StoreLink behind a private CA")
	)
	if code, done := parseNoArgs(fs, args, proxySynopsis, stdout, stderr); done {
		return code
	}
	fail := func(format string, a ...any) int {
		fmt.Fprintf(stderr, "storelink-contract proxy: "+format+"\n", a...)
		return exitUsage
	}
	if *upstream == "" {
		return fail("--upstream is required")
	}
	if _, err := contract.ParseUpstream(*upstream); err != nil {
		return fail("%v", err)
	}
	if _, _, err := net.SplitHostPort(*listen); err != nil {
		return fail("--listen %q: want host:port, e.g. %s", *listen, defaultListen)
	}
	if !*allowRemote && !contract.IsLoopback(*listen) {
		return fail("--listen %s is not a loopback address; requests carry store keys, so add --allow-non-loopback to listen there on purpose", *listen)
	}
	if *timeout <= 0 {
		return fail("--timeout must be positive")
	}
	cfg := contract.ProxyConfig{Upstream: *upstream, Timeout: *timeout,
		Log: slog.New(slog.NewTextHandler(stderr, nil)).With("component", "storelink-contract proxy")}
	if *caCert != "" {
		c, err := clientWithCA(*caCert)
		if err != nil {
			return fail("%v", err)
		}
		cfg.HTTPClient = c
	}
	out := stdout
	if *findings != "-" {
		f, err := os.OpenFile(*findings, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
		if err != nil {
			return fail("--findings: %v", err)
		}
		defer f.Close()
		out = f
	}
	cfg.Findings = out
	p, err := contract.NewProxy(cfg)
	if err != nil {
		return fail("%v", err)
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fail("listen on %s: %v", *listen, err)
	}
	addr := ln.Addr().String()
	srv := &http.Server{Handler: p, ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(stderr, "storelink-contract proxy: listening on http://%s, forwarding to %s\n", addr, *upstream)
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	onListen(addr)

	var serveErr error
	select {
	case <-ctx.Done():
	case serveErr = <-served:
	}
	shut, cancel := context.WithTimeout(context.Background(), shutdownGrace)
	defer cancel()
	_ = srv.Shutdown(shut)
	sum, werr := p.Close()
	printSummary(stderr, sum)
	switch {
	case serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed):
		return fail("serve: %v", serveErr)
	case werr != nil:
		return fail("write the findings: %v", werr)
	case sum.Findings > 0:
		return exitDrift
	}
	return exitConforms
}

// printSummary writes the counts for a person: one line in all, the
// causes, then one line per operation and per finding kind and rule.
func printSummary(w io.Writer, s contract.ProxySummary) {
	fmt.Fprintf(w, "storelink-contract proxy: %d requests, %d findings, %d unanswered\n", s.Requests, s.Findings, s.Unanswered)
	if len(s.Causes) > 0 {
		fmt.Fprintf(w, "  causes (%d), most telling first:\n", len(s.Causes))
		for _, c := range s.Causes {
			fmt.Fprintf(w, "    %dx %s (on %s)\n", c.Count, c.Text, strings.Join(c.Operations, ", "))
		}
	}
	for _, op := range s.OperationIDs() {
		c := s.Operations[op]
		name := op
		if name == "" {
			name = "(outside the contract)"
		}
		fmt.Fprintf(w, "  %-28s %4d requests %4d findings\n", name, c.Requests, c.Findings)
	}
	for _, group := range []struct {
		label  string
		counts map[string]int
	}{{"kind", s.ByKind}, {"rule", s.ByRule}} {
		var parts []string
		for k, n := range group.counts {
			parts = append(parts, fmt.Sprintf("%s=%d", k, n))
		}
		if len(parts) > 0 {
			slices.Sort(parts)
			fmt.Fprintf(w, "  by %s: %s\n", group.label, strings.Join(parts, " "))
		}
	}
}
