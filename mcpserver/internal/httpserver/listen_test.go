package httpserver

import (
	"context"
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestListenPolicies: the refusals checked before anything starts, each
// named by a piece of its message; "" means allowed.
func TestListenPolicies(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want string
	}{
		{"loopback without tokens", ret(AuthPolicy("127.0.0.1:8080", nil, false, "", "")), ""},
		{"open address without tokens", ret(AuthPolicy("10.0.0.5:8080", nil, false, "", "")), "reachable from other machines"},
		{"open address behind a proxy", ret(AuthPolicy("10.0.0.5:8080", nil, true, "", "")), ""},
		{"tokens and insecure", ret(AuthPolicy("127.0.0.1:8080", nil, true, "/tokens", "")), "keep one"},
		{"issuer and insecure", ret(AuthPolicy("127.0.0.1:8080", nil, true, "", "https://id.example")), "keep one"},
		{"wildcard without host names", ret(AuthPolicy("0.0.0.0:8080", nil, false, "/tokens", "")), "--allowed-host"},
		{"wildcard with host names", ret(AuthPolicy("0.0.0.0:8080", []string{"mcp.example"}, false, "/tokens", "")), ""},
		{"no port", ret(AuthPolicy("localhost", nil, false, "", "")), "want host:port"},
		{"no metrics", MetricsPolicy("", ""), ""},
		{"metrics token without metrics", MetricsPolicy("", "/metrics-token"), "has no --metrics ADDR"},
		{"loopback metrics", MetricsPolicy("127.0.0.1:9464", "", "127.0.0.1:8080"), ""},
		{"open metrics without a token", MetricsPolicy("0.0.0.0:9464", "", "127.0.0.1:8080"), "MCP_METRICS_TOKEN_FILE is not set"},
		{"open metrics with a token", MetricsPolicy("0.0.0.0:9464", "/metrics-token", "127.0.0.1:8080"), ""},
		{"metrics on the MCP address", MetricsPolicy("127.0.0.1:8080", "", "127.0.0.1:8080"), "an address of its own"},
		{"metrics on the console's address", MetricsPolicy("127.0.0.1:8081", "", "127.0.0.1:8080", "127.0.0.1:8081"), "an address of its own"},
		{"port 0 twice", MetricsPolicy("127.0.0.1:0", "", "127.0.0.1:0"), ""},
	} {
		if tc.want == "" && tc.err != nil || tc.want != "" && (tc.err == nil || !strings.Contains(tc.err.Error(), tc.want)) {
			t.Errorf("%s: %v, want %q", tc.name, tc.err, tc.want)
		}
	}
}

// ret is the error of a call that also returns a value.
func ret[T any](_ T, err error) error { return err }

// TestReadMetricsToken: the token is one line of 16 characters or more, and
// never one an agent holds.
func TestReadMetricsToken(t *testing.T) {
	agents := tokenFile(t, "buyer agent-token-0123456789abcdef0123456789\n")
	read := func(content string) (string, error) {
		p := filepath.Join(t.TempDir(), "metrics-token")
		if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		return ReadMetricsToken(os.ReadFile, p, agents)
	}
	if tok, err := read("metrics-token-fedcba9876543210\n"); err != nil || tok != "metrics-token-fedcba9876543210" {
		t.Errorf("own token: %q, %v", tok, err)
	}
	for content, want := range map[string]string{"short\n": "at least 16 characters", "agent-token-0123456789abcdef0123456789\n": "a token no agent holds"} {
		if _, err := read(content); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", content, err, want)
		}
	}
	if tok, err := ReadMetricsToken(os.ReadFile, "", agents); tok != "" || err != nil {
		t.Errorf("no file: %q, %v", tok, err)
	}
}

// TestServeUntilDoneStopsWhenASideFails: a failing side listener ends the
// serving with its name, after the MCP endpoint drained; no server.stop.
func TestServeUntilDoneStopsWhenASideFails(t *testing.T) {
	opts, logs := testOptions(newGate())
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	quiet, failing := make(chan error), make(chan error, 1)
	failing <- errors.New("address in use")
	err = s.ServeUntilDone(context.Background(), ln, 0, Side{Name: "console", Done: quiet}, Side{Name: "metrics", Done: failing})
	if err == nil || err.Error() != "metrics: address in use" {
		t.Errorf("ServeUntilDone: %v, want the metrics listener's failure", err)
	}
	if countLines(logs.String(), "server.stop") != 0 {
		t.Errorf("a failed serve logged server.stop:\n%s", logs.String())
	}
}
