package deploy_test

import (
	"os"
	"testing"

	"github.com/korral/storelink/internal/e2etest"
)

// TestMain removes the storelink-mcp that e2etest.Binary built, if a test
// asked for it.
func TestMain(m *testing.M) { os.Exit(e2etest.Run(m)) }
