package cli

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// The console refuses plain-text secrets off loopback and malformed flags.
func TestConsoleRefusesUnsafeOrBrokenStart(t *testing.T) {
	up, calls := failingUpstream(t)
	cases := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"non-loopback without TLS", []string{"console", "--listen", "0.0.0.0:0"}, nil, "plain HTTP"},
		{"named host without TLS", []string{"console", "--listen", "approvals.example:0"}, nil, "--behind-tls-proxy"},
		{"cert without key", []string{"console", "--listen", "127.0.0.1:0", "--tls-cert", "c.pem"}, nil, "both --tls-cert and --tls-key"},
		{"TLS and proxy", []string{"console", "--tls-cert", "c.pem", "--tls-key", "k.pem", "--behind-tls-proxy"}, nil, "contradict"},
		{"address without port", []string{"console", "--listen", "127.0.0.1"}, nil, "host:port"},
		{"stray argument", []string{"console", "extra", "--listen", "127.0.0.1:0"}, nil, "unexpected argument"},
		{"unknown flag", []string{"console", "--lisen", "127.0.0.1:0"}, nil, "lisen"},
		{"no StoreLink", []string{"console", "--listen", "127.0.0.1:0"}, map[string]string{"UPSTREAM_BASE_URL": ""}, "needs UPSTREAM_BASE_URL"},
		{"serve: console off loopback", []string{"serve", "--http", "127.0.0.1:0", "--console", "0.0.0.0:0"}, nil, "plain HTTP"},
		{"serve: console on the MCP address", []string{"serve", "--http", "127.0.0.1:8080", "--console", "127.0.0.1:8080"}, nil, "never shares"},
		{"serve: TLS flag without console", []string{"serve", "--http", "127.0.0.1:0", "--behind-tls-proxy"}, nil, "add --console"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, stderr := testEnv(t, up.URL, tc.vars)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Run(ctx, tc.args, env)
			var exit *ExitError
			if !errors.As(err, &exit) || exit.Code != 2 {
				t.Fatalf("got %v, want exit code 2\nstderr:\n%s", err, stderr.String())
			}
			if !strings.Contains(err.Error()+stderr.String(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(stderr.String(), "console.start") {
				t.Fatal("the console started")
			}
		})
	}
	if *calls != 0 {
		t.Fatalf("%d requests reached StoreLink", *calls)
	}
}

func TestConsoleHelp(t *testing.T) {
	env, _ := testEnv(t, "http://127.0.0.1:1", nil)
	var out bytes.Buffer
	env.Stdout = &out
	if err := Run(context.Background(), []string{"console", "--listen", "127.0.0.1:0", "-h"}, env); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"Usage: storelink-mcp console", "--behind-tls-proxy", "--tls-cert"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("console -h lacks %q:\n%s", want, out.String())
		}
	}
}
