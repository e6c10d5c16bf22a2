package mockstorelink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"time"
)

// closeTimeout bounds how long Close waits for requests in flight.
const closeTimeout = 5 * time.Second

// Running is a mock StoreLink serving HTTP on a local port.
type Running struct {
	// URL is the base URL of the API, http://127.0.0.1:PORT.
	URL string
	// Server is the mock behind the URL, for keys, faults and records.
	Server *Server

	srv       *http.Server
	served    chan error
	closeOnce sync.Once
	closeErr  error
}

// Start serves a new mock on an ephemeral 127.0.0.1 port, so tests can run
// many in parallel. Close it when done.
func Start(opts Options) (*Running, error) {
	return StartOn("127.0.0.1:0", opts)
}

// StartOn serves a new mock on addr ("host:port"; port 0 picks a free one).
func StartOn(addr string, opts Options) (*Running, error) {
	s, err := New(opts)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	r := &Running{
		URL:    "http://" + ln.Addr().String(),
		Server: s,
		srv: &http.Server{
			Handler:           s,
			ReadHeaderTimeout: 10 * time.Second,
		},
		served: make(chan error, 1),
	}
	go func() { r.served <- r.srv.Serve(ln) }()
	return r, nil
}

// Close stops the server, giving requests in flight a few seconds. It is
// safe to call more than once.
func (r *Running) Close() error {
	r.closeOnce.Do(func() {
		r.Server.release()
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		defer cancel()
		if err := r.srv.Shutdown(ctx); err != nil {
			r.closeErr = errors.Join(err, r.srv.Close())
		}
		if err := <-r.served; err != nil && !errors.Is(err, http.ErrServerClosed) {
			r.closeErr = errors.Join(r.closeErr, err)
		}
	})
	return r.closeErr
}
