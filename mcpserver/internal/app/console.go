package app

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/console"
	"github.com/korral/storelink/mcpserver/internal/httpserver"
	"github.com/korral/storelink/mcpserver/internal/replenish"
)

// ConsoleOptions are the approvals console's listener settings, of
// `console` and of `serve --console`.
type ConsoleOptions struct {
	// Addr is the listen address (host:port).
	Addr string
	// TLSCert and TLSKey are PEM files; with them the console serves HTTPS.
	TLSCert string
	TLSKey  string
	// BehindTLSProxy says a reverse proxy in front terminates TLS.
	BehindTLSProxy bool
}

// Timeouts of the console's http.Server. Pages are small and rendered from
// the ledger and a few StoreLink reads; a client that trickles its headers
// or never reads the answer is cut off instead of holding a connection.
const (
	consoleReadHeaderTimeout = 10 * time.Second
	consoleReadTimeout       = 30 * time.Second
	consoleWriteTimeout      = 60 * time.Second
	consoleIdleTimeout       = 2 * time.Minute
	consoleShutdownTimeout   = 10 * time.Second
	consoleMaxHeaderBytes    = 64 << 10
	// consoleKeyTimeout bounds reading (or, on first use, making) the
	// login form's key in the state database at start.
	consoleKeyTimeout = 10 * time.Second
)

// ConsolePolicy refuses, before anything starts, a console that would
// carry secrets and session cookies in plain text over the network: a
// non-loopback address needs TLS here, or --behind-tls-proxy.
func ConsolePolicy(flagName string, o ConsoleOptions) error {
	host, _, err := net.SplitHostPort(o.Addr)
	if err != nil {
		return fmt.Errorf("%s %q: want host:port, such as 127.0.0.1:8090: %v", flagName, o.Addr, err)
	}
	if (o.TLSCert == "") != (o.TLSKey == "") {
		return errors.New("configuration: give both --tls-cert and --tls-key, or neither")
	}
	if o.TLSCert != "" && o.BehindTLSProxy {
		return errors.New("configuration: --tls-cert and --behind-tls-proxy contradict each other: the console terminates TLS itself, or a proxy does")
	}
	if o.TLSCert == "" && !o.BehindTLSProxy && !httpserver.IsLoopbackHost(strings.ToLower(host)) {
		return fmt.Errorf("configuration: %s %s is reachable from other machines, but the console would send approver secrets and session cookies in plain HTTP: "+
			"give --tls-cert and --tls-key, listen on 127.0.0.1 behind a TLS proxy, or pass --behind-tls-proxy if a proxy in front terminates TLS", flagName, o.Addr)
	}
	return nil
}

// consoleServer is a running console listener.
type consoleServer struct {
	srv  *http.Server
	ln   net.Listener
	done chan error
}

// startConsole serves the approvals console over a's ledger and StoreLink
// on a listener of its own, and logs the address it is bound to. Its login
// limit, sessions and login form key live in the state database, shared
// by every replica; it answers only to the host names of its listen
// address and of CONSOLE_PUBLIC_URL.
func startConsole(a *App, o ConsoleOptions) (*consoleServer, error) {
	var tlsConfig *tls.Config
	if o.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(o.TLSCert, o.TLSKey)
		if err != nil {
			return nil, exit2(fmt.Errorf("configuration: --tls-cert/--tls-key: %v", err))
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	hosts, err := consoleHosts(o.Addr, a.cfg.ConsolePublicURL)
	if err != nil {
		return nil, exit2(err)
	}
	// The login form's key, like the sessions and the login limit, lives
	// in the state database, so a form served by one replica may be posted
	// to another.
	ctx, cancel := context.WithTimeout(context.Background(), consoleKeyTimeout)
	formKey, err := a.db.ConsoleFormKey(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	h, err := console.New(a.consoleBackend(), console.Options{Logger: a.log, BehindTLSProxy: o.BehindTLSProxy,
		Sessions: console.StateSessions{DB: a.db}, Logins: a.db, Hosts: hosts, FormKey: formKey})
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: consoleReadHeaderTimeout,
		ReadTimeout:       consoleReadTimeout,
		WriteTimeout:      consoleWriteTimeout,
		IdleTimeout:       consoleIdleTimeout,
		MaxHeaderBytes:    consoleMaxHeaderBytes,
		TLSConfig:         tlsConfig,
	}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	scheme := "http"
	if o.TLSCert != "" {
		scheme = "https"
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	c := &consoleServer{srv: srv, ln: ln, done: make(chan error, 1)}
	a.log.Info("console.start", "addr", ln.Addr().String(), "url", scheme+"://"+ln.Addr().String()+"/",
		"tls", o.TLSCert != "", "behind_tls_proxy", o.BehindTLSProxy, "hosts", strings.Join(hosts, ","))
	go func() { c.done <- srv.Serve(ln) }()
	return c, nil
}

// consoleHosts are the host names the console answers to: the host of its
// listen address (with the loopback names when it is a loopback one) and
// the host of CONSOLE_PUBLIC_URL. A listen address of every interface
// (0.0.0.0, ::) names no host, so it needs CONSOLE_PUBLIC_URL.
func consoleHosts(listen, publicURL string) ([]string, error) {
	host, _, err := net.SplitHostPort(listen)
	if err != nil {
		return nil, fmt.Errorf("configuration: console address %q: %v", listen, err)
	}
	var hosts []string
	switch ip := net.ParseIP(host); {
	case host == "" || ip != nil && ip.IsUnspecified():
	case httpserver.IsLoopbackHost(strings.ToLower(host)):
		hosts = append(hosts, host, "localhost", "127.0.0.1", "::1")
	default:
		hosts = append(hosts, host)
	}
	if publicURL != "" {
		u, err := url.Parse(publicURL)
		if err != nil || u.Hostname() == "" {
			return nil, fmt.Errorf("configuration: CONSOLE_PUBLIC_URL=%q names no host", publicURL)
		}
		hosts = append(hosts, u.Hostname())
	}
	if len(hosts) == 0 {
		return nil, fmt.Errorf("configuration: the console listens on %s, every interface, which names no host it could check requests against: "+
			"set CONSOLE_PUBLIC_URL to the address people open it at (requests naming any other host are refused)", listen)
	}
	return slices.Compact(hosts), nil
}

// stop drains the console's requests for a bounded time.
func (c *consoleServer) stop(a *App) {
	ctx, cancel := context.WithTimeout(context.Background(), consoleShutdownTimeout)
	defer cancel()
	_ = c.srv.Shutdown(ctx)
	a.log.Info("console.stop", "addr", c.ln.Addr().String())
}

// ServeConsole serves the approvals console alone, for deployments whose
// MCP server runs over stdio, until ctx is cancelled: it opens the same
// state database and reaches the same StoreLink (UPSTREAM_BASE_URL and the
// keyring) as the server.
func ServeConsole(ctx context.Context, opts Options, o ConsoleOptions) error {
	a, err := Load(opts)
	if err != nil {
		return err
	}
	defer a.Close()
	cfg := a.cfg
	if cfg.UpstreamBaseURL == "" {
		return exit2(errors.New("configuration: the console needs UPSTREAM_BASE_URL: it sends approved orders to the StoreLink the server uses (an embedded demo StoreLink lives inside one server process; use serve --console for it)"))
	}
	if cfg.Keyring == nil {
		return exit2(errors.New("configuration: the console needs the keyring (STORELINK_KEYRING_FILE or STORELINK_KEYRING) of the stores whose orders it approves"))
	}
	if err := a.connect(cfg.UpstreamBaseURL, cfg.Keyring); err != nil {
		return err
	}
	a.upstreamID = replenish.UpstreamIdentity(cfg.UpstreamBaseURL)
	c, err := startConsole(a, o)
	if err != nil {
		return err
	}
	select {
	case err := <-c.done:
		return fmt.Errorf("console: %w", err)
	case <-ctx.Done():
	}
	c.stop(a)
	return nil
}

// consoleBackend is the console's Backend over a's ledger, approver
// register, audit trail and StoreLink (a.up, which must reach a.upstreamID).
func (a *App) consoleBackend() console.Backend {
	flow := a.workflow(nil)
	flow.Upstream, flow.UpstreamID, flow.LookbackDays = a.up, a.upstreamID, a.cfg.DefaultLookbackDays
	flow.Reach = nil
	return console.NewWorkflowBackend(console.WorkflowOptions{Flow: flow, Approvers: a.db, Audit: a.db, Holds: a.holds, Now: a.now, Log: a.log})
}
