package journal_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/state/postgres"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

var base = time.Date(2026, 11, 27, 14, 30, 0, 0, time.UTC)

// backends runs fn on SQLite and, with TEST_DATABASE_URL, on PostgreSQL.
func backends(t *testing.T, fn func(t *testing.T, db state.Store)) {
	t.Run("sqlite", func(t *testing.T) {
		db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		fn(t, db)
	})
	t.Run("postgres", func(t *testing.T) {
		url := statetest.PostgresURL(t)
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		db, err := postgres.Open(ctx, url, postgres.Options{MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = db.Close() })
		fn(t, db)
	})
}

// sending reserves an entry being sent and returns it as the ledger holds it.
func sending(t *testing.T, l state.Ledger, key string, units int64) state.Entry {
	t.Helper()
	e, created, err := l.Reserve(context.Background(), state.Entry{
		IdempotencyKey: key, StoreID: "47", SKU: "8847291", QuantityUnits: units, Reason: "gap " + key,
		State: state.StateSending, RequestedBy: "test", CreatedAt: base,
	})
	if err != nil || !created {
		t.Fatalf("reserve %s: %v %v", key, created, err)
	}
	return e
}

func accepted(e state.Entry, orderID string) journal.Line {
	return journal.Outcome(e, state.EventAccepted, state.Change{OrderID: orderID}, base.Add(time.Second))
}

func open(t *testing.T, path string) *journal.File {
	t.Helper()
	j, err := journal.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = j.Close() })
	return j
}

func get(t *testing.T, l state.Ledger, key string) state.Entry {
	t.Helper()
	e, ok, err := l.Get(context.Background(), key)
	if err != nil || !ok {
		t.Fatalf("get %s: %v %v", key, ok, err)
	}
	return e
}

func lines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return strings.Fields(string(bytes.TrimSpace(b)))
}

// TestReplayRecordsOnceAndEmptiesTheJournal: a replay records a pending line
// once and leaves the file empty, with owner-only permissions.
func TestReplayRecordsOnceAndEmptiesTheJournal(t *testing.T) {
	backends(t, func(t *testing.T, db state.Store) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "dir", "outcomes.jsonl")
		j := open(t, path)
		e := sending(t, db, "k-replay", 24)
		if err := j.Append(accepted(e, "RO-47-000101")); err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(path); err != nil || st.Mode().Perm() != 0o600 {
			t.Fatalf("journal file: %v %v, want mode 0600", st.Mode(), err)
		}
		rep, err := j.Replay(ctx, db, nil, base.Add(time.Minute))
		if err != nil || rep.Recorded != 1 || !rep.Clean() {
			t.Fatalf("replay: %+v %v", rep, err)
		}
		if got := get(t, db, "k-replay"); got.State != state.StateRaised || got.OrderID != "RO-47-000101" {
			t.Fatalf("entry after replay: %+v", got)
		}
		if l := lines(t, path); len(l) != 0 {
			t.Fatalf("journal after a clean replay: %q", l)
		}
		// The same line again (say, from a copy of the file) changes nothing.
		if err := j.Append(accepted(e, "RO-47-000101")); err != nil {
			t.Fatal(err)
		}
		rep, err = j.Replay(ctx, db, nil, base.Add(2*time.Minute))
		if err != nil || rep.Recorded != 0 || rep.Settled != 1 || !rep.Clean() {
			t.Fatalf("second replay: %+v %v", rep, err)
		}
		if got := get(t, db, "k-replay"); !got.UpdatedAt.Equal(base.Add(time.Minute)) {
			t.Fatalf("a settled line was written again: updated %s", got.UpdatedAt)
		}
	})
}

// TestConflictIsReportedNeverOverwritten: a line contradicting the ledger
// is reported and kept; the ledger is unchanged.
func TestConflictIsReportedNeverOverwritten(t *testing.T) {
	backends(t, func(t *testing.T, db state.Store) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "outcomes.jsonl")
		j := open(t, path)
		e := sending(t, db, "k-conflict", 24)
		if _, err := db.Finish(ctx, e.IdempotencyKey, state.StateRaised, "RO-47-000201", "", "", base); err != nil {
			t.Fatal(err)
		}
		other := accepted(e, "RO-47-000999")
		stranger := accepted(state.Entry{IdempotencyKey: "k-nobody", StoreID: "47", SKU: "8847291", QuantityUnits: 24, UpdatedAt: base}, "RO-47-000998")
		f := sending(t, db, "k-other-request", 48)
		wrong := accepted(f, "RO-47-000997")
		wrong.QuantityUnits = 4800
		for _, l := range []journal.Line{other, stranger, wrong} {
			if err := j.Append(l); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := j.Replay(ctx, db, nil, base.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Conflicts) != 3 || rep.Recorded != 0 || rep.Clean() {
			t.Fatalf("replay: %+v", rep)
		}
		for i, want := range []string{"RO-47-000999 under idempotency key k-conflict", "holds no entry under idempotency key k-nobody", "4800 unit(s)"} {
			if p := rep.Conflicts[i]; p.Number != i+1 || !strings.Contains(p.Reason, want) {
				t.Errorf("conflict %d: %+v, want %q", i, p, want)
			}
		}
		if got := get(t, db, "k-conflict"); got.OrderID != "RO-47-000201" {
			t.Fatalf("the ledger's order id was overwritten: %+v", got)
		}
		if got := get(t, db, "k-other-request"); got.State != state.StateSending {
			t.Fatalf("a line for another request was applied: %+v", got)
		}
		if l := lines(t, path); len(l) != 3 {
			t.Fatalf("conflicting lines must stay for a person: %q", l)
		}
	})
}

// TestAnOrderAnotherEntryHoldsIsAConflictAndReplayGoesOn: a line giving
// another entry's order to this one is a conflict; later lines are still
// recorded.
func TestAnOrderAnotherEntryHoldsIsAConflictAndReplayGoesOn(t *testing.T) {
	backends(t, func(t *testing.T, db state.Store) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "outcomes.jsonl")
		j := open(t, path)
		holder := sending(t, db, "k-holder", 24)
		if _, err := db.Finish(ctx, holder.IdempotencyKey, state.StateRaised, "RO-47-000301", "", "", base); err != nil {
			t.Fatal(err)
		}
		clash := sending(t, db, "k-clash", 36)
		next := sending(t, db, "k-next", 48)
		for _, l := range []journal.Line{accepted(clash, "RO-47-000301"), accepted(next, "RO-47-000302")} {
			if err := j.Append(l); err != nil {
				t.Fatal(err)
			}
		}
		rep, err := j.Replay(ctx, db, nil, base.Add(time.Minute))
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Conflicts) != 1 || rep.Recorded != 1 || rep.Cause != nil || len(rep.Pending) != 0 {
			t.Fatalf("replay: %+v", rep)
		}
		if !strings.Contains(rep.Conflicts[0].Reason, "already records that order for idempotency key k-holder") {
			t.Errorf("conflict: %+v", rep.Conflicts[0])
		}
		if got := get(t, db, "k-clash"); got.State != state.StateSending || got.OrderID != "" {
			t.Fatalf("the clashing line was applied: %+v", got)
		}
		if got := get(t, db, "k-next"); got.State != state.StateRaised || got.OrderID != "RO-47-000302" {
			t.Fatalf("the line behind the conflict was not recorded: %+v", got)
		}
	})
}

// TestOldAttemptNeverSettlesANewerSend: a stale not-sent line must not mark
// a newer send of the key retryable.
func TestOldAttemptNeverSettlesANewerSend(t *testing.T) {
	backends(t, func(t *testing.T, db state.Store) {
		ctx := context.Background()
		j := open(t, filepath.Join(t.TempDir(), "outcomes.jsonl"))
		first := sending(t, db, "k-again", 24)
		notSent := journal.Outcome(first, state.EventNotSent, state.Change{ErrorCode: "UPSTREAM_UNAVAILABLE", ErrorMessage: "breaker open"}, base)
		if _, err := db.Apply(ctx, first.IdempotencyKey, state.EventNotSent, state.Change{ErrorCode: "UPSTREAM_UNAVAILABLE"}, base.Add(time.Second)); err != nil {
			t.Fatal(err)
		}
		again := first
		again.State, again.CreatedAt = state.StateSending, base.Add(time.Minute)
		if _, taken, err := db.Reserve(ctx, again); err != nil || !taken {
			t.Fatalf("send again: %v %v", taken, err)
		}
		if err := j.Append(notSent); err != nil {
			t.Fatal(err)
		}
		rep, err := j.Replay(ctx, db, nil, base.Add(2*time.Minute))
		if err != nil || rep.Settled != 1 || !rep.Clean() {
			t.Fatalf("replay: %+v %v", rep, err)
		}
		if got := get(t, db, "k-again"); got.State != state.StateSending {
			t.Fatalf("a stale outcome settled the new attempt: %+v", got)
		}
	})
}

// TestOpenRefusesAFileThatIsNotAJournal: the journal does not append to a
// file that is not one.
func TestOpenRefusesAFileThatIsNotAJournal(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, err := sqlite.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	_ = db.Close()
	before, _ := os.ReadFile(path)
	if _, err := journal.Open(path); err == nil || !strings.Contains(err.Error(), "is not an outcome journal") {
		t.Fatalf("open on a SQLite file: %v", err)
	}
	if after, _ := os.ReadFile(path); !bytes.Equal(before, after) {
		t.Fatal("the database file was changed")
	}
	dir := filepath.Join(t.TempDir(), "ro")
	if err := os.Mkdir(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	if os.Getuid() != 0 {
		if _, err := journal.Open(filepath.Join(dir, "outcomes.jsonl")); err == nil {
			t.Fatal("a journal in an unwritable directory opened")
		}
	}
}

// TestTornLineIsKeptAndDoesNotSwallowTheNext: a half line from a crash is
// reported, and the next append is still recorded.
func TestTornLineIsKeptAndDoesNotSwallowTheNext(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	if err := os.WriteFile(path, []byte(`{"v":1,"at":"2026-11-27T14:30:00Z","idempotency_key":"k-to`), 0o600); err != nil {
		t.Fatal(err)
	}
	j := open(t, path)
	e := sending(t, db, "k-after-torn", 24)
	if err := j.Append(accepted(e, "RO-47-000301")); err != nil {
		t.Fatal(err)
	}
	rep, err := j.Replay(context.Background(), db, nil, base)
	if err != nil || rep.Recorded != 1 || len(rep.Unreadable) != 1 || rep.Unreadable[0].Number != 1 {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	if l := lines(t, path); len(l) != 1 || !strings.Contains(l[0], "k-to") {
		t.Fatalf("journal after replay: %q", l)
	}
}

// TestTwoProcessesShareOneJournal: two open files of one path append,
// replay and compact concurrently without losing a line.
func TestTwoProcessesShareOneJournal(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	a, b := open(t, path), open(t, path)
	// Each file records the other's lines only as StoreLink confirms them.
	sl := &storeLink{}
	// A kept conflict makes each compaction rename, which the other must
	// follow.
	held := sending(t, db, "k-held", 1)
	if _, err := db.Finish(ctx, held.IdempotencyKey, state.StateRaised, "RO-47-900001", "", "", base); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(accepted(held, "RO-47-999999")); err != nil {
		t.Fatal(err)
	}
	const per = 20
	var wg sync.WaitGroup
	for w, j := range []*journal.File{a, b} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range per {
				e := sending(t, db, fmt.Sprintf("k-%d-%02d", w, i), int64(100*(w+1)+i))
				sl.hold(fmt.Sprintf("RO-47-%d%05d", w, i), e)
				if err := j.Append(accepted(e, fmt.Sprintf("RO-47-%d%05d", w, i))); err != nil {
					t.Error(err)
					return
				}
				if _, err := j.Replay(ctx, db, sl, base.Add(time.Minute)); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	rep, err := a.Replay(ctx, db, sl, base.Add(time.Hour))
	if err != nil || len(rep.Conflicts) != 1 || len(rep.Pending) != 0 {
		t.Fatalf("final replay: %+v %v", rep, err)
	}
	for w := range 2 {
		for i := range per {
			key := fmt.Sprintf("k-%d-%02d", w, i)
			if got := get(t, db, key); got.State != state.StateRaised || got.OrderID != fmt.Sprintf("RO-47-%d%05d", w, i) {
				t.Fatalf("%s: %+v", key, got)
			}
		}
	}
	if l := lines(t, path); len(l) != 1 || !strings.Contains(l[0], "RO-47-999999") {
		t.Fatalf("journal: %q", l)
	}
}

// flaky fails its writes while down, as a database that went away does.
type flaky struct {
	state.Store
	mu     sync.Mutex
	down   bool
	failN  int
	writes int
}

func (f *flaky) fail() error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.writes++
	if f.down || f.failN > 0 {
		f.failN--
		return fmt.Errorf("%w: injected outage", state.ErrUnavailable)
	}
	return nil
}

func (f *flaky) Apply(ctx context.Context, key string, ev state.Event, ch state.Change, now time.Time) (state.Entry, error) {
	if err := f.fail(); err != nil {
		return state.Entry{}, err
	}
	return f.Store.Apply(ctx, key, ev, ch, now)
}

func (f *flaky) setDown(down bool) {
	f.mu.Lock()
	f.down = down
	f.mu.Unlock()
}

var quick = journal.Backoff{First: time.Millisecond, Max: 4 * time.Millisecond, Budget: 50 * time.Millisecond}

// TestRecorderRetriesThenRecords: a ledger that fails a few times takes the
// outcome within the budget, and the journal is left empty.
func TestRecorderRetriesThenRecords(t *testing.T) {
	backends(t, func(t *testing.T, db state.Store) {
		f := &flaky{Store: db, failN: 3}
		path := filepath.Join(t.TempDir(), "outcomes.jsonl")
		r := &journal.Recorder{Ledger: f, Journal: open(t, path), Backoff: journal.Backoff{First: time.Millisecond, Max: 2 * time.Millisecond, Budget: time.Minute}}
		defer r.Close()
		e := sending(t, db, "k-flaky", 24)
		res := r.Record(context.Background(), accepted(e, "RO-47-000401"))
		if !res.Recorded || !res.Journaled || res.Err != nil || f.writes != 4 {
			t.Fatalf("record: %+v after %d writes", res, f.writes)
		}
		if got := get(t, db, "k-flaky"); got.State != state.StateRaised || got.OrderID != "RO-47-000401" {
			t.Fatalf("entry: %+v", got)
		}
		if l := lines(t, path); len(l) != 0 {
			t.Fatalf("journal after the recording: %q", l)
		}
	})
}

// TestRecorderKeepsWhatItCannotRecordAndDrains: past the budget the line
// stays in the journal, and the background drain records it later.
func TestRecorderKeepsWhatItCannotRecordAndDrains(t *testing.T) {
	backends(t, func(t *testing.T, db state.Store) {
		f := &flaky{Store: db, down: true}
		path := filepath.Join(t.TempDir(), "outcomes.jsonl")
		r := &journal.Recorder{Ledger: f, Journal: open(t, path), Backoff: quick, DrainEvery: 10 * time.Millisecond}
		defer r.Close()
		e := sending(t, db, "k-down", 24)
		res := r.Record(context.Background(), accepted(e, "RO-47-000501"))
		if res.Recorded || !res.Journaled || !errors.Is(res.Err, state.ErrUnavailable) {
			t.Fatalf("record while down: %+v", res)
		}
		if got := get(t, db, "k-down"); got.State != state.StateSending {
			t.Fatalf("entry while down: %+v", got)
		}
		if l := lines(t, path); len(l) != 1 || !strings.Contains(l[0], `"order_id":"RO-47-000501"`) {
			t.Fatalf("journal while down: %q", l)
		}
		f.setDown(false)
		deadline := time.Now().Add(10 * time.Second)
		for get(t, db, "k-down").State != state.StateRaised && time.Now().Before(deadline) {
			time.Sleep(5 * time.Millisecond)
		}
		if got := get(t, db, "k-down"); got.State != state.StateRaised || got.OrderID != "RO-47-000501" {
			t.Fatalf("the drain did not record the order: %+v", got)
		}
	})
}

// TestRecorderWithoutJournalStillRetries: without a journal the outcome is
// still retried.
func TestRecorderWithoutJournalStillRetries(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	f := &flaky{Store: db, down: true}
	// A budget of a second leaves room for the first attempt on a loaded
	// machine; the ledger stays down, so it never records.
	r := &journal.Recorder{Ledger: f, Backoff: journal.Backoff{First: time.Millisecond, Max: 20 * time.Millisecond, Budget: time.Second}}
	e := sending(t, db, "k-nojournal", 24)
	res := r.Record(context.Background(), accepted(e, "RO-47-000601"))
	if res.Recorded || res.Journaled || f.writes < 2 {
		t.Fatalf("record: %+v after %d writes", res, f.writes)
	}
}
