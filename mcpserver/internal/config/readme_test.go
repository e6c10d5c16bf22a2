package config

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReadmeDocumentsEveryVariable keeps the README's configuration table in
// step with what Load reads.
func TestReadmeDocumentsEveryVariable(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "README.md"))
	if err != nil {
		t.Skipf("README not found next to the module: %v", err)
	}
	readme := string(b)
	for _, v := range Documentation() {
		if !strings.Contains(readme, "| `"+v.Name+"` |") {
			t.Errorf("README.md configuration table has no row for %s", v.Name)
		}
	}
}
