package e2etest

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/korral/storelink/mockstorelink"
)

// World is a mock StoreLink on loopback plus the files a server needs to use it.
type World struct {
	Mock        *mockstorelink.Running // the mock StoreLink
	KeyringPath string                 // the server's keyring file (STORELINK_KEYRING_FILE)
	StatePath   string                 // the server's state database (STATE_DB_PATH)
	Dir         string                 // a directory of the test's own, the server's HOME
}

// WorldOption changes the mock StoreLink a World starts.
type WorldOption func(*mockstorelink.Options)

// WithClock gives the mock StoreLink the clock now instead of the real one.
func WithClock(now func() time.Time) WorldOption {
	return func(o *mockstorelink.Options) { o.Now = now }
}

// WithAdminToken switches the mock's admin endpoint on behind token, so
// faults are set over HTTP as an operator or another process would.
func WithAdminToken(token string) WorldOption {
	return func(o *mockstorelink.Options) { o.AdminToken = token }
}

// WithScale grows the mock's world to stores and skus (ADR 0025), with a
// keyring for every store.
func WithScale(stores, skus int) WorldOption {
	return func(o *mockstorelink.Options) { o.Stores, o.SKUs = stores, skus }
}

// NewWorld starts a mock StoreLink (real clock by default) and writes its
// default keyring to a file.
func NewWorld(t *testing.T, opts ...WorldOption) *World {
	t.Helper()
	var o mockstorelink.Options
	for _, opt := range opts {
		opt(&o)
	}
	r, err := mockstorelink.Start(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = r.Close() })
	dir := t.TempDir()
	w := &World{Mock: r, Dir: dir, KeyringPath: filepath.Join(dir, "keyring.json"), StatePath: filepath.Join(dir, "state.db")}
	w.WriteKeyring(t, r.Server.DefaultKeyring())
	return w
}

// WriteKeyring replaces the keyring file with kr.
func (w *World) WriteKeyring(t *testing.T, kr map[string]string) {
	t.Helper()
	b, _ := json.Marshal(kr)
	// Write then rename, as an operator's rotation script would, so the
	// server never reads half a file.
	tmp := w.KeyringPath + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, w.KeyringPath); err != nil {
		t.Fatal(err)
	}
}

// Env is the server environment pointing at this world.
func (w *World) Env(extra ...string) []string {
	return append([]string{
		"UPSTREAM_BASE_URL=" + w.Mock.URL,
		"STORELINK_KEYRING_FILE=" + w.KeyringPath,
		"STATE_DB_PATH=" + w.StatePath,
		"LOG_LEVEL=debug",
		"HOME=" + w.Dir,
	}, extra...)
}

// Requests counts the requests the mock StoreLink received that match.
func (w *World) Requests(match func(mockstorelink.RequestRecord) bool) int {
	return w.Mock.Server.RequestCount(match)
}
