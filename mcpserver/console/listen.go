package console

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/korral/storelink/mcpserver/internal/httpserver"
)

// ListenOptions are the console's listener settings.
type ListenOptions struct {
	// Addr is the listen address (host:port).
	Addr string
	// TLSCert and TLSKey are PEM files; with them the console serves HTTPS.
	TLSCert string
	TLSKey  string
	// BehindTLSProxy says a reverse proxy in front terminates TLS.
	BehindTLSProxy bool
}

// Timeouts of the console's http.Server, so slow clients cannot hold
// connections.
const (
	readHeaderTimeout = 10 * time.Second
	readTimeout       = 30 * time.Second
	writeTimeout      = 60 * time.Second
	idleTimeout       = 2 * time.Minute
	shutdownTimeout   = 10 * time.Second
	maxHeaderBytes    = 64 << 10
	// formKeyTimeout bounds reading the login form's key at start.
	formKeyTimeout = 10 * time.Second
)

// Policy refuses a non-loopback console without TLS or --behind-tls-proxy.
func Policy(flagName string, o ListenOptions) error {
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

// Server is a running console listener.
type Server struct {
	srv *http.Server
	ln  net.Listener
	log *slog.Logger
	// Done receives the error that ended serving.
	Done chan error
}

// ConfigError is a listener setting that cannot be used.
type ConfigError struct{ Err error }

func (e *ConfigError) Error() string { return e.Err.Error() }
func (e *ConfigError) Unwrap() error { return e.Err }

// Listen serves the console over b on its own listener and logs the address.
// It answers only to the host names of its address and publicURL. formKey
// reads (or makes) the login form's shared key.
func Listen(l ListenOptions, publicURL string, formKey func(context.Context) ([]byte, error), b Backend, o Options) (*Server, error) {
	var tlsConfig *tls.Config
	if l.TLSCert != "" {
		cert, err := tls.LoadX509KeyPair(l.TLSCert, l.TLSKey)
		if err != nil {
			return nil, &ConfigError{fmt.Errorf("configuration: --tls-cert/--tls-key: %v", err)}
		}
		tlsConfig = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}
	hosts, err := listenHosts(l.Addr, publicURL)
	if err != nil {
		return nil, &ConfigError{err}
	}
	ctx, cancel := context.WithTimeout(context.Background(), formKeyTimeout)
	o.FormKey, err = formKey(ctx)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	o.Hosts, o.BehindTLSProxy = hosts, l.BehindTLSProxy
	h, err := New(b, o)
	if err != nil {
		return nil, err
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: readHeaderTimeout,
		ReadTimeout:       readTimeout,
		WriteTimeout:      writeTimeout,
		IdleTimeout:       idleTimeout,
		MaxHeaderBytes:    maxHeaderBytes,
		TLSConfig:         tlsConfig,
	}
	ln, err := net.Listen("tcp", l.Addr)
	if err != nil {
		return nil, fmt.Errorf("console: %w", err)
	}
	scheme := "http"
	if l.TLSCert != "" {
		scheme = "https"
		ln = tls.NewListener(ln, srv.TLSConfig)
	}
	s := &Server{srv: srv, ln: ln, log: o.Logger, Done: make(chan error, 1)}
	o.Logger.Info("console.start", "addr", ln.Addr().String(), "url", scheme+"://"+ln.Addr().String()+"/",
		"tls", l.TLSCert != "", "behind_tls_proxy", l.BehindTLSProxy, "hosts", strings.Join(hosts, ","))
	go func() { s.Done <- srv.Serve(ln) }()
	return s, nil
}

// listenHosts are the host names the console answers to: its listen host
// (plus loopback names) and CONSOLE_PUBLIC_URL's. A wildcard address names
// no host.
func listenHosts(listen, publicURL string) ([]string, error) {
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

// Stop drains the console's requests for a bounded time.
func (s *Server) Stop() {
	ctx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
	s.log.Info("console.stop", "addr", s.ln.Addr().String())
}
