//go:build unix

package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSecretFilesOthersCanReadAreRefused: every secret file, read by Load
// or by the command it configures, is refused at 0644 with one line that
// names the variable, the file, its mode and chmod 600, and passes at 0600.
func TestSecretFilesOthersCanReadAreRefused(t *testing.T) {
	const consentKey = "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n"
	hookURL := "https://hooks.korral.example/approvals"
	cases := []struct {
		variable, content string
		env               map[string]string
	}{
		{"STORELINK_KEYRING_FILE", krJSON, nil},
		{"HOST_CONSENT_KEY_FILE", consentKey, map[string]string{"ALLOW_WRITES": "true", "WRITE_APPROVAL": "host"}},
		{"APPROVAL_WEBHOOK_SECRET_FILE", "0123456789abcdef0123456789abcdef\n", map[string]string{"ALLOW_WRITES": "true", "WRITE_APPROVAL": "required", "APPROVAL_WEBHOOK_URL": hookURL}},
		{"STATE_DATABASE_URL_FILE", "postgres://u:p@db:5432/storelink\n", nil},
		{"MCP_AUTH_TOKENS_FILE", "ci 0123456789abcdef0123456789abcdef\n", nil},
		{"MCP_METRICS_TOKEN_FILE", "0123456789abcdef0123456789abcdef\n", nil},
	}
	for _, c := range cases {
		t.Run(c.variable, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "secret")
			if err := os.WriteFile(path, []byte(c.content), 0o600); err != nil {
				t.Fatal(err)
			}
			e := map[string]string{"HOME": t.TempDir(), c.variable: path}
			for k, v := range c.env {
				e[k] = v
			}
			if _, err := Load(env(e), os.ReadFile); err != nil {
				t.Fatalf("at 0600: %v", err)
			}
			if err := os.Chmod(path, 0o644); err != nil {
				t.Fatal(err)
			}
			_, err := Load(env(e), os.ReadFile)
			if err == nil {
				t.Fatal("at 0644: loaded")
			}
			msg := err.Error()
			if strings.Contains(msg, "\n") || !strings.HasPrefix(msg, c.variable+"=") ||
				!strings.Contains(msg, "mode 0644") || !strings.Contains(msg, "chmod 600 "+path) {
				t.Errorf("at 0644: %q; want one line naming %s, the file, mode 0644 and chmod 600", msg, c.variable)
			}
			if strings.Contains(msg, strings.TrimSpace(c.content)) {
				t.Errorf("the message quotes the secret: %q", msg)
			}
		})
	}
}

// A file owned by root may be read by its group: a Kubernetes Secret
// volume (root, fsGroup, defaultMode 0440) is how the shipped manifest
// hands the keyring to a server that does not run as root.
func TestSecretFileRootOwnedGroupReadable(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root to own the file")
	}
	path := filepath.Join(t.TempDir(), "keyring.json")
	if err := os.WriteFile(path, []byte(krJSON), 0o440); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(env(map[string]string{"HOME": "/h", "STORELINK_KEYRING_FILE": path}), os.ReadFile); err != nil {
		t.Errorf("root-owned 0440: %v", err)
	}
	if err := os.Chown(path, 65534, -1); err != nil {
		t.Fatal(err)
	}
	_, err := Load(env(map[string]string{"HOME": "/h", "STORELINK_KEYRING_FILE": path}), os.ReadFile)
	if want := "mode 0440 lets its group read"; err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("0440 owned by nobody: %v; want %q", err, want)
	}
}
