package main

import (
	"encoding/pem"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

func TestUnreachableStoreLink(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	url := "http://" + ln.Addr().String()
	ln.Close() // nothing listens there any more
	keyring := writeKeyring(t, map[string]string{"47": "k47"})
	code, _, stderr := cli(t, checkArgs(url, keyring)...)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr, "cannot reach StoreLink at "+url) || !strings.Contains(stderr, "connection refused") {
		t.Errorf("stderr = %q", stderr)
	}
}

func TestHangingStoreLink(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-release:
		}
	}))
	t.Cleanup(func() { close(release); srv.Close() })
	keyring := writeKeyring(t, map[string]string{"47": "k47"})
	code, _, stderr := cli(t, checkArgs(srv.URL, keyring, "--timeout", "300ms", "--deadline", "5s")...)
	if code != 2 {
		t.Fatalf("exit %d, want 2", code)
	}
	if !strings.Contains(stderr, "cannot reach StoreLink") || !strings.Contains(stderr, "no answer within 300ms") {
		t.Errorf("stderr = %q", stderr)
	}
}

// TestPipelineFlags: the extra header reaches StoreLink (here the mock,
// behind a recorder) on every request and never appears in any output;
// --operation limits the probes; --ca-cert makes a private CA trusted.
func TestPipelineFlags(t *testing.T) {
	t.Parallel()
	mock, keyring := startMock(t)
	const secret = "gw-key-5a4b3c2d1e"
	var mu sync.Mutex
	var seen []string
	recorder := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.Header.Get("X-Gateway-Key"))
		mu.Unlock()
		mock.Server.ServeHTTP(w, r)
	})
	srv := httptest.NewUnstartedServer(recorder)
	// The refused handshake below is expected; keep it out of the test log.
	srv.Config.ErrorLog = log.New(io.Discard, "", 0)
	srv.StartTLS()
	t.Cleanup(srv.Close)
	caFile := writeCA(t, srv)
	args := checkArgs(srv.URL, keyring, "--header", "X-Gateway-Key: "+secret, "--operation", "getInventory",
		"--operation", "getStore", "--format", "json")

	// Without the CA the TLS handshake fails: the check cannot start.
	code, _, stderr := cli(t, args...)
	if code != 2 || !strings.Contains(stderr, "certificate") {
		t.Fatalf("without --ca-cert: exit %d, stderr %q", code, stderr)
	}
	mu.Lock()
	seen = nil
	mu.Unlock()

	code, stdout, stderr := cli(t, append(args, "--ca-cert", caFile)...)
	if code != 0 {
		t.Fatalf("exit %d\nstderr: %s\nstdout: %s", code, stderr, stdout)
	}
	rep := decodeReport(t, stdout)
	for _, p := range rep.Probes {
		if p.Operation != "getInventory" && p.Operation != "getStore" {
			t.Errorf("probe of unselected operation %s", p.Operation)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) == 0 || len(seen) != rep.Requests {
		t.Errorf("the mock saw %d requests, the report says %d", len(seen), rep.Requests)
	}
	for i, v := range seen {
		if v != secret {
			t.Errorf("request %d carried X-Gateway-Key %q", i, v)
		}
	}
	if strings.Contains(stdout+stderr, secret) {
		t.Error("the header's value appears in the output")
	}
}

// TestRedirectsAreNeverFollowed: redirects over HTTP and TLS are reported
// and nothing reaches the second server.
func TestRedirectsAreNeverFollowed(t *testing.T) {
	t.Parallel()
	var reached atomic.Int32
	second := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { reached.Add(1) }))
	t.Cleanup(second.Close)
	var n atomic.Int32
	redirect := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		status := http.StatusFound
		if n.Add(1)%2 == 0 || r.Method == http.MethodPost {
			status = http.StatusTemporaryRedirect
		}
		http.Redirect(w, r, second.URL+r.URL.RequestURI(), status)
	})
	plain := httptest.NewServer(redirect)
	t.Cleanup(plain.Close)
	tlsSrv := httptest.NewTLSServer(redirect)
	t.Cleanup(tlsSrv.Close)
	caFile := writeCA(t, tlsSrv)
	keyring := writeKeyring(t, map[string]string{"47": "sk-47-redirect-test-key"})
	for name, args := range map[string][]string{
		"plain":   checkArgs(plain.URL, keyring, "--allow-writes", "--write-store", "47", "--format", "json"),
		"ca-cert": checkArgs(tlsSrv.URL, keyring, "--allow-writes", "--write-store", "47", "--format", "json", "--ca-cert", caFile),
	} {
		code, stdout, stderr := cli(t, args...)
		if code == 0 {
			t.Errorf("%s: exit 0 against a redirecting address\n%s", name, stderr)
		}
		rep := decodeReport(t, stdout)
		redirects := 0
		for _, p := range rep.Probes {
			if p.Got == http.StatusFound || p.Got == http.StatusTemporaryRedirect {
				redirects++
			}
		}
		if redirects == 0 || rep.Requests == 0 {
			t.Errorf("%s: %d requests, %d answered with a redirect; want the redirects in the report", name, rep.Requests, redirects)
		}
	}
	if got := reached.Load(); got != 0 {
		t.Fatalf("%d request(s) followed a redirect to the second server", got)
	}
}

// writeCA writes the test server's certificate to a PEM file for --ca-cert.
func writeCA(t *testing.T, srv *httptest.Server) string {
	t.Helper()
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(caFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw}), 0o600); err != nil {
		t.Fatal(err)
	}
	return caFile
}
