package tools

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/korral/storelink/mcpserver/internal/keyring"
	"github.com/korral/storelink/mcpserver/internal/secretfile"
)

// KeySource holds the current keyring. When it came from a file, the file is
// re-read on demand (after StoreLink refused a key), so a weekly rotation is
// picked up without a restart. A file that no longer parses, or whose mode
// now lets other users read it, keeps the last good keyring: a half-written
// file must not take every store offline, and a leaked one must not be
// used as if nothing happened.
type KeySource struct {
	mu       sync.Mutex
	current  *keyring.Keyring
	raw      []byte
	path     string
	readFile func(string) ([]byte, error)
	log      *slog.Logger
}

// NewKeySource wraps a parsed keyring. path may be empty (no reload), in
// which case readFile is unused.
func NewKeySource(kr *keyring.Keyring, path string, readFile func(string) ([]byte, error), log *slog.Logger) *KeySource {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &KeySource{current: kr, path: path, readFile: readFile, log: log}
}

// Keyring returns the keyring in force.
func (s *KeySource) Keyring() *keyring.Keyring {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Key returns the current key of a store.
func (s *KeySource) Key(storeID string) (keyring.Key, bool) {
	return s.Keyring().Key(storeID)
}

// Refresh re-reads the keyring file and reports the store's key only when it
// differs from stale: the single condition under which StoreLink may be asked
// a second time after a 401.
func (s *KeySource) Refresh(storeID string, stale keyring.Key) (keyring.Key, bool) {
	s.reload()
	k, ok := s.Key(storeID)
	if !ok || k.Equal(stale) {
		return keyring.Key{}, false
	}
	return k, true
}

func (s *KeySource) reload() {
	if s.path == "" {
		return
	}
	// A file others can read is refused on a reload as at start-up; the
	// keyring in force stays. A path that is not on the disk (the
	// in-memory files of tests) is judged by the read alone.
	if err := secretfile.Check(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("keyring.reload_failed", "path", s.path, "error", "STORELINK_KEYRING_FILE: "+err.Error())
		return
	}
	data, err := s.readFile(s.path)
	if err != nil {
		s.log.Warn("keyring.reload_failed", "path", s.path, "error", "cannot read keyring file")
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if bytes.Equal(data, s.raw) && s.raw != nil {
		return
	}
	kr, err := keyring.Parse(data)
	if err != nil {
		// keyring.Parse never echoes key material in its errors.
		s.log.Warn("keyring.reload_failed", "path", s.path, "error", err.Error())
		return
	}
	s.raw = data
	s.current = kr
	s.log.Info("keyring.reloaded", "path", s.path, "stores", kr.StoreIDs())
}
