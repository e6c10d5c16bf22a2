package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"flag"
	"fmt"
	"io"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is one member of an archive. Exactly one of body and src is used
// for a regular file; a directory has neither.
type entry struct {
	name     string // slash-separated, relative, no trailing slash
	mode     int64
	uid, gid int
	dir      bool
	body     []byte
	src      string
}

// owner names a numeric owner for tools that show names; the numbers are
// what counts.
func owner(id int) string {
	switch id {
	case 0:
		return "root"
	case nonrootID:
		return "nonroot"
	}
	return ""
}

// writeTar writes entries sorted by name, every one stamped with mtime, so
// the result depends on nothing but the entries.
func writeTar(w io.Writer, entries []entry, mtime time.Time) error {
	entries = slices.Clone(entries)
	slices.SortFunc(entries, func(a, b entry) int { return strings.Compare(a.name, b.name) })
	for i := 1; i < len(entries); i++ {
		if entries[i].name == entries[i-1].name {
			return fmt.Errorf("archive: %s added twice", entries[i].name)
		}
	}
	tw := tar.NewWriter(w)
	for _, e := range entries {
		h := &tar.Header{
			Name:    e.name,
			Mode:    e.mode,
			Uid:     e.uid,
			Gid:     e.gid,
			Uname:   owner(e.uid),
			Gname:   owner(e.gid),
			ModTime: mtime,
			Format:  tar.FormatPAX,
		}
		var body io.Reader
		switch {
		case e.dir:
			h.Typeflag, h.Name = tar.TypeDir, e.name+"/"
		case e.src != "":
			b, err := os.ReadFile(e.src)
			if err != nil {
				return err
			}
			h.Typeflag, h.Size, body = tar.TypeReg, int64(len(b)), bytes.NewReader(b)
		default:
			h.Typeflag, h.Size, body = tar.TypeReg, int64(len(e.body)), bytes.NewReader(e.body)
		}
		if err := tw.WriteHeader(h); err != nil {
			return fmt.Errorf("archive: %s: %w", e.name, err)
		}
		if body != nil {
			if _, err := io.Copy(tw, body); err != nil {
				return fmt.Errorf("archive: %s: %w", e.name, err)
			}
		}
	}
	return tw.Close()
}

// writeTarGz is writeTar behind gzip. Go's gzip writer leaves the header's
// name and time empty, and its output for given input is fixed per Go
// release, which the pinned toolchain in go.mod settles.
func writeTarGz(w io.Writer, entries []entry, mtime time.Time) error {
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	if err := writeTar(zw, entries, mtime); err != nil {
		return err
	}
	return zw.Close()
}

// fileEntries turns files on disk into archive members under root: an
// executable keeps 0755, everything else becomes 0644, all owned by root.
func fileEntries(root string, files []string) ([]entry, error) {
	out := []entry{{name: root, mode: 0o755, dir: true}}
	for _, f := range files {
		st, err := os.Stat(f)
		if err != nil {
			return nil, err
		}
		if !st.Mode().IsRegular() {
			return nil, fmt.Errorf("%s: not a regular file", f)
		}
		mode := int64(0o644)
		if st.Mode()&0o111 != 0 {
			mode = 0o755
		}
		out = append(out, entry{name: path.Join(root, filepath.Base(f)), mode: mode, src: f})
	}
	return out, nil
}

func runArchive(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("archive", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output `file` (.tar.gz)")
	root := fs.String("root", "", "top-level `directory` inside the archive")
	epoch := fs.Int64("epoch", -1, "modification time of every member, in Unix `seconds` (the commit time)")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" || *root == "" || *epoch < 0 || fs.NArg() == 0 {
		return usageError{fmt.Errorf("archive needs -o, -root, -epoch and at least one file")}
	}
	entries, err := fileEntries(*root, fs.Args())
	if err != nil {
		return err
	}
	return writeFileAtomic(*out, func(w io.Writer) error {
		return writeTarGz(w, entries, time.Unix(*epoch, 0).UTC())
	})
}

// sums renders files' SHA-256 digests in the format of `sha256sum`, sorted
// by name, so `sha256sum -c` in the files' directory verifies them.
func sums(files []string) ([]byte, error) {
	type line struct{ name, sum string }
	var lines []line
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			return nil, err
		}
		h := sha256.New()
		_, err = io.Copy(h, fh)
		fh.Close()
		if err != nil {
			return nil, err
		}
		lines = append(lines, line{filepath.Base(f), hex.EncodeToString(h.Sum(nil))})
	}
	slices.SortFunc(lines, func(a, b line) int { return strings.Compare(a.name, b.name) })
	var b bytes.Buffer
	for _, l := range lines {
		fmt.Fprintf(&b, "%s  %s\n", l.sum, l.name)
	}
	return b.Bytes(), nil
}

func runSums(args []string, stderr io.Writer) error {
	fs := flag.NewFlagSet("sums", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "output `file`")
	if err := fs.Parse(args); err != nil {
		return usageError{err}
	}
	if *out == "" || fs.NArg() == 0 {
		return usageError{fmt.Errorf("sums needs -o and at least one file")}
	}
	b, err := sums(fs.Args())
	if err != nil {
		return err
	}
	return writeFileAtomic(*out, func(w io.Writer) error { _, err := w.Write(b); return err })
}

// writeFileAtomic writes through a temporary file renamed into place, so
// an interrupted build never leaves a truncated artefact behind.
func writeFileAtomic(name string, write func(io.Writer) error) error {
	f, err := os.CreateTemp(filepath.Dir(name), "."+filepath.Base(name)+".*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o644); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), name)
}
