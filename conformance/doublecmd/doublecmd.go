// Package doublecmd holds what the commands serving a StoreLink test double
// share (foreign-storelink, zoo-storelink, and mockstorelink for its key
// files): a loopback-only listener, the keyring file for the tools that
// call the double, the "listening on" line and a clean stop.
package doublecmd

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"strings"
	"time"
)

// CheckLoopback refuses any address that is not on the loopback interface.
func CheckLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return err
	}
	if strings.EqualFold(host, "localhost") {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("%q is not a loopback address (use 127.0.0.1, ::1 or localhost)", host)
}

// WriteSecretJSON writes v as indented JSON to path, readable by the
// owner only, also when the file already existed with wider permissions:
// a keyring (store id -> key) or an admin token.
func WriteSecretJSON(path string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	if err := f.Chmod(0o600); err != nil {
		f.Close()
		return err
	}
	if _, err := f.Write(append(data, '\n')); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// Serve listens on addr (loopback only), prints "listening on http://ADDR"
// as the first line on stdout, and serves h until ctx ends. name prefixes
// the errors on stderr. It returns the exit code.
func Serve(ctx context.Context, name, addr string, h http.Handler, stdout, stderr io.Writer) int {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	srv := &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
	}
	fmt.Fprintf(stdout, "listening on http://%s\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	case <-ctx.Done():
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(shutdown); err != nil {
		fmt.Fprintf(stderr, "%s: shutdown: %v\n", name, err)
		return 1
	}
	return 0
}
