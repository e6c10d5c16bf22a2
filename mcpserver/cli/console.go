package cli

import (
	"context"
	"flag"

	"github.com/korral/storelink/mcpserver/internal/app"
)

const consoleSynopsis = `Usage: storelink-mcp console --listen ADDR [--tls-cert FILE --tls-key FILE|--behind-tls-proxy] [settings]

Serve the approvals console, where named approvers (storelink-mcp approvers add) log in,
read the staged orders with their stock evidence, and approve or reject them. It opens
the server's state database and sends approved orders to UPSTREAM_BASE_URL with the
keyring's keys. A non-loopback address needs --tls-cert and --tls-key, or
--behind-tls-proxy when a reverse proxy terminates TLS (see docs/operations.md).`

// runConsole serves the approvals console alone (for stdio deployments),
// with the server's state database and StoreLink.
func runConsole(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	fs.SetOutput(env.Stderr)
	var o app.ConsoleOptions
	fs.StringVar(&o.Addr, "listen", "127.0.0.1:8090", "`address` to serve the console on (host:port; port 0 picks a free one)")
	addConsoleTLSFlags(fs, &o, "")
	rest, err := parseFlags(fs, args, env, consoleSynopsis)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("console: unexpected argument %q", rest[0])
	}
	if err := app.ConsolePolicy("--listen", o); err != nil {
		return usageErr(err)
	}
	return app.ServeConsole(ctx, env.options(), o)
}

// addConsoleTLSFlags adds the console's TLS flags, each name after prefix
// ("" for console, "console-" for serve).
func addConsoleTLSFlags(fs *flag.FlagSet, o *app.ConsoleOptions, prefix string) {
	fs.StringVar(&o.TLSCert, prefix+"tls-cert", "", "PEM `file` of the console's TLS certificate (chain); serves HTTPS")
	fs.StringVar(&o.TLSKey, prefix+"tls-key", "", "PEM `file` of the certificate's private key")
	fs.BoolVar(&o.BehindTLSProxy, "behind-tls-proxy", false, "a reverse proxy in front terminates TLS: cookies are marked Secure, and a non-loopback address is allowed without --tls-cert")
}
