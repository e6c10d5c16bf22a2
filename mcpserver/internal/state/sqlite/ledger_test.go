package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"fmt"
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
