package bearer

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"
)

// File is a token file that follows its changes: every Lookup first
// compares the file's modification time and size with those of the copy in
// memory and re-reads the file when either differs. A stat per request costs
// microseconds and needs no signal handling, so it works the same for an
// operator editing the file, a rename-into-place rotation script and a
// mounted secret that the orchestrator swaps behind a symlink.
//
// A reload that fails (the file is missing, unreadable or malformed) denies
// every token until the file is fixed, rather than keeping the previous
// tokens: an operator who revokes a token and makes a typo must not leave
// the revoked token working. The failure is logged once per change.
type File struct {
	path string
	log  *slog.Logger

	mu    sync.Mutex
	set   *Set
	stamp stamp
	// failed is the stamp whose reload failed, so the error is logged once
	// rather than on every request.
	failed stamp
}

// stamp identifies one version of the file.
type stamp struct {
	mod  time.Time
	size int64
	ok   bool
}

func stampOf(fi os.FileInfo) stamp { return stamp{mod: fi.ModTime(), size: fi.Size(), ok: true} }

// Open reads the token file at path. Unlike a later reload, the first read
// must succeed and yield at least one token: a server that starts with
// authentication on must admit somebody, or the file is surely wrong.
func Open(path string, log *slog.Logger) (*File, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &File{path: path, log: log}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	set, err := readSet(path)
	if err != nil {
		return nil, err
	}
	if set.Len() == 0 {
		return nil, fmt.Errorf("token file %s holds no tokens: add lines of \"label token\"", path)
	}
	f.set, f.stamp = set, stampOf(fi)
	return f, nil
}

func readSet(path string) (*Set, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	set, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	return set, nil
}

// SetLogger sets where reloads are reported. Call it before the first
// Lookup: the file is usually opened, to validate it, before the logger of
// the configured level exists.
func (f *File) SetLogger(log *slog.Logger) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.log = log
}

// Path returns the file's path.
func (f *File) Path() string { return f.path }

// Labels returns the labels currently admitted.
func (f *File) Labels() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.set.Labels()
}

// Lookup reloads the file if it changed, then returns the label of token.
func (f *File) Lookup(token string) (label string, ok bool) {
	f.mu.Lock()
	f.refresh()
	set := f.set
	f.mu.Unlock()
	return set.Lookup(token)
}

// refresh re-reads the file when its stamp differs from the loaded one.
// f.mu is held.
func (f *File) refresh() {
	fi, err := os.Stat(f.path)
	if err != nil {
		f.fail(stamp{}, err)
		return
	}
	st := stampOf(fi)
	if st == f.stamp || st == f.failed {
		return
	}
	set, err := readSet(f.path)
	if err != nil {
		f.fail(st, err)
		return
	}
	f.set, f.stamp, f.failed = set, st, stamp{}
	if set.Len() == 0 {
		f.log.Warn("auth.tokens_reloaded", "path", f.path, "tokens", 0, "note", "the token file is empty: every request is refused")
		return
	}
	f.log.Info("auth.tokens_reloaded", "path", f.path, "tokens", set.Len(), "labels", set.Labels())
}

// fail drops every token after a failed reload. st is the stamp of the
// version that failed (zero when the file could not even be examined).
func (f *File) fail(st stamp, err error) {
	first := f.set != nil || f.failed != st
	f.set, f.stamp, f.failed = nil, stamp{}, st
	if first {
		if errors.Is(err, os.ErrNotExist) {
			err = fmt.Errorf("token file %s is missing", f.path)
		}
		f.log.Error("auth.tokens_invalid", "path", f.path, "error", err.Error(), "note", "every request is refused until the file is fixed")
	}
}
