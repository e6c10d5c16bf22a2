// Package apptest holds the helpers that the tests of package app and of
// package cli share: a stand-in StoreLink that fails, a log buffer safe for
// a server's goroutines, and the settings of a private deployment.
package apptest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// SyncBuffer is a bytes.Buffer that a running server may write while the
// test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write implements io.Writer.
func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// String is what was written so far.
func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Vars are the settings of a deployment pointing at upstream (a stand-in
// StoreLink) with one store key (store 47) and a private state database,
// with vars over them.
func Vars(t testing.TB, upstream string, vars map[string]string) map[string]string {
	t.Helper()
	dir := t.TempDir()
	all := map[string]string{
		"UPSTREAM_BASE_URL": upstream,
		"STORELINK_KEYRING": `{"47": "key-47-0123456789"}`,
		"STATE_DB_PATH":     filepath.Join(dir, "state.db"),
		"HOME":              dir,
	}
	for k, v := range vars {
		all[k] = v
	}
	return all
}

// FailingUpstream is a StoreLink that answers every request with 503, and
// the number of requests it got so far.
func FailingUpstream(t testing.TB) (*httptest.Server, *int64) {
	t.Helper()
	var mu sync.Mutex
	var n int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		n++
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusServiceUnavailable)
		_, _ = io.WriteString(w, `{"error":{"code":"unavailable","message":"down"}}`)
	}))
	t.Cleanup(srv.Close)
	return srv, &n
}

// WriteFile writes content to a private file of the test and returns its
// path.
func WriteFile(t testing.TB, content string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// LogLines are the JSON log lines in s, each as an object.
func LogLines(s string) []map[string]any {
	var out []map[string]any
	sc := bufio.NewScanner(strings.NewReader(s))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil {
			out = append(out, m)
		}
	}
	return out
}
