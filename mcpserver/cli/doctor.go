package cli

import (
	"context"
	"flag"

	"github.com/korral/storelink/mcpserver/internal/app"
)

const doctorSynopsis = "Usage: storelink-mcp doctor [settings]\n\nCheck the configuration, reach UPSTREAM_BASE_URL, read each keyring store with its\nown key, and check the state database, the token file and the clock. One line per\ncheck with the fix; exit 0 only when all pass, 1 otherwise."

// runDoctor checks what a deployment needs, in the order an operator would
// fix it (app.Doctor).
func runDoctor(ctx context.Context, args []string, env Env) error {
	fs := flag.NewFlagSet("doctor", flag.ContinueOnError)
	rest, err := parseFlags(fs, args, env, doctorSynopsis)
	if err != nil {
		return err
	}
	if len(rest) > 0 {
		return usageError("doctor: unexpected argument %q", rest[0])
	}
	return app.Doctor(ctx, env.options(), env.Stdout)
}
