package bearer

import (
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/korral/storelink/mcpserver/internal/mcptest"
)

const (
	tokA = "tokenA-0123456789abcdefghijklmnopqrstuvwxyz"
	tokB = "tokenB-0123456789abcdefghijklmnopqrstuvwxyz"
	tokC = "tokenC-0123456789abcdefghijklmnopqrstuvwxyz"
)

func TestParseAndLookup(t *testing.T) {
	s, err := Parse([]byte("# agents\n\n  duvo-dairy " + tokA + "\nclaude.brno\t" + tokB + "  \n   # indented comment\n"))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"duvo-dairy", "claude.brno"}, s.Labels()); diff != "" {
		t.Fatalf("labels (-want +got):\n%s", diff)
	}
	for tok, want := range map[string]string{tokA: "duvo-dairy", tokB: "claude.brno"} {
		if got, ok := s.Lookup(tok); !ok || got != want {
			t.Errorf("Lookup(%s) = %q, %v; want %q", tok[:6], got, ok, want)
		}
	}
	for _, bad := range []string{"", tokC, tokA[:len(tokA)-1], tokA + "x", strings.ToUpper(tokA)} {
		if got, ok := s.Lookup(bad); ok {
			t.Errorf("Lookup(%q) admitted as %q", bad, got)
		}
	}
}

func TestParseRefusesWithoutEchoingTokens(t *testing.T) {
	cases := map[string]string{
		"one field":       "lonely-label\n",
		"three fields":    "a " + tokA + " extra\n",
		"short token":     "a short-token\n",
		"bad label":       "bad/label " + tokA + "\n",
		"long label":      strings.Repeat("l", MaxLabelLen+1) + " " + tokA + "\n",
		"duplicate label": "a " + tokA + "\na " + tokB + "\n",
		"duplicate token": "a " + tokA + "\nb " + tokA + "\n",
		"control char":    "a " + tokA + "\x7f\n",
		"colon format":    "a:" + tokA + "\n",
	}
	for name, file := range cases {
		t.Run(name, func(t *testing.T) {
			_, err := Parse([]byte(file))
			if err == nil {
				t.Fatal("parsed")
			}
			if !strings.Contains(err.Error(), "line ") {
				t.Errorf("error does not name the line: %v", err)
			}
			for _, tok := range []string{tokA, tokB, "short-token"} {
				if strings.Contains(err.Error(), tok) {
					t.Errorf("error echoes a token: %v", err)
				}
			}
		})
	}
}

func TestEmptySetAdmitsNobody(t *testing.T) {
	s, err := Parse([]byte("# nobody yet\n"))
	if err != nil {
		t.Fatal(err)
	}
	if s.Len() != 0 {
		t.Fatalf("len %d", s.Len())
	}
	if _, ok := s.Lookup(""); ok {
		t.Fatal("empty token admitted by an empty set")
	}
	var zero *Set
	if _, ok := zero.Lookup(tokA); ok {
		t.Fatal("nil set admitted a token")
	}
}

// write replaces the file by rename and moves its modification time
// forward, so coarse timestamps still show the change.
func write(t *testing.T, path, content string, mod time.Time) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(tmp, mod, mod); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

func TestFileReloadsOnChangeAndFailsClosed(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	base := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	write(t, path, "agent "+tokA+"\n", base)
	var logs mcptest.SyncBuffer
	f, err := Open(path, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	if l, ok := f.Lookup(tokA); !ok || l != "agent" {
		t.Fatalf("initial token: %q %v", l, ok)
	}

	// Rotation: A revoked, B issued.
	write(t, path, "agent "+tokB+"\n", base.Add(time.Second))
	if _, ok := f.Lookup(tokA); ok {
		t.Fatal("revoked token still admitted")
	}
	if l, ok := f.Lookup(tokB); !ok || l != "agent" {
		t.Fatalf("new token: %q %v", l, ok)
	}

	// A typo in the file denies everyone, including the last good token.
	write(t, path, "agent "+tokB+" oops\n", base.Add(2*time.Second))
	for i := 0; i < 3; i++ {
		if _, ok := f.Lookup(tokB); ok {
			t.Fatal("a malformed file kept admitting the previous token")
		}
	}
	if n := strings.Count(logs.String(), "auth.tokens_invalid"); n != 1 {
		t.Fatalf("invalid file logged %d times, want once:\n%s", n, logs.String())
	}
	if strings.Contains(logs.String(), tokB) {
		t.Fatal("a token reached the log")
	}

	// Fixed again.
	write(t, path, "agent "+tokB+"\nother "+tokC+"\n", base.Add(3*time.Second))
	if l, ok := f.Lookup(tokC); !ok || l != "other" {
		t.Fatalf("after the fix: %q %v", l, ok)
	}

	// Removed: nobody.
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if _, ok := f.Lookup(tokB); ok {
		t.Fatal("a deleted file still admits")
	}

	// Emptied on purpose: nobody, with a warning rather than an error.
	write(t, path, "# all revoked\n", base.Add(4*time.Second))
	if _, ok := f.Lookup(tokB); ok {
		t.Fatal("an emptied file still admits")
	}
	if !strings.Contains(logs.String(), "every request is refused") {
		t.Fatalf("no warning about an empty file:\n%s", logs.String())
	}
}

func TestOpenRefusesAnUnusableFile(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty")
	write(t, empty, "# nothing\n", time.Now())
	bad := filepath.Join(dir, "bad")
	write(t, bad, "x\n", time.Now())
	for _, p := range []string{filepath.Join(dir, "missing"), empty, bad} {
		if _, err := Open(p, nil); err == nil {
			t.Errorf("Open(%s) succeeded", filepath.Base(p))
		}
	}
}

func TestFileConcurrentLookups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	base := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	write(t, path, "a "+tokA+"\n", base)
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for i := 0; i < 8; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < 50; j++ {
				f.Lookup(tokA)
			}
		}()
	}
	write(t, path, "a "+tokA+"\nb "+tokB+"\n", base.Add(time.Second))
	wg.Wait()
	if l, ok := f.Lookup(tokB); !ok || l != "b" {
		t.Fatalf("after concurrent reloads: %q %v", l, ok)
	}
}

// rewriteInPlace rewrites the file in place and restores its modification
// time (same inode, size and mtime).
func rewriteInPlace(t *testing.T, path, content string) {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(content)) != fi.Size() {
		t.Fatalf("test content must keep the size: %d vs %d", len(content), fi.Size())
	}
	if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(path, fi.ModTime(), fi.ModTime()); err != nil {
		t.Fatal(err)
	}
}

// A rewrite keeping size and mtime must not leave a revoked token working.
func TestSameSizeRewriteKeepingTheModTimeIsSeen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	old := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	write(t, path, "agent "+tokA+"\n", old)
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	// Long after the last read, so the status alone is trusted.
	f.checked = time.Now().Add(-time.Hour)
	if _, ok := f.Lookup(tokA); !ok {
		t.Fatal("initial token refused")
	}
	rewriteInPlace(t, path, "agent "+tokB+"\n")
	if _, ok := f.Lookup(tokA); ok {
		t.Fatal("a revoked token still works after a same-size rewrite that kept the mtime")
	}
	if l, ok := f.Lookup(tokB); !ok || l != "agent" {
		t.Fatalf("new token: %q %v", l, ok)
	}
}

// A new status with the same content costs a read and a hash, not a reload.
func TestTouchedButUnchangedFileIsNotReloaded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	base := time.Date(2026, 11, 27, 9, 0, 0, 0, time.UTC)
	write(t, path, "agent "+tokA+"\n", base)
	var logs mcptest.SyncBuffer
	f, err := Open(path, slog.New(slog.NewJSONHandler(&logs, nil)))
	if err != nil {
		t.Fatal(err)
	}
	write(t, path, "agent "+tokA+"\n", base.Add(time.Hour))
	if _, ok := f.Lookup(tokA); !ok {
		t.Fatal("token refused")
	}
	if strings.Contains(logs.String(), "auth.tokens_reloaded") {
		t.Fatalf("an unchanged file was reloaded:\n%s", logs.String())
	}
}

// BenchmarkLookup compares a Lookup settled by a stat with one that reads
// and hashes a 50-token file.
func BenchmarkLookup(b *testing.B) {
	path := filepath.Join(b.TempDir(), "tokens")
	var content strings.Builder
	for i := range 50 {
		fmt.Fprintf(&content, "agent-%02d %s%02d\n", i, strings.Repeat("k", 40), i)
	}
	old := time.Now().Add(-time.Hour)
	if err := os.WriteFile(path, []byte(content.String()), 0o600); err != nil {
		b.Fatal(err)
	}
	if err := os.Chtimes(path, old, old); err != nil {
		b.Fatal(err)
	}
	token := strings.Repeat("k", 40) + "07"
	b.Run("stat", func(b *testing.B) {
		f, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		f.checked = time.Now().Add(time.Hour) // well after every change: no doubt
		for b.Loop() {
			if _, ok := f.Lookup(token); !ok {
				b.Fatal("refused")
			}
		}
	})
	b.Run("stat+hash", func(b *testing.B) {
		f, err := Open(path, nil)
		if err != nil {
			b.Fatal(err)
		}
		for b.Loop() {
			f.mu.Lock()
			f.stamp = stamp{} // a status that differs: read and hash
			f.refresh()
			f.mu.Unlock()
			if _, ok := f.set.Lookup(token); !ok {
				b.Fatal("refused")
			}
		}
	})
}

// A change that leaves the status unchanged (same timestamp tick) is still
// seen while recent.
func TestChangeHiddenInTheSameTickIsSeen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	now := time.Now()
	write(t, path, "agent "+tokA+"\n", now)
	f, err := Open(path, nil)
	if err != nil {
		t.Fatal(err)
	}
	rewriteInPlace(t, path, "agent "+tokB+"\n")
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	// Pretend the status did not move, as within one coarse tick.
	f.mu.Lock()
	f.stamp = stampOf(fi)
	f.mu.Unlock()
	if _, ok := f.Lookup(tokA); ok {
		t.Fatal("a change within the racy window went unseen")
	}
}
