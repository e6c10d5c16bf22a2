package app

import (
	"os"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/config"
	"github.com/korral/storelink/mcpserver/internal/upstream"
)

// TestBudgetDefaultIsTheAdapters: the settings table's default of
// UPSTREAM_MAX_IN_FLIGHT is the adapter's documented default, so the ADR,
// the README table and a server started with nothing set agree.
func TestBudgetDefaultIsTheAdapters(t *testing.T) {
	cfg, err := config.Load(func(k string) string {
		if k == "HOME" {
			return t.TempDir()
		}
		return ""
	}, os.ReadFile)
	if err != nil {
		t.Fatal(err)
	}
	if cfg.UpstreamMaxInFlight != upstream.DefaultMaxInFlight {
		t.Fatalf("UPSTREAM_MAX_IN_FLIGHT defaults to %d, the adapter to %d", cfg.UpstreamMaxInFlight, upstream.DefaultMaxInFlight)
	}
}
