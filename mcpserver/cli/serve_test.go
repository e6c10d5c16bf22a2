package cli

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestServeRefusesUnsafeOrBrokenStart(t *testing.T) {
	up, calls := failingUpstream(t)
	tokens := writeTokens(t, "agent "+testToken+"\n")
	empty := writeTokens(t, "# nobody\n")
	cases := []struct {
		name string
		args []string
		vars map[string]string
		want string
	}{
		{"non-loopback without tokens", []string{"--http", "0.0.0.0:0", "--allowed-host", "mcp.example"}, nil, "MCP_AUTH_TOKENS_FILE is not set"},
		{"named host without tokens", []string{"--http", "mcp.example:0"}, nil, "MCP_AUTH_TOKENS_FILE is not set"},
		{"tokens and insecure", []string{"--http", "127.0.0.1:0", "--insecure-no-auth"}, map[string]string{envTokensFile: tokens}, "keep one"},
		{"tokens and insecure env", []string{"--http", "127.0.0.1:0"}, map[string]string{envTokensFile: tokens, envInsecure: "true"}, "keep one"},
		{"wildcard without host names", []string{"--http", ":0", "--insecure-no-auth"}, nil, "--allowed-host"},
		{"insecure not a boolean", []string{"--http", "127.0.0.1:0"}, map[string]string{envInsecure: "yes"}, "must be true, false, 1 or 0"},
		{"empty token file", []string{"--http", "127.0.0.1:0"}, map[string]string{envTokensFile: empty}, "holds no tokens"},
		{"missing token file", []string{"--http", "127.0.0.1:0"}, map[string]string{envTokensFile: empty + ".missing"}, "token file"},
		{"address without port", []string{"--http", "127.0.0.1"}, nil, "host:port"},
		{"allowed host with scheme", []string{"--allowed-host", "https://x"}, nil, "bare host name"},
		{"stray argument", []string{"--http", "127.0.0.1:0", "extra"}, nil, "unexpected argument"},
		{"oauth and insecure", []string{"--http", "127.0.0.1:0", "--insecure-no-auth"}, map[string]string{envOAuthIssuer: "https://login.korral.example", "MCP_PUBLIC_URL": "https://mcp.korral.example"}, "OAUTH_ISSUER is set and so is --insecure-no-auth"},
		// Checked before anything listens: the issuer is not reachable.
		{"oauth issuer unreachable", []string{"--http", "127.0.0.1:0"}, map[string]string{envOAuthIssuer: "http://127.0.0.1:1", "MCP_PUBLIC_URL": "https://mcp.korral.example"}, "OAUTH_ISSUER: issuer metadata"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			env, stderr := testEnv(t, up.URL, tc.vars)
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := Run(ctx, append([]string{"serve"}, tc.args...), env)
			var exit *ExitError
			if !errors.As(err, &exit) || exit.Code != 2 {
				t.Fatalf("got %v, want exit code 2\nstderr:\n%s", err, stderr.String())
			}
			if !strings.Contains(err.Error()+stderr.String(), tc.want) {
				t.Fatalf("error %q does not say %q", err, tc.want)
			}
			if strings.Contains(stderr.String(), "http.listening") {
				t.Fatal("the server started listening")
			}
		})
	}
	if *calls != 0 {
		t.Fatalf("%d requests reached StoreLink", *calls)
	}
}

// TestServeWiresTheTransport: the token file, --allowed-host and the session
// caps of the configuration reach the transport (package httpserver tests
// each guard itself).
func TestServeWiresTheTransport(t *testing.T) {
	up, calls := failingUpstream(t)
	env, stderr := testEnv(t, up.URL, map[string]string{
		envTokensFile:                     writeTokens(t, "agent "+testToken+"\n"),
		"MCP_HTTP_MAX_SESSIONS_PER_TOKEN": "1",
	})
	r := startServe(t, env, stderr, "--allowed-host", "mcp.korral.example")
	mcpURL := r.base + "/mcp"
	bearer := "Bearer " + testToken
	for _, tc := range []struct {
		name string
		hdr  map[string]string
		want int
	}{
		{"no token", map[string]string{}, http.StatusUnauthorized},
		{"foreign host", map[string]string{"Authorization": bearer, "Host": "evil.example.com"}, http.StatusMisdirectedRequest},
		{"allowed host name", map[string]string{"Authorization": bearer, "Host": "mcp.korral.example"}, http.StatusOK},
		{"beyond the per-token cap", map[string]string{"Authorization": bearer}, http.StatusServiceUnavailable},
	} {
		if got, body := post(t, mcpURL, initBody, tc.hdr); got != tc.want {
			t.Fatalf("%s: status %d, want %d: %s", tc.name, got, tc.want, body)
		}
	}
	if *calls != 0 {
		t.Fatalf("%d requests reached StoreLink", *calls)
	}
	var order []string
	for _, l := range logLines(stderr.String()) {
		switch msg := l["msg"].(string); msg {
		case "auth.tokens_loaded", "server.start", "http.listening":
			order = append(order, msg)
		}
	}
	if strings.Join(order, " ") != "auth.tokens_loaded server.start http.listening" {
		t.Fatalf("start-up lines %v", order)
	}
	if strings.Contains(stderr.String(), testToken) {
		t.Fatal("a token reached the log")
	}
}
