package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"
)

// allowed is the lifecycle written out independently of the table in
// machine.go: every pair not listed must be refused without a change.
var allowed = map[state.EntryState]map[state.Event]state.EntryState{
	state.StateSending: {state.EventAccepted: state.StateRaised, state.EventRefused: state.StateFailed, state.EventNotSent: state.StateRetryable, state.EventLost: state.StateUnknown,
		state.EventUnclaim: state.StatePendingApproval, state.EventResolveRaised: state.StateRaised, state.EventResolveNotRaised: state.StateRetryable},
	state.StateRetryable:       {state.EventRetry: state.StateSending, state.EventRestage: state.StatePendingApproval},
	state.StateUnknown:         {state.EventResolveRaised: state.StateRaised, state.EventResolveNotRaised: state.StateRetryable},
	state.StatePendingApproval: {state.EventClaim: state.StateSending, state.EventReject: state.StateRejected, state.EventExpire: state.StateExpired},
}

// entryIn stores an entry directly in state s, as the lifecycle would have
// left it, bypassing the transitions under test.
func entryIn(t *testing.T, db *DB, key string, s state.EntryState) {
	t.Helper()
	var order, approval, expires sql.NullString
	if s == state.StateRaised {
		order = sql.NullString{String: "ORD-" + key, Valid: true}
	}
	// Every entry was staged, so that the events back to
	// pending_approval have an approval to return to.
	approval = sql.NullString{String: "ap-" + key, Valid: true}
	expires = sql.NullString{String: formatTime(base.Add(time.Hour)), Valid: true}
	e := sendingEntry(key, base)
	if _, err := db.sql.Exec(`INSERT INTO entries (`+entryColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, 'OLD', 'old verdict', ?, ?, 'agent', 'someone', ?, ?, 'up-1')`,
		key, e.StoreID, e.SKU, e.QuantityUnits, e.Reason, state.RequestHash(e.StoreID, e.SKU, e.QuantityUnits, e.Reason), string(s),
		order, approval, expires, formatTime(base), formatTime(base)); err != nil {
		t.Fatal(err)
	}
}

func TestTransitionTableWalksEveryPair(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	later := base.Add(time.Minute)
	i := 0
	for _, s := range state.States() {
		for _, ev := range state.Events() {
			i++
			key := fmt.Sprintf("k%03d", i)
			entryIn(t, db, key, s)
			before, _, err := db.Get(ctx, key)
			if err != nil {
				t.Fatal(err)
			}
			// Each entry gets an order id of its own: one order id is one entry.
			got, err := db.Apply(ctx, key, ev, state.Change{OrderID: "ORD-new-" + key, ErrorCode: "CODE", ErrorMessage: "msg", DecidedBy: "Jana"}, later)
			want, ok := allowed[s][ev]
			if next, tableOK := state.Next(s, ev); next != want || tableOK != ok {
				t.Errorf("Next(%s, %s) = %s, %v; want %s, %v", s, ev, next, tableOK, want, ok)
			}
			if !ok {
				if !errors.Is(err, state.ErrInvalidTransition) {
					t.Errorf("%s + %s: err = %v, want ErrInvalidTransition", s, ev, err)
				}
				after, _, _ := db.Get(ctx, key)
				if diff := cmpEntry(before, after); diff != "" {
					t.Errorf("%s + %s: a refused event changed the entry (-before +after):\n%s", s, ev, diff)
				}
				continue
			}
			if err != nil {
				t.Errorf("%s + %s: %v", s, ev, err)
				continue
			}
			if got.State != want || !got.UpdatedAt.Equal(later) {
				t.Errorf("%s + %s: state %s at %v, want %s at %v", s, ev, got.State, got.UpdatedAt, want, later)
			}
			if want == state.StateRaised && got.OrderID == "" {
				t.Errorf("%s + %s: raised without an order id", s, ev)
			}
		}
	}
}

func TestOnlyStagedEntriesReturnToPending(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if _, _, err := db.Reserve(ctx, sendingEntry("k1", base)); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Apply(ctx, "k1", state.EventUnclaim, state.Change{}, base); !errors.Is(err, state.ErrInvalidTransition) {
		t.Fatalf("unclaim of an entry never staged: err = %v, want ErrInvalidTransition", err)
	}
}

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

func TestRetryableEntryIsTakenOverBySameRequestOnly(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	e := sendingEntry("k1", base)
	e.UpstreamID = "https://a.example"
	if _, _, err := db.Reserve(ctx, e); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Finish(ctx, "k1", state.StateRetryable, "", "RATE_LIMITED", "slow down", base.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	other := e
	other.QuantityUnits = 48
	got, created, err := db.Reserve(ctx, other)
	if err != nil || created || got.State != state.StateRetryable {
		t.Fatalf("another request under the key: %v %v %v, want the retryable entry back untouched", got.State, created, err)
	}
	again := e
	again.CreatedAt = base.Add(time.Minute)
	again.RequestedBy = "agent-2"
	got, created, err = db.Reserve(ctx, again)
	if err != nil || !created {
		t.Fatalf("same request again: created=%v err=%v", created, err)
	}
	if got.State != state.StateSending || got.ErrorCode != "" || got.ErrorMessage != "" || !got.CreatedAt.Equal(base) ||
		!got.UpdatedAt.Equal(again.CreatedAt) || got.RequestedBy != "agent-2" {
		t.Fatalf("taken over: %+v", got)
	}
	if _, created, _ := db.Reserve(ctx, again); created {
		t.Fatal("a sending entry was taken over")
	}
	// A definite refusal spends the key.
	if _, err := db.Finish(ctx, "k1", state.StateFailed, "", "UPSTREAM_REJECTED", "below minimum", base); err != nil {
		t.Fatal(err)
	}
	if got, created, err := db.Reserve(ctx, again); err != nil || created || got.State != state.StateFailed {
		t.Fatalf("a failed entry: %v %v %v, want it back untouched", got.State, created, err)
	}
}

func TestApprovedOrderNotTakenReturnsToPending(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if _, _, err := db.Reserve(ctx, pendingEntry("k1", "ap-1", base, base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Claim(ctx, "ap-1", "Jana", base); err != nil {
		t.Fatal(err)
	}
	got, err := db.Apply(ctx, "k1", state.EventUnclaim, state.Change{}, base.Add(time.Second))
	if err != nil || got.State != state.StatePendingApproval || got.DecidedBy != "" {
		t.Fatalf("unclaim: %+v %v", got, err)
	}
	if _, err := db.Claim(ctx, "ap-1", "Petr", base.Add(2*time.Second)); err != nil {
		t.Fatalf("claim after unclaim: %v", err)
	}
}

func TestExpireUsesTheTable(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if _, _, err := db.Reserve(ctx, pendingEntry("k1", "ap-1", base, base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Reserve(ctx, pendingEntry("k2", "ap-2", base, base.Add(3*time.Hour))); err != nil {
		t.Fatal(err)
	}
	n, err := db.Expire(ctx, base.Add(2*time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("Expire = %d, %v; want 1", n, err)
	}
	staged, err := db.Staged(ctx)
	if err != nil || len(staged) != 2 || staged[0].State != state.StateExpired || staged[1].State != state.StatePendingApproval {
		t.Fatalf("Staged = %+v, %v", staged, err)
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
