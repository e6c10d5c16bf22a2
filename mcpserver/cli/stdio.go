package cli

import (
	"context"
	"flag"

	"github.com/korral/storelink/mcpserver/internal/app"
)

const stdioSynopsis = "Usage: storelink-mcp [stdio] [settings]\n\nServe MCP over stdin/stdout; logs go to stderr (or --log-file)."

// runStdio serves one MCP client over stdin and stdout: the default
// command.
func runStdio(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("stdio", flag.ContinueOnError)
	rest, err := parseFlags(fs, args, env, stdioSynopsis)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("stdio: unexpected argument %q", rest[0])
	}
	return app.ServeStdio(ctx, env.options(), env.Stdin, env.Stdout)
}
