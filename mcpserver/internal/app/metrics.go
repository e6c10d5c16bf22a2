package app

import (
	"context"
	"crypto/subtle"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/httpserver"
)

// metricsPolicy decides, before anything starts, whether /metrics may be
// served at addr: a loopback address is a choice the operator made
// explicitly with --metrics; any other address needs a token of its own
// (MCP_METRICS_TOKEN_FILE), which is never one the agents hold.
func metricsPolicy(o ServeOptions, tokenFile string) error {
	if o.MetricsAddr == "" {
		if tokenFile != "" {
			return errors.New("configuration: MCP_METRICS_TOKEN_FILE is set but serve has no --metrics ADDR: add --metrics, or unset it")
		}
		return nil
	}
	host, _, err := net.SplitHostPort(o.MetricsAddr)
	if err != nil {
		return fmt.Errorf("serve: --metrics %q: want host:port, such as 127.0.0.1:9464: %w", o.MetricsAddr, err)
	}
	// Port 0 picks a free port for each listener, so only a fixed port can
	// name a listener already taken.
	if _, port, _ := net.SplitHostPort(o.MetricsAddr); port != "0" && (o.MetricsAddr == o.Addr || o.MetricsAddr == o.Console.Addr) {
		return errors.New("serve: --metrics must name an address of its own: /metrics never shares the MCP endpoint's or the console's listener")
	}
	if tokenFile == "" && !httpserver.IsLoopbackHost(strings.ToLower(host)) {
		return fmt.Errorf("configuration: --metrics %s is reachable from other machines but MCP_METRICS_TOKEN_FILE is not set: listen on 127.0.0.1, or give /metrics a token of its own", o.MetricsAddr)
	}
	return nil
}

// readMetricsToken reads the /metrics token and refuses one that an agent
// also holds: the agent's token must never open the metrics.
func readMetricsToken(readFile func(string) ([]byte, error), path string, agents *bearer.File) (string, error) {
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

// metricsServer serves /metrics, and nothing else, on its own listener.
type metricsServer struct {
	srv  *http.Server
	done chan error
}

func startMetrics(a *App, addr string, token string) (*metricsServer, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: %w", err)
	}
	mux := http.NewServeMux()
	h := a.tel.metrics
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
	m := &metricsServer{srv: &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}, done: make(chan error, 1)}
	a.log.Info("metrics.listening", "addr", ln.Addr().String(), "token", token != "")
	go func() { m.done <- m.srv.Serve(ln) }()
	return m, nil
}

func (m *metricsServer) stop() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = m.srv.Shutdown(ctx)
}
