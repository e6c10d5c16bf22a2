package release_test

import (
	"os"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
)

// TestMain removes the binary e2etest.Binary built, if any.
func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }
