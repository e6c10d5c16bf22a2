package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func sendingEntry(key string, created time.Time) state.Entry {
	return state.Entry{
		IdempotencyKey: key,
		StoreID:        "47",
		SKU:            "8847291",
		QuantityUnits:  24,
		Reason:         "gap above threshold (" + key + ")", // one request per key
		State:          state.StateSending,
		RequestedBy:    "claude/session-1",
		CreatedAt:      created,
	}
}

func pendingEntry(key, approvalID string, created, expires time.Time) state.Entry {
	e := sendingEntry(key, created)
	e.State = state.StatePendingApproval
	e.ApprovalID = approvalID
	e.ApprovalExpiresAt = expires
	return e
}

func cmpEntry(want, got state.Entry) string { return cmp.Diff(want, got) }

func TestReserveStoresEntry(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	in := sendingEntry("k1", base)
	got, created, err := db.Reserve(ctx, in)
	if err != nil {
		t.Fatalf("Reserve: %v", err)
	}
	if !created {
		t.Fatal("first Reserve reported the key as taken")
	}
	want := in
	want.RequestHash = state.RequestHash("47", "8847291", 24, in.Reason)
	want.UpdatedAt = base
	if diff := cmpEntry(want, got); diff != "" {
		t.Errorf("stored entry (-want +got):\n%s", diff)
	}
	read, ok, err := db.Get(ctx, "k1")
	if err != nil || !ok {
		t.Fatalf("Get = %v, %v", ok, err)
	}
	if diff := cmpEntry(want, read); diff != "" {
		t.Errorf("Get (-want +got):\n%s", diff)
	}
}

func TestReserveTwiceReturnsExisting(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	first, created, err := db.Reserve(ctx, sendingEntry("k1", base))
	if err != nil || !created {
		t.Fatalf("first Reserve = %v, %v", created, err)
	}
	// A different request under the same key: the ledger hands back the
	// original so the caller can see the hashes differ.
	second := sendingEntry("k1", base.Add(time.Minute))
	second.QuantityUnits = 240
	second.RequestedBy = "someone else"
	got, created, err := db.Reserve(ctx, second)
	if err != nil {
		t.Fatalf("second Reserve: %v", err)
	}
	if created {
		t.Fatal("second Reserve with the same key reported created=true")
	}
	if diff := cmpEntry(first, got); diff != "" {
		t.Errorf("second Reserve should return the original (-want +got):\n%s", diff)
	}
	if got.RequestHash == state.RequestHash(second.StoreID, second.SKU, second.QuantityUnits, second.Reason) {
		t.Error("a different request produced the same request hash")
	}
}

func TestReserveKeepsGivenRequestHash(t *testing.T) {
	db := openTemp(t)
	e := sendingEntry("k1", base)
	e.RequestHash = "caller-computed"
	got, _, err := db.Reserve(testCtx(t), e)
	if err != nil {
		t.Fatal(err)
	}
	if got.RequestHash != "caller-computed" {
		t.Errorf("RequestHash = %q, want the caller's", got.RequestHash)
	}
}

func TestReserveRejectsInvalidEntries(t *testing.T) {
	db := openTemp(t)
	tests := []struct {
		name   string
		mutate func(*state.Entry)
	}{
		{"empty key", func(e *state.Entry) { e.IdempotencyKey = "" }},
		{"no store", func(e *state.Entry) { e.StoreID = "" }},
		{"no sku", func(e *state.Entry) { e.SKU = "" }},
		{"zero quantity", func(e *state.Entry) { e.QuantityUnits = 0 }},
		{"negative quantity", func(e *state.Entry) { e.QuantityUnits = -3 }},
		{"raised", func(e *state.Entry) { e.State = state.StateRaised }},
		{"empty state", func(e *state.Entry) { e.State = "" }},
		{"sending with approval", func(e *state.Entry) { e.ApprovalID = "ap-1" }},
		{"pending without approval id", func(e *state.Entry) {
			e.State = state.StatePendingApproval
			e.ApprovalExpiresAt = base.Add(time.Hour)
		}},
		{"pending without expiry", func(e *state.Entry) {
			e.State = state.StatePendingApproval
			e.ApprovalID = "ap-1"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := sendingEntry("k-"+tt.name, base)
			tt.mutate(&e)
			if _, _, err := db.Reserve(testCtx(t), e); err == nil {
				t.Fatal("Reserve accepted an invalid entry")
			}
		})
	}
	if _, ok, err := db.Get(testCtx(t), "k-raised"); err != nil || ok {
		t.Errorf("a rejected entry was stored: %v, %v", ok, err)
	}
}

func TestReserveDuplicateApprovalIDFails(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if _, _, err := db.Reserve(ctx, pendingEntry("k1", "ap-1", base, base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Reserve(ctx, pendingEntry("k2", "ap-1", base, base.Add(time.Hour))); err == nil {
		t.Fatal("two entries were staged under one approval id")
	}
}

// TestReserveRaceAcrossHandles has two handles on one file stand in for two
// server processes, each with many goroutines reserving the same keys.
func TestReserveRaceAcrossHandles(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "state.db")
	handles := []*DB{openAt(t, path), openAt(t, path)}
	const keys, perHandle = 8, 8

	type result struct {
		entry   state.Entry
		created bool
		who     string
	}
	results := make([][]result, keys)
	var mu sync.Mutex
	var wg sync.WaitGroup
	errs := make(chan error, keys*perHandle*len(handles))
	for k := range keys {
		key := fmt.Sprintf("key-%d", k)
		for h, db := range handles {
			for g := range perHandle {
				who := fmt.Sprintf("h%d-g%d", h, g)
				wg.Go(func() {
					e := sendingEntry(key, base)
					e.RequestedBy = who
					got, created, err := db.Reserve(ctx, e)
					if err != nil {
						errs <- fmt.Errorf("%s reserving %s: %w", who, key, err)
						return
					}
					mu.Lock()
					results[k] = append(results[k], result{got, created, who})
					mu.Unlock()
				})
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for k, rs := range results {
		var winners []string
		for _, r := range rs {
			if r.created {
				winners = append(winners, r.who)
			}
		}
		if len(winners) != 1 {
			t.Errorf("key-%d: %d callers created the entry (%v), want exactly 1", k, len(winners), winners)
			continue
		}
		for _, r := range rs {
			if r.entry.RequestedBy != winners[0] {
				t.Errorf("key-%d: %s was handed the entry of %s, want the winner %s", k, r.who, r.entry.RequestedBy, winners[0])
			}
		}
	}
}

func TestFinish(t *testing.T) {
	later := base.Add(3 * time.Second)
	tests := []struct {
		name                string
		state               state.EntryState
		orderID, code, msg  string
		wantOrder, wantCode string
	}{
		{name: "raised", state: state.StateRaised, orderID: "ORD-9", wantOrder: "ORD-9"},
		{name: "failed", state: state.StateFailed, code: "UPSTREAM_REJECTED", msg: "supplier blocked", wantCode: "UPSTREAM_REJECTED"},
		{name: "unknown", state: state.StateUnknown, code: "WRITE_OUTCOME_UNKNOWN", msg: "timed out", wantCode: "WRITE_OUTCOME_UNKNOWN"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ctx := testCtx(t)
			db := openTemp(t)
			start, _, err := db.Reserve(ctx, sendingEntry("k1", base))
			if err != nil {
				t.Fatal(err)
			}
			got, err := db.Finish(ctx, "k1", tt.state, tt.orderID, tt.code, tt.msg, later)
			if err != nil {
				t.Fatalf("Finish: %v", err)
			}
			want := start
			want.State, want.OrderID, want.ErrorCode, want.ErrorMessage, want.UpdatedAt = tt.state, tt.wantOrder, tt.wantCode, tt.msg, later
			if diff := cmpEntry(want, got); diff != "" {
				t.Errorf("Finish (-want +got):\n%s", diff)
			}
			// A second verdict on the same order is refused: the first one
			// stands.
			if _, err := db.Finish(ctx, "k1", state.StateFailed, "", "X", "again", later); !errors.Is(err, state.ErrInvalidTransition) {
				t.Errorf("second Finish: err = %v, want ErrInvalidTransition", err)
			}
			read, _, err := db.Get(ctx, "k1")
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmpEntry(want, read); diff != "" {
				t.Errorf("entry changed by a refused Finish (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFinishRefusals(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if _, _, err := db.Reserve(ctx, sendingEntry("send", base)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := db.Reserve(ctx, pendingEntry("pend", "ap-1", base, base.Add(time.Hour))); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, key string
		state     state.EntryState
		orderID   string
		want      error
	}{
		{"to sending", "send", state.StateSending, "", state.ErrInvalidTransition},
		{"to pending", "send", state.StatePendingApproval, "", state.ErrInvalidTransition},
		{"to rejected", "send", state.StateRejected, "", state.ErrInvalidTransition},
		{"to bogus", "send", "bogus", "", state.ErrInvalidTransition},
		{"raised without order id", "send", state.StateRaised, "", state.ErrInvalidTransition},
		{"pending entry", "pend", state.StateRaised, "ORD-1", state.ErrInvalidTransition},
		{"unknown key", "nope", state.StateRaised, "ORD-1", state.ErrNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := db.Finish(ctx, tt.key, tt.state, tt.orderID, "", "", base); !errors.Is(err, tt.want) {
				t.Errorf("Finish: err = %v, want %v", err, tt.want)
			}
		})
	}
	for key, want := range map[string]state.EntryState{"send": state.StateSending, "pend": state.StatePendingApproval} {
		e, _, err := db.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if e.State != want {
			t.Errorf("%s: state = %s after refusals, want %s", key, e.State, want)
		}
	}
}

func TestLookups(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	if _, _, err := db.Reserve(ctx, sendingEntry("k1", base)); err != nil {
		t.Fatal(err)
	}
	raised, err := db.Finish(ctx, "k1", state.StateRaised, "ORD-1", "", "", base)
	if err != nil {
		t.Fatal(err)
	}
	staged, _, err := db.Reserve(ctx, pendingEntry("k2", "ap-2", base, base.Add(time.Hour)))
	if err != nil {
		t.Fatal(err)
	}

	if got, ok, err := db.ByOrderID(ctx, "ORD-1"); err != nil || !ok || got.IdempotencyKey != "k1" {
		t.Errorf("ByOrderID(ORD-1) = %q, %v, %v", got.IdempotencyKey, ok, err)
	} else if diff := cmpEntry(raised, got); diff != "" {
		t.Errorf("ByOrderID (-want +got):\n%s", diff)
	}
	if got, ok, err := db.ByApprovalID(ctx, "ap-2"); err != nil || !ok {
		t.Errorf("ByApprovalID(ap-2) = %v, %v", ok, err)
	} else if diff := cmpEntry(staged, got); diff != "" {
		t.Errorf("ByApprovalID (-want +got):\n%s", diff)
	}
	for name, lookup := range map[string]func() (state.Entry, bool, error){
		"Get missing":          func() (state.Entry, bool, error) { return db.Get(ctx, "missing") },
		"ByOrderID missing":    func() (state.Entry, bool, error) { return db.ByOrderID(ctx, "ORD-404") },
		"ByOrderID empty":      func() (state.Entry, bool, error) { return db.ByOrderID(ctx, "") },
		"ByApprovalID missing": func() (state.Entry, bool, error) { return db.ByApprovalID(ctx, "ap-404") },
		"ByApprovalID empty":   func() (state.Entry, bool, error) { return db.ByApprovalID(ctx, "") },
	} {
		if got, ok, err := lookup(); err != nil || ok {
			t.Errorf("%s = %q, %v, %v; want not found, no error", name, got.IdempotencyKey, ok, err)
		}
	}
}

func TestRecent(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	reserve := func(key, store, sku string, at time.Time) {
		t.Helper()
		e := sendingEntry(key, at)
		e.StoreID, e.SKU = store, sku
		if _, _, err := db.Reserve(ctx, e); err != nil {
			t.Fatal(err)
		}
	}
	since := base
	reserve("before", "47", "8847291", since.Add(-time.Nanosecond))
	reserve("at", "47", "8847291", since)
	reserve("frac", "47", "8847291", since.Add(100*time.Millisecond))
	reserve("same-1", "47", "8847291", since.Add(time.Hour))
	reserve("same-2", "47", "8847291", since.Add(time.Hour))
	reserve("other-store", "102", "8847291", since.Add(time.Minute))
	reserve("other-sku", "47", "1111111", since.Add(time.Minute))

	got, err := db.Recent(ctx, "47", "8847291", since.In(time.FixedZone("east", 3600)))
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, e := range got {
		keys = append(keys, e.IdempotencyKey)
	}
	if diff := cmp.Diff([]string{"same-2", "same-1", "frac", "at"}, keys); diff != "" {
		t.Errorf("Recent keys (-want +got):\n%s", diff)
	}
	none, err := db.Recent(ctx, "47", "8847291", since.Add(2*time.Hour))
	if err != nil || len(none) != 0 {
		t.Errorf("Recent after the last entry = %d entries, %v", len(none), err)
	}
}

func TestApprovalLifecycle(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	stage := func(key, approval string, created, expires time.Time) state.Entry {
		t.Helper()
		e, created2, err := db.Reserve(ctx, pendingEntry(key, approval, created, expires))
		if err != nil || !created2 {
			t.Fatalf("stage %s = %v, %v", key, created2, err)
		}
		return e
	}
	hour := time.Hour
	stage("k-old", "ap-old", base, base.Add(hour)) // expires at base+1h
	stage("k-mid", "ap-mid", base.Add(1*time.Minute), base.Add(4*hour))
	stage("k-new", "ap-new", base.Add(2*time.Minute), base.Add(4*hour))
	stage("k-rej", "ap-rej", base.Add(3*time.Minute), base.Add(4*hour))
	if _, _, err := db.Reserve(ctx, sendingEntry("k-send", base)); err != nil {
		t.Fatal(err)
	}

	pendingKeys := func(now time.Time) []string {
		t.Helper()
		es, err := db.Pending(ctx, now)
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, e := range es {
			keys = append(keys, e.IdempotencyKey)
		}
		return keys
	}
	if diff := cmp.Diff([]string{"k-old", "k-mid", "k-new", "k-rej"}, pendingKeys(base.Add(10*time.Minute))); diff != "" {
		t.Errorf("Pending, oldest first (-want +got):\n%s", diff)
	}
	// At its expiry instant an approval is no longer pending.
	if diff := cmp.Diff([]string{"k-mid", "k-new", "k-rej"}, pendingKeys(base.Add(hour))); diff != "" {
		t.Errorf("Pending at the first expiry (-want +got):\n%s", diff)
	}

	// Claiming a lapsed approval fails even before Expire has run.
	if _, err := db.Claim(ctx, "ap-old", "buyer", base.Add(hour)); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("Claim of a lapsed approval: err = %v, want ErrNotPending", err)
	}
	if _, err := db.Reject(ctx, "ap-old", "buyer", base.Add(2*hour)); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("Reject of a lapsed approval: err = %v, want ErrNotPending", err)
	}

	claimAt := base.Add(20 * time.Minute)
	claimed, err := db.Claim(ctx, "ap-mid", "buyer:jana", claimAt)
	if err != nil {
		t.Fatalf("Claim: %v", err)
	}
	if claimed.State != state.StateSending || claimed.DecidedBy != "buyer:jana" || !claimed.UpdatedAt.Equal(claimAt) {
		t.Errorf("claimed entry = %s by %q at %v", claimed.State, claimed.DecidedBy, claimed.UpdatedAt)
	}
	if _, err := db.Claim(ctx, "ap-mid", "buyer:petr", claimAt); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("second Claim: err = %v, want ErrNotPending", err)
	}
	// A claimed order then follows the ordinary send path.
	if _, err := db.Finish(ctx, "k-mid", state.StateRaised, "ORD-7", "", "", claimAt.Add(time.Second)); err != nil {
		t.Errorf("Finish after Claim: %v", err)
	}

	rejected, err := db.Reject(ctx, "ap-rej", "buyer:petr", claimAt)
	if err != nil {
		t.Fatalf("Reject: %v", err)
	}
	if rejected.State != state.StateRejected || rejected.DecidedBy != "buyer:petr" {
		t.Errorf("rejected entry = %s by %q", rejected.State, rejected.DecidedBy)
	}
	if _, err := db.Reject(ctx, "ap-rej", "buyer:petr", claimAt); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("second Reject: err = %v, want ErrNotPending", err)
	}
	if _, err := db.Claim(ctx, "ap-rej", "buyer:jana", claimAt); !errors.Is(err, state.ErrNotPending) {
		t.Errorf("Claim after Reject: err = %v, want ErrNotPending", err)
	}
	if _, err := db.Claim(ctx, "ap-404", "buyer", claimAt); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Claim of an unknown approval: err = %v, want ErrNotFound", err)
	}
	if _, err := db.Reject(ctx, "", "buyer", claimAt); !errors.Is(err, state.ErrNotFound) {
		t.Errorf("Reject of an empty approval id: err = %v, want ErrNotFound", err)
	}

	// Only k-old has lapsed at base+1h; k-new is still pending.
	n, err := db.Expire(ctx, base.Add(hour))
	if err != nil || n != 1 {
		t.Fatalf("Expire at base+1h = %d, %v; want 1", n, err)
	}
	old, _, _ := db.Get(ctx, "k-old")
	if old.State != state.StateExpired || !old.UpdatedAt.Equal(base.Add(hour)) {
		t.Errorf("k-old = %s updated %v, want expired at base+1h", old.State, old.UpdatedAt)
	}
	if n, err := db.Expire(ctx, base.Add(hour)); err != nil || n != 0 {
		t.Errorf("Expire again = %d, %v; want 0", n, err)
	}
	if n, err := db.Expire(ctx, base.Add(5*hour)); err != nil || n != 1 {
		t.Errorf("Expire at base+5h = %d, %v; want 1 (k-new)", n, err)
	}

	wantStates := map[string]state.EntryState{
		"k-old": state.StateExpired, "k-mid": state.StateRaised, "k-new": state.StateExpired,
		"k-rej": state.StateRejected, "k-send": state.StateSending,
	}
	for key, want := range wantStates {
		e, _, err := db.Get(ctx, key)
		if err != nil {
			t.Fatal(err)
		}
		if e.State != want {
			t.Errorf("%s: state = %s, want %s", key, e.State, want)
		}
	}
	if keys := pendingKeys(base); len(keys) != 0 {
		t.Errorf("Pending after every decision = %v, want none", keys)
	}
}

// TestClaimRaceAcrossHandles: approvers in two processes release the same
// staged order at once; it must be sent exactly once.
func TestClaimRaceAcrossHandles(t *testing.T) {
	ctx := testCtx(t)
	path := filepath.Join(t.TempDir(), "state.db")
	handles := []*DB{openAt(t, path), openAt(t, path)}
	const approvals, perHandle = 5, 6
	for a := range approvals {
		key, ap := fmt.Sprintf("k%d", a), fmt.Sprintf("ap%d", a)
		if _, _, err := handles[0].Reserve(ctx, pendingEntry(key, ap, base, base.Add(time.Hour))); err != nil {
			t.Fatal(err)
		}
	}
	var wins [approvals]atomic.Int32
	var wg sync.WaitGroup
	errs := make(chan error, approvals*perHandle*len(handles))
	for a := range approvals {
		ap := fmt.Sprintf("ap%d", a)
		for h, db := range handles {
			for g := range perHandle {
				wg.Go(func() {
					_, err := db.Claim(ctx, ap, fmt.Sprintf("h%d-g%d", h, g), base.Add(time.Minute))
					switch {
					case err == nil:
						wins[a].Add(1)
					case !errors.Is(err, state.ErrNotPending):
						errs <- fmt.Errorf("claim %s: %w", ap, err)
					}
				})
			}
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for a := range approvals {
		if n := wins[a].Load(); n != 1 {
			t.Errorf("ap%d: %d winners, want exactly 1", a, n)
		}
		e, _, err := handles[1].ByApprovalID(ctx, fmt.Sprintf("ap%d", a))
		if err != nil {
			t.Fatal(err)
		}
		if e.State != state.StateSending || e.DecidedBy == "" {
			t.Errorf("ap%d: state %s decided by %q, want sending with a decider", a, e.State, e.DecidedBy)
		}
	}
}

func TestRequestHash(t *testing.T) {
	h := state.RequestHash("47", "8847291", 24, "low")
	if h != state.RequestHash("47", "8847291", 24, "low") {
		t.Fatal("RequestHash is not deterministic")
	}
	for name, other := range map[string]string{
		"store":    state.RequestHash("102", "8847291", 24, "low"),
		"sku":      state.RequestHash("47", "8847292", 24, "low"),
		"quantity": state.RequestHash("47", "8847291", 25, "low"),
		"reason":   state.RequestHash("47", "8847291", 24, "lower"),
		// Shifting a character between fields must not collide.
		"boundary": state.RequestHash("478", "847291", 24, "low"),
	} {
		if other == h {
			t.Errorf("changing the %s left the hash unchanged", name)
		}
	}
}

func BenchmarkReserveFinish(b *testing.B) {
	ctx := testCtx(b)
	db := openTemp(b)
	i := 0
	for b.Loop() {
		key := fmt.Sprintf("bench-%d", i)
		i++
		if _, _, err := db.Reserve(ctx, sendingEntry(key, base)); err != nil {
			b.Fatal(err)
		}
		if _, err := db.Finish(ctx, key, state.StateRaised, "ORD-"+key, "", "", base); err != nil {
			b.Fatal(err)
		}
	}
}
