package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/app"
)

const serveSynopsis = "Usage: storelink-mcp serve --http ADDR [--stateless] [--console ADDR2] [settings]\n\nServe MCP over Streamable HTTP at /mcp, with /healthz and /readyz.\nBearer tokens come from MCP_AUTH_TOKENS_FILE. --console serves the approvals console\non a listener of its own (never the MCP endpoint's); a non-loopback console address\nneeds --console-tls-cert and --console-tls-key, or --behind-tls-proxy."

// runServe serves MCP over Streamable HTTP until ctx is cancelled (SIGTERM),
// then drains in-flight requests for at most the shutdown timeout
// (app.ServeHTTP).
func runServe(ctx context.Context, args []string, env Env) error {
	o, err := parseServeFlags(args, env)
	if err != nil {
		return err
	}
	return app.ServeHTTP(ctx, env.options(), o)
}

// hostList is a repeatable, comma-separable flag.
type hostList []string

func (h *hostList) String() string { return strings.Join(*h, ",") }

func (h *hostList) Set(v string) error {
	for _, s := range strings.Split(v, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		if s == "" {
			continue
		}
		if strings.ContainsAny(s, "/:[]* ") {
			return fmt.Errorf("%q: give a bare host name or IPv4 address, without scheme, port or wildcard", s)
		}
		*h = append(*h, s)
	}
	return nil
}

// parseServeFlags reads serve's flags and refuses, before anything starts,
// the combinations that make no sense.
func parseServeFlags(args []string, env Env) (app.ServeOptions, error) {
	fs := flag.NewFlagSet("serve", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o app.ServeOptions
	var hosts hostList
	fs.StringVar(&o.Addr, "http", "127.0.0.1:8080", "`address` to listen on (host:port; port 0 picks a free one)")
	fs.BoolVar(&o.Stateless, "stateless", false, "no MCP sessions for 2025-11-25 clients either (2026-07-28 requests never have one), so any replica can answer any request")
	fs.BoolVar(&o.InsecureNoAuth, "insecure-no-auth", false, "serve without bearer tokens on a non-loopback address (also MCP_HTTP_INSECURE=true)")
	fs.Var(&hosts, "allowed-host", "host `name` clients use to reach the server, besides loopback and the listen address (repeatable, or comma-separated)")
	fs.DurationVar(&o.RequestTimeout, "request-timeout", 60*time.Second, "longest time one MCP request may take")
	fs.DurationVar(&o.ShutdownTimeout, "shutdown-timeout", 20*time.Second, "on SIGTERM, how long in-flight requests may take to finish")
	fs.StringVar(&o.Console.Addr, "console", "", "also serve the approvals console on this `address`, a listener of its own (host:port)")
	addConsoleTLSFlags(fs, &o.Console, "console-")
	fs.StringVar(&o.MetricsAddr, "metrics", "", "serve Prometheus /metrics on this `address`, a listener of its own (host:port); not loopback needs MCP_METRICS_TOKEN_FILE")
	rest, err := parseFlags(fs, args, env, serveSynopsis)
	if err != nil {
		return o, err
	}
	if len(rest) > 0 {
		return o, usageError("serve: unexpected argument %q", rest[0])
	}
	o.AllowedHosts = hosts
	if o.Console.Addr == "" && (o.Console.TLSCert != "" || o.Console.TLSKey != "" || o.Console.BehindTLSProxy) {
		return o, usageErr(errors.New("serve: --console-tls-cert, --console-tls-key and --behind-tls-proxy apply to the console: add --console ADDR"))
	}
	if o.Console.Addr != "" {
		if err := app.ConsolePolicy("--console", o.Console); err != nil {
			return o, usageErr(err)
		}
		if o.Console.Addr == o.Addr {
			return o, usageErr(errors.New("serve: --console must name another address than --http: the console never shares the MCP endpoint's listener"))
		}
	}
	if o.RequestTimeout <= 0 || o.ShutdownTimeout <= 0 {
		return o, usageErr(errors.New("serve: --request-timeout and --shutdown-timeout must be positive"))
	}
	return o, nil
}
