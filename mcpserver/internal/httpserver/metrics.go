package httpserver

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
)

// MetricsPolicy decides, before anything starts, whether /metrics may be
// served at addr: a loopback address is a choice the operator made
// explicitly with --metrics; any other address needs a token of its own
// (MCP_METRICS_TOKEN_FILE), which is never one the agents hold. others are
// the addresses of the MCP endpoint and the console, which /metrics never
// shares.
func MetricsPolicy(addr, tokenFile string, others ...string) error {
	if addr == "" {
		if tokenFile != "" {
			return errors.New("configuration: MCP_METRICS_TOKEN_FILE is set but serve has no --metrics ADDR: add --metrics, or unset it")
		}
		return nil
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("serve: --metrics %q: want host:port, such as 127.0.0.1:9464: %w", addr, err)
	}
	// Port 0 picks a free port for each listener, so only a fixed port can
	// name a listener already taken.
	for _, other := range others {
		if port != "0" && addr == other {
			return errors.New("serve: --metrics must name an address of its own: /metrics never shares the MCP endpoint's or the console's listener")
		}
	}
	if tokenFile == "" && !IsLoopbackHost(strings.ToLower(host)) {
		return fmt.Errorf("configuration: --metrics %s is reachable from other machines but MCP_METRICS_TOKEN_FILE is not set: listen on 127.0.0.1, or give /metrics a token of its own", addr)
	}
	return nil
}

// ReadMetricsToken reads the /metrics token and refuses one that an agent
// also holds: the agent's token must never open the metrics.
func ReadMetricsToken(readFile func(string) ([]byte, error), path string, agents *bearer.File) (string, error) {
	if path == "" {
		return "", nil
	}
	b, err := readFile(path)
	if err != nil {
		return "", fmt.Errorf("configuration: MCP_METRICS_TOKEN_FILE: %w", err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 16 || strings.ContainsAny(tok, " \t\r\n") {
		return "", errors.New("configuration: MCP_METRICS_TOKEN_FILE: the token must be one line of at least 16 characters without spaces; generate one with `openssl rand -hex 32`")
	}
	if agents != nil {
		if _, ok := agents.Lookup(tok); ok {
			return "", errors.New("configuration: MCP_METRICS_TOKEN_FILE holds a token of MCP_AUTH_TOKENS_FILE: give /metrics a token no agent holds")
		}
	}
	return tok, nil
}

// ListenMetrics serves h as /metrics, and nothing else, on a listener of
// its own at addr, behind token when it is not "".
func ListenMetrics(log *slog.Logger, addr, token string, h http.Handler) (Side, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return Side{}, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if token != "" {
			got, err := bearer.Token(r.Header.Values("Authorization"))
			if err != nil || subtle.ConstantTimeCompare([]byte(got), []byte(token)) != 1 {
				w.Header().Set("WWW-Authenticate", `Bearer realm="metrics"`)
				http.Error(w, "metrics: a valid bearer token (MCP_METRICS_TOKEN_FILE) is required", http.StatusUnauthorized)
				return
			}
		}
		h.ServeHTTP(w, r)
	}))
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	done := make(chan error, 1)
	log.Info("metrics.listening", "addr", ln.Addr().String(), "token", token != "")
	go func() { done <- srv.Serve(ln) }()
	return Side{Name: "metrics", Done: done, Stop: func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
	}}, nil
}
