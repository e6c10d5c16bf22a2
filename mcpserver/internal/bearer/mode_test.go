//go:build unix

package bearer

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A token file other users can read is refused at Open, naming the file,
// its mode and the fix.
func TestOpenRefusesAFileOthersCanRead(t *testing.T) {
	path := filepath.Join(t.TempDir(), "tokens")
	if err := os.WriteFile(path, []byte("ci "+tokA+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(path, nil); err != nil {
		t.Fatalf("at 0600: %v", err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Open(path, nil)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "mode 0644") || !strings.Contains(err.Error(), "chmod 600 "+path) {
		t.Fatalf("at 0644: %v; want a refusal naming the file, its mode and chmod 600", err)
	}
	if strings.Contains(err.Error(), tokA) {
		t.Errorf("the error quotes the token: %v", err)
	}
}
