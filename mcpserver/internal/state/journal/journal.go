// Package journal keeps StoreLink's answer to an order in an append-only
// file until the ledger has recorded it (ADR 0006). Each outcome is one
// JSON line, synced before the ledger is tried and replayed later. A line
// that contradicts the ledger is reported and kept, never written over it.
package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Version is the format of the lines this package writes and reads.
const Version = 1

// maxFileBytes bounds what a replay reads into memory; a journal is
// emptied as the ledger takes its lines, so a larger file is not one.
const maxFileBytes = 64 << 20

// Line is one send outcome as StoreLink gave it.
type Line struct {
	V int `json:"v"`
	// At is when the outcome was known.
	At             time.Time `json:"at"`
	IdempotencyKey string    `json:"idempotency_key"`
	// Attempt is the entry's UpdatedAt when the send began, so an old line
	// never settles a newer send under the same key.
	Attempt       time.Time   `json:"attempt"`
	Event         state.Event `json:"event"`
	OrderID       string      `json:"order_id,omitempty"`
	ErrorCode     string      `json:"error_code,omitempty"`
	ErrorMessage  string      `json:"error_message,omitempty"`
	StoreID       string      `json:"store_id"`
	SKU           string      `json:"sku"`
	QuantityUnits int64       `json:"quantity_units"`
}

// Outcome is the line that records event ev, with ch, for the send of e
// (in StateSending) at time at.
func Outcome(e state.Entry, ev state.Event, ch state.Change, at time.Time) Line {
	return Line{V: Version, At: at.UTC(), IdempotencyKey: e.IdempotencyKey, Attempt: e.UpdatedAt.UTC(), Event: ev,
		OrderID: ch.OrderID, ErrorCode: ch.ErrorCode, ErrorMessage: ch.ErrorMessage,
		StoreID: e.StoreID, SKU: e.SKU, QuantityUnits: e.QuantityUnits}
}

// outcomeEvents are the events that end a send, the only ones a line holds.
var outcomeEvents = map[state.Event]bool{
	state.EventAccepted: true, state.EventRefused: true, state.EventNotSent: true,
	state.EventLost: true, state.EventUnclaim: true,
}

// check reports why l is not a line this version can replay.
func (l Line) check() error {
	switch {
	case l.V != Version:
		return fmt.Errorf("format version %d, this program reads %d", l.V, Version)
	case l.IdempotencyKey == "":
		return errors.New("no idempotency key")
	case !outcomeEvents[l.Event]:
		return fmt.Errorf("event %q is not the outcome of a send", l.Event)
	case l.Event == state.EventAccepted && l.OrderID == "":
		return errors.New("an accepted order without an order id")
	case l.Attempt.IsZero():
		return errors.New("no attempt time")
	}
	return nil
}

// File is an open outcome journal, safe for concurrent use and shared by
// processes: every change happens under an exclusive flock, and a file
// replaced by another's compaction is reopened.
type File struct {
	path string
	// mu guards f and serialises this process's flock holders (flock is
	// per open file).
	mu sync.Mutex
	f  *os.File
	// replaying admits one replay of this process at a time.
	replaying sync.Mutex
	// own holds the lines this process appended and has not seen settled;
	// a replay records them without reading the order back. Guarded by mu.
	own map[string]bool
}

// Open opens the journal at path, creating it (0600) and its directory
// (0700). It refuses, with an *UnsafeError, a file that is not a journal or
// that another user could have written: its lines become ledger entries.
func Open(path string) (*File, error) {
	if path == "" {
		return nil, errors.New("journal: empty path")
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("journal: resolve path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o700); err != nil {
		return nil, fmt.Errorf("journal: create directory for %s: %w", abs, err)
	}
	if err := checkDir(filepath.Dir(abs)); err != nil {
		return nil, err
	}
	f, err := openFile(abs)
	if err != nil {
		return nil, err
	}
	head := make([]byte, 512)
	n, err := f.ReadAt(head, 0)
	if err != nil && !errors.Is(err, io.EOF) {
		_ = f.Close()
		return nil, fmt.Errorf("journal: read %s: %w", abs, err)
	}
	if head = bytes.TrimLeft(head[:n], " \t\r\n"); len(head) > 0 && head[0] != '{' {
		_ = f.Close()
		return nil, fmt.Errorf("journal: %s is not an outcome journal (it does not begin with a JSON line); give the journal a file of its own", abs)
	}
	if err := syncDir(filepath.Dir(abs)); err != nil {
		_ = f.Close()
		return nil, err
	}
	return &File{path: abs, f: f, own: map[string]bool{}}, nil
}

// openFile opens (or creates) the journal at abs without following a
// symlink, and checks it is a regular file private to this user.
func openFile(abs string) (*os.File, error) {
	if st, err := os.Lstat(abs); err == nil && st.Mode()&os.ModeSymlink != 0 {
		return nil, symlinkError(abs)
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_APPEND|os.O_CREATE|noFollow, 0o600)
	if err != nil {
		if isSymlinkErr(err) {
			return nil, symlinkError(abs)
		}
		return nil, fmt.Errorf("journal: open %s: %w", abs, err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("journal: %s: %w", abs, err)
	}
	if err := checkFile(abs, st); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Path returns the journal's absolute path.
func (j *File) Path() string { return j.path }

// Close closes the file. Every appended line is already on disk.
func (j *File) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return nil
	}
	err := j.f.Close()
	j.f = nil
	return err
}

// Append writes l as one line and syncs it to disk before it returns.
func (j *File) Append(l Line) error {
	if err := l.check(); err != nil {
		return fmt.Errorf("journal: refusing line for %s: %w", l.IdempotencyKey, err)
	}
	b, err := json.Marshal(l)
	if err != nil {
		return fmt.Errorf("journal: encode line for %s: %w", l.IdempotencyKey, err)
	}
	line := string(b)
	b = append(b, '\n')
	return j.locked(func(f *os.File) error {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() > 0 {
			// A line cut short by a crash must not swallow this one.
			last := make([]byte, 1)
			if _, err := f.ReadAt(last, st.Size()-1); err != nil {
				return err
			}
			if last[0] != '\n' {
				b = append([]byte{'\n'}, b...)
			}
		}
		if _, err := f.Write(b); err != nil {
			return err
		}
		if err := f.Sync(); err != nil {
			return err
		}
		j.own[line] = true // under mu (locked)
		return nil
	})
}

// maxReopen bounds how often one operation follows a replaced file.
const maxReopen = 8

// locked runs fn with the file now at the journal's path locked
// exclusively; a compaction may have replaced it.
func (j *File) locked(fn func(f *os.File) error) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.f == nil {
		return fmt.Errorf("journal: %s is closed", j.path)
	}
	for range maxReopen {
		if err := lockFile(j.f); err != nil {
			return fmt.Errorf("journal: lock %s: %w", j.path, err)
		}
		held, err := j.f.Stat()
		if err != nil {
			_ = unlockFile(j.f)
			return fmt.Errorf("journal: %s: %w", j.path, err)
		}
		// Lstat: a symbolic link put in the file's place is not the file.
		now, err := os.Lstat(j.path)
		if err == nil && os.SameFile(held, now) {
			err = fn(j.f)
			if uerr := unlockFile(j.f); err == nil && uerr != nil {
				err = uerr
			}
			if err != nil {
				return fmt.Errorf("journal: %s: %w", j.path, err)
			}
			return nil
		}
		_ = unlockFile(j.f)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("journal: %s: %w", j.path, err)
		}
		f, err := openFile(j.path)
		if err != nil {
			return err
		}
		_ = j.f.Close()
		j.f = f
	}
	return fmt.Errorf("journal: %s keeps being replaced; is another program writing it?", j.path)
}

// snapshot returns the journal's whole content.
func (j *File) snapshot() ([]byte, error) {
	var b []byte
	err := j.locked(func(f *os.File) error {
		var err error
		b, err = readAll(f)
		return err
	})
	return b, err
}

func readAll(f *os.File) ([]byte, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if st.Size() > maxFileBytes {
		return nil, fmt.Errorf("%d bytes is more than an outcome journal holds (at most %d); is this the right file?", st.Size(), maxFileBytes)
	}
	b := make([]byte, st.Size())
	if _, err := f.ReadAt(b, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	return b, nil
}

// compact removes the lines a replay settled; keep is the part of read to
// keep. If the file no longer begins with read, another replay compacted
// it and this one leaves it alone.
func (j *File) compact(read, kept []byte) error {
	if len(kept) == len(read) {
		return nil
	}
	return j.locked(func(f *os.File) error {
		cur, err := readAll(f)
		if err != nil {
			return err
		}
		if !bytes.HasPrefix(cur, read) {
			return nil
		}
		next := append(append([]byte{}, kept...), cur[len(read):]...)
		if len(next) == 0 {
			// Emptied in place: nobody's open file goes stale.
			if err := f.Truncate(0); err != nil {
				return err
			}
			return f.Sync()
		}
		// Write beside and rename, so a crash leaves the old or new file;
		// appenders holding the old file reopen (locked).
		tmp := j.path + ".tmp-" + strconv.Itoa(os.Getpid())
		if err := writeSynced(tmp, next); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		if err := os.Rename(tmp, j.path); err != nil {
			_ = os.Remove(tmp)
			return err
		}
		return syncDir(filepath.Dir(j.path))
	})
}

// writeSynced writes b to a new file at path (mode 0600), removing whatever
// was there first, so nothing is written through a link.
func writeSynced(path string, b []byte) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, os.ErrNotExist) {
		return err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// syncDir makes a file's creation or renaming in dir durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("journal: open directory %s: %w", dir, err)
	}
	defer d.Close()
	if err := d.Sync(); err != nil {
		return fmt.Errorf("journal: sync directory %s: %w", dir, err)
	}
	return nil
}
