package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"database/sql"
	"errors"
	"path/filepath"
	"testing"
	"time"
)

func TestStateColumnIsAClosedSet(t *testing.T) {
	db := openTemp(t)
	_, err := db.sql.Exec(`INSERT INTO entries (` + entryColumns + `)
		VALUES ('k', '47', '1', 1, 'r', 'h', 'done', NULL, '', '', NULL, NULL, '', '', 'x', 'x', '')`)
	if err == nil {
		t.Fatal("the database accepted a state outside the lifecycle")
	}
	_, err = db.sql.Exec(`INSERT INTO entries (` + entryColumns + `)
		VALUES ('k', '47', '1', 1, 'r', 'h', 'raised', NULL, '', '', NULL, NULL, '', '', 'x', 'x', '')`)
	if err == nil {
		t.Fatal("the database accepted a raised entry without an order id")
	}
}

func TestSameRequestIsNeverInFlightTwice(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	first := sendingEntry("first", base)
	if _, _, err := db.Reserve(ctx, first); err != nil {
		t.Fatal(err)
	}
	second := first
	second.IdempotencyKey = "second"
	// The same request spelt differently (case, spaces) is the same request.
	second.Reason = "  GAP   above threshold (first)\u00a0"
	var inflight *state.InFlightError
	if _, _, err := db.Reserve(ctx, second); !errors.As(err, &inflight) || inflight.Entry.IdempotencyKey != "first" {
		t.Fatalf("second send while the first is sending: err = %v, want *InFlightError naming first", err)
	}
	if _, err := db.Finish(ctx, "first", state.StateUnknown, "", "WRITE_OUTCOME_UNKNOWN", "timeout", base); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Reserve(ctx, second); !errors.Is(err, state.ErrInFlight) {
		t.Fatalf("second send while the first is unknown: err = %v, want ErrInFlight", err)
	}
	if _, ok, _ := db.Get(ctx, "second"); ok {
		t.Fatal("a refused reservation left an entry behind")
	}
	// Staging is not sending; approving it would be.
	staged := pendingEntry("staged", "ap-s", base, base.Add(time.Hour))
	staged.Reason = first.Reason
	if _, _, err := db.Reserve(ctx, staged); err != nil {
		t.Fatalf("staging the same request: %v", err)
	}
	if _, err := db.Claim(ctx, "ap-s", "Jana", base); !errors.Is(err, state.ErrInFlight) {
		t.Fatalf("approving while the same request is unknown: err = %v, want ErrInFlight", err)
	}
	// Another quantity is another request.
	other := sendingEntry("other", base)
	other.Reason, other.QuantityUnits = first.Reason, 36
	if _, _, err := db.Reserve(ctx, other); err != nil {
		t.Fatalf("a different request: %v", err)
	}
	// A person finds no order at StoreLink: the request may go again.
	if _, err := db.Apply(ctx, "first", state.EventResolveNotRaised, state.Change{DecidedBy: "IT"}, base); err != nil {
		t.Fatal(err)
	}
	if _, created, err := db.Reserve(ctx, second); err != nil || !created {
		t.Fatalf("after the resolution: created=%v err=%v", created, err)
	}
}

func TestUpgradeFromVersion1(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "state.db")
	raw, err := sql.Open("sqlite", dsn(path))
	if err != nil {
		t.Fatal(err)
	}
	stmts := []string{`CREATE TABLE schema_version (version INTEGER NOT NULL)`, `INSERT INTO schema_version VALUES (1)`, legacyMigrations[0]}
	for _, s := range stmts {
		if _, err := raw.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	const ins = `INSERT INTO entries (idempotency_key, store_id, sku, quantity_units, reason, request_hash, state, order_id, error_code, created_at, updated_at)
		VALUES (?, '47', '8847291', 24, 'r', 'h', ?, ?, ?, '2025-01-01T00:00:00.000000000Z', '2025-01-01T00:00:00.000000000Z')`
	rows := []struct {
		key, state, code string
		order            any
	}{
		{"rate", "failed", "RATE_LIMITED", nil},
		{"down", "failed", "UPSTREAM_UNAVAILABLE", nil},
		{"auth", "failed", "AUTH_KEY_INVALID", nil},
		{"rule", "failed", "UPSTREAM_REJECTED", nil},
		{"ok", "raised", "", "ORD-1"},
	}
	for _, r := range rows {
		if _, err := raw.Exec(ins, r.key, r.state, r.order, r.code); err != nil {
			t.Fatal(err)
		}
	}
	_ = raw.Close()

	db := openAt(t, path)
	want := map[string]state.EntryState{"rate": state.StateRetryable, "down": state.StateRetryable, "auth": state.StateRetryable, "rule": state.StateFailed, "ok": state.StateRaised}
	for key, st := range want {
		e, ok, err := db.Get(ctx, key)
		if err != nil || !ok || e.State != st || e.UpstreamID != "" {
			t.Errorf("%s after upgrade: %+v %v %v, want %s", key, e, ok, err, st)
		}
	}
	if _, err := db.sql.Exec(`UPDATE entries SET state = 'bogus' WHERE idempotency_key = 'ok'`); err == nil {
		t.Error("the upgraded table accepts a state outside the lifecycle")
	}
}
