package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/config"
)

// Every command that takes settings offers the flag of every non-secret
// setting, and none collides with a command's own flag. audit, migrate,
// approvals and approvers take no settings flags.
func TestSettingFlagsOnEveryCommand(t *testing.T) {
	for _, cmd := range []string{"stdio", "serve", "console", "doctor"} {
		t.Run(cmd, func(t *testing.T) {
			env, _ := testEnv(t, "", nil)
			var out bytes.Buffer
			env.Stdout = &out
			if err := Run(context.Background(), []string{cmd, "--help"}, env); err != nil {
				t.Fatal(err)
			}
			help := out.String()
			for _, s := range config.Settings() {
				f := s.Flag()
				if f == "" {
					if strings.Contains(help, "  -"+strings.ReplaceAll(strings.ToLower(s.Name), "_", "-")+"\n") ||
						strings.Contains(help, "  -"+strings.ReplaceAll(strings.ToLower(s.Name), "_", "-")+" ") {
						t.Errorf("the secret %s has a flag", s.Name)
					}
					continue
				}
				_, usage, ok := strings.Cut(help, "\n  -"+f)
				usage, _, _ = strings.Cut(usage, "\n  -")
				if !ok || !strings.Contains(usage, "("+s.Name) {
					t.Errorf("--%s is not %s's flag here:%s", f, s.Name, usage)
				}
			}
		})
	}
}

// A bad flag value is refused with the variable's message, and the flag
// wins over the environment.
func TestSettingFlagRefusedAsItsVariable(t *testing.T) {
	run := func(args []string, vars map[string]string) error {
		env, _ := testEnv(t, "", vars)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		return Run(ctx, args, env)
	}
	fromEnv := run(nil, map[string]string{"MAX_ORDER_UNITS": "0"})
	fromFlag := run([]string{"--max-order-units", "0"}, map[string]string{"MAX_ORDER_UNITS": "7"})
	var e1, e2 *ExitError
	if !errors.As(fromEnv, &e1) || !errors.As(fromFlag, &e2) || e1.Code != 2 || e2.Code != 2 || fromEnv.Error() != fromFlag.Error() {
		t.Fatalf("from the environment %v, from the flag %v", fromEnv, fromFlag)
	}
	if want := `configuration: MAX_ORDER_UNITS="0": must be an integer from 1 to 100000`; fromFlag.Error() != want {
		t.Errorf("got %q, want %q", fromFlag, want)
	}
}
