// Package apptest holds test helpers shared by packages app and cli.
package apptest

import (
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// Vars are the settings of a deployment using upstream with one store key
// (store 47) and a private state database, with vars over them.
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
