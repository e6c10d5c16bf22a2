package httpserver

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/bearer"
	"github.com/korral/storelink/mcpserver/internal/config"
)

// AuthPolicy decides, before anything starts, whether the MCP endpoint may
// listen at addr with this token file and identity provider, and returns the
// listen host. A non-loopback address needs one of them, unless
// insecureNoAuth says something in front authenticates callers; a wildcard
// address needs allowedHosts.
func AuthPolicy(addr string, allowedHosts []string, insecureNoAuth bool, tokensFile, issuer string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("serve: --http %q: want host:port, such as 127.0.0.1:8080: %w", addr, err)
	}
	host = strings.ToLower(host)
	switch {
	case tokensFile != "" && insecureNoAuth:
		return "", fmt.Errorf("configuration: %s is set and so is --insecure-no-auth (or %s): keep one", config.EnvAuthTokensFile, config.EnvHTTPInsecure)
	case issuer != "" && insecureNoAuth:
		return "", fmt.Errorf("configuration: %s is set and so is --insecure-no-auth (or %s): keep one", config.EnvOAuthIssuer, config.EnvHTTPInsecure)
	case tokensFile == "" && issuer == "" && !IsLoopbackHost(host) && !insecureNoAuth:
		return "", fmt.Errorf("configuration: --http %s is reachable from other machines but %s is not set (nor %s): "+
			"give a token file (lines of \"label token\"), name an identity provider whose access tokens to accept, listen on 127.0.0.1, or pass --insecure-no-auth if something in front of the server authenticates callers", addr, config.EnvAuthTokensFile, config.EnvOAuthIssuer)
	case IsWildcardHost(host) && len(allowedHosts) == 0:
		return "", fmt.Errorf("configuration: --http %s listens on every interface, so the server cannot tell which host names are its own: "+
			"name them with --allowed-host (for example --allowed-host mcp.korral.internal)", addr)
	}
	return host, nil
}

// LogAuth logs how the MCP endpoint admits callers: the token file's labels
// (tokens may be nil), the identity provider (issuer "" for none), or a
// warning that it admits everyone.
func LogAuth(log *slog.Logger, tokens *bearer.File, issuer, audience, jwksURI string, insecureNoAuth bool) {
	if tokens != nil {
		log.Info("auth.tokens_loaded", "path", tokens.Path(), "labels", tokens.Labels())
	}
	if issuer != "" {
		log.Info("auth.oauth", "issuer", issuer, "audience", audience, "jwks_uri", jwksURI)
	}
	if tokens == nil && issuer == "" {
		reason := "loopback address"
		if insecureNoAuth {
			reason = "--insecure-no-auth"
		}
		log.Warn("auth.disabled", "reason", reason, "note", "every caller that can reach the address can use the tools")
	}
}

// Side is a listener served beside the MCP endpoint, such as the console or
// /metrics: Done receives the error that ended it, and Stop ends it.
type Side struct {
	Name string
	Done <-chan error
	Stop func()
}

// ServeUntilDone serves on ln until ctx is cancelled or a side listener
// fails, then drains for at most grace. It does not stop the sides.
func (s *Server) ServeUntilDone(ctx context.Context, ln net.Listener, grace time.Duration, sides ...Side) error {
	serveErr := make(chan error, 1)
	go func() { serveErr <- s.Serve(ln) }()
	sideErr := make(chan error, len(sides))
	for _, side := range sides {
		go func() { sideErr <- fmt.Errorf("%s: %w", side.Name, <-side.Done) }()
	}
	var failed error
	select {
	case err := <-serveErr:
		return fmt.Errorf("serve: %w", err)
	case failed = <-sideErr:
	case <-ctx.Done():
		s.log.Info("http.shutdown", "grace", grace.String())
	}
	sctx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	// A forced end is logged by Shutdown; the process still stops cleanly.
	_ = s.Shutdown(sctx)
	if failed != nil {
		return failed
	}
	s.log.Info("server.stop", "transport", "http")
	return nil
}
