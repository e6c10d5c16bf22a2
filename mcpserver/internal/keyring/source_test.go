package keyring_test

import (
	"bytes"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/keyring"
)

// A reload refuses a rotated keyring file that others can read, keeps the
// keyring in force and logs why; once fixed, the next reload takes it.
func TestKeyringReloadRefusesAFileOthersCanRead(t *testing.T) {
	if os.Getuid() == 0 {
		t.Log("running as root: the rule for files owned by root applies (group read allowed, others never)")
	}
	path := filepath.Join(t.TempDir(), "keyring.json")
	write := func(body string, mode os.FileMode) {
		t.Helper()
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	const old, rotated = `{"47":"key-47-old-0123456789abcdef"}`, `{"47":"key-47-new-0123456789abcdef"}`
	write(old, 0o600)
	kr, err := keyring.Parse([]byte(old))
	if err != nil {
		t.Fatal(err)
	}
	var logs bytes.Buffer
	ks := keyring.NewSource(kr, path, os.ReadFile, slog.New(slog.NewJSONHandler(&logs, nil)))
	stale, _ := ks.Key("47")

	write(rotated, 0o644)
	if _, ok := ks.Refresh("47", stale); ok {
		t.Fatal("a keyring file of mode 0644 was taken on a reload")
	}
	if got, _ := ks.Key("47"); !got.Equal(stale) {
		t.Error("the keyring in force changed")
	}
	if l := logs.String(); !strings.Contains(l, "keyring.reload_failed") || !strings.Contains(l, "chmod 600") || strings.Contains(l, "key-47-") {
		t.Errorf("the log: %s", l)
	}

	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if k, ok := ks.Refresh("47", stale); !ok || k.Equal(stale) {
		t.Error("the fixed file was not taken")
	}
}
