package bearer

import (
	"crypto/sha256"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/secretfile"
)

// File is a token file that follows its changes. Every Lookup compares the
// file's status with the loaded version's and, when it differs or is too
// recent to trust, reloads if the content hash differs. A failed reload
// denies every token until the file is fixed.
type File struct {
	path string
	log  *slog.Logger

	mu    sync.Mutex
	set   *Set
	stamp stamp
	// sum is the SHA-256 of the content behind set.
	sum [sha256.Size]byte
	// checked is when the content was last read.
	checked time.Time
	// failed is the stamp whose reload failed, so the error is logged once.
	failed stamp
}

// racyWindow: a write within one timestamp tick of the last read may
// leave the status unchanged.
const racyWindow = 2 * time.Second

// stamp identifies one version of the file, as far as its status can.
type stamp struct {
	mod, change time.Time
	size        int64
	ino, dev    uint64
	ok          bool
}

func stampOf(fi os.FileInfo) stamp {
	st := stamp{mod: fi.ModTime(), size: fi.Size(), ok: true}
	st.change, st.ino, st.dev = sysStamp(fi)
	return st
}

// inDoubt reports whether the status may hide a change: no change time on
// this platform, or a change within racyWindow of the last read.
func (f *File) inDoubt(st stamp) bool {
	if st.change.IsZero() {
		return true
	}
	latest := st.change
	if st.mod.After(latest) {
		latest = st.mod
	}
	return !latest.Before(f.checked.Add(-racyWindow))
}

// Open reads the token file at path. The first read must succeed and yield
// at least one token. A file readable by other users is refused (package
// secretfile); a later reload of one only warns.
func Open(path string, log *slog.Logger) (*File, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &File{path: path, log: log}
	fi, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	if err := secretfile.CheckInfo(path, fi); err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	set, err := Parse(b)
	if err != nil {
		return nil, fmt.Errorf("token file %s: %w", path, err)
	}
	if set.Len() == 0 {
		return nil, fmt.Errorf("token file %s holds no tokens: add lines of \"label token\"", path)
	}
	f.set, f.stamp, f.sum, f.checked = set, stampOf(fi), sha256.Sum256(b), time.Now()
	return f, nil
}

// SetLogger sets where reloads are reported; call it before Lookup.
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

// refresh re-reads the file when its status differs or is in doubt.
// f.mu is held.
func (f *File) refresh() {
	fi, err := os.Stat(f.path)
	if err != nil {
		f.fail(stamp{}, err)
		return
	}
	st := stampOf(fi)
	if (st == f.stamp || st == f.failed) && !f.inDoubt(st) {
		return
	}
	f.recheck(st)
}

// recheck reads the file with status st and reloads it unless its content
// is the one loaded. f.mu is held.
func (f *File) recheck(st stamp) {
	b, err := os.ReadFile(f.path)
	if err != nil {
		f.fail(st, err)
		return
	}
	f.checked = time.Now()
	sum := sha256.Sum256(b)
	if f.set != nil && sum == f.sum {
		f.stamp = st // touched, not changed
		return
	}
	set, err := Parse(b)
	if err != nil {
		f.fail(st, fmt.Errorf("token file %s: %w", f.path, err))
		return
	}
	f.set, f.stamp, f.sum, f.failed = set, st, sum, stamp{}
	if set.Len() == 0 {
		f.log.Warn("auth.tokens_reloaded", "path", f.path, "tokens", 0, "note", "the token file is empty: every request is refused")
		return
	}
	f.log.Info("auth.tokens_reloaded", "path", f.path, "tokens", set.Len(), "labels", set.Labels())
	if fi, err := os.Stat(f.path); err == nil {
		// After a rotation, refusing every caller would be an outage: warn.
		if err := secretfile.CheckInfo(f.path, fi); err != nil {
			f.log.Warn("auth.tokens_file_mode", "path", f.path, "error", err.Error())
		}
	}
}

// fail drops every token after a failed reload of stamp st (zero when
// the file could not be examined).
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
