package app

import (
	"context"
	"testing"

	"github.com/korral/storelink/mcpserver/internal/app/apptest"
)

// TestReadinessReportsLedgerAndBreaker: what /readyz says about the app's
// parts (the transport adds draining).
func TestReadinessReportsLedgerAndBreaker(t *testing.T) {
	up, _ := apptest.FailingUpstream(t)
	opts, _ := testOptions(t, up.URL, map[string]string{"BREAKER_FAILURES": "1"})
	a, err := New(context.Background(), opts, Server)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(a.Close)
	ctx := context.Background()

	// One failure opens the breaker: reported, but still ready.
	_, _ = a.up.Store(ctx, "47")
	if out, err := a.readiness(ctx); err != nil || out.Breaker != "open" || out.Ledger != "ok" || out.Database != "sqlite" || out.Upstream != "storelink" {
		t.Fatalf("open breaker: %+v %v", out, err)
	}
	_ = a.db.Close()
	if out, err := a.readiness(ctx); err == nil || out.Ledger != "unreachable" {
		t.Fatalf("ledger closed: %+v %v", out, err)
	}
}
