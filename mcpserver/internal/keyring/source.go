package keyring

import (
	"bytes"
	"errors"
	"io/fs"
	"log/slog"
	"sync"

	"github.com/korral/storelink/mcpserver/internal/secretfile"
)

// Source holds the keyring in force. A keyring from a file is re-read after
// StoreLink refuses a key, so rotation needs no restart; a file that no
// longer parses, or is readable by others, is ignored.
type Source struct {
	mu       sync.Mutex
	current  *Keyring
	raw      []byte
	path     string
	readFile func(string) ([]byte, error)
	log      *slog.Logger
}

// NewSource wraps a parsed keyring. An empty path means no reload, and
// readFile is unused.
func NewSource(kr *Keyring, path string, readFile func(string) ([]byte, error), log *slog.Logger) *Source {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Source{current: kr, path: path, readFile: readFile, log: log}
}

// Keyring returns the keyring in force.
func (s *Source) Keyring() *Keyring {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.current
}

// Key returns the current key of a store.
func (s *Source) Key(storeID string) (Key, bool) {
	return s.Keyring().Key(storeID)
}

// Refresh re-reads the keyring file and reports the store's key only when
// it differs from stale, the one case that allows a retry after a 401.
func (s *Source) Refresh(storeID string, stale Key) (Key, bool) {
	s.reload()
	k, ok := s.Key(storeID)
	if !ok || k.Equal(stale) {
		return Key{}, false
	}
	return k, true
}

func (s *Source) reload() {
	if s.path == "" {
		return
	}
	// A file others can read is refused on reload; the keyring in force
	// stays. For a path not on disk (tests' in-memory files) only the read counts.
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
	kr, err := Parse(data)
	if err != nil {
		// Parse never echoes key material in its errors.
		s.log.Warn("keyring.reload_failed", "path", s.path, "error", err.Error())
		return
	}
	s.raw = data
	s.current = kr
	s.log.Info("keyring.reloaded", "path", s.path, "stores", kr.StoreIDs())
}
