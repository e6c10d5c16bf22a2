package journal_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/journal"
	"github.com/korral/storelink/mcpserver/internal/state/sqlite"
)

// storeLink is a fake Confirmer holding orders by id, unreachable while
// down.
type storeLink struct {
	mu     sync.Mutex
	orders map[string]state.Entry
	down   error
	asked  []string
}

func (s *storeLink) hold(orderID string, e state.Entry) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.orders == nil {
		s.orders = map[string]state.Entry{}
	}
	s.orders[orderID] = e
}

func (s *storeLink) setDown(err error) {
	s.mu.Lock()
	s.down = err
	s.mu.Unlock()
}

func (s *storeLink) questions() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]string(nil), s.asked...)
}

func (s *storeLink) ConfirmOrder(_ context.Context, e state.Entry, orderID string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.asked = append(s.asked, orderID)
	if s.down != nil {
		return s.down
	}
	o, ok := s.orders[orderID]
	switch {
	case !ok:
		return &journal.NotConfirmedError{Reason: fmt.Sprintf("StoreLink holds no order %s at store %s", orderID, e.StoreID)}
	case o.StoreID != e.StoreID || o.SKU != e.SKU || o.QuantityUnits != e.QuantityUnits:
		return &journal.NotConfirmedError{Reason: fmt.Sprintf("order %s is for %d unit(s)", orderID, o.QuantityUnits)}
	}
	return nil
}

// forge appends raw to the journal file directly.
func forge(t *testing.T, path string, ls ...journal.Line) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, l := range ls {
		b := fmt.Sprintf(`{"v":1,"at":%q,"idempotency_key":%q,"attempt":%q,"event":"accepted","order_id":%q,"store_id":%q,"sku":%q,"quantity_units":%d}`+"\n",
			l.At.Format(time.RFC3339Nano), l.IdempotencyKey, l.Attempt.Format(time.RFC3339Nano), l.OrderID, l.StoreID, l.SKU, l.QuantityUnits)
		if _, err := f.WriteString(b); err != nil {
			t.Fatal(err)
		}
	}
}

// TestAcceptedLineIsRecordedOnlyWhenStoreLinkConfirmsIt: lines this process
// did not write are recorded only when StoreLink holds the matching order;
// forged or mismatched lines are conflicts, and while StoreLink is down the
// line waits, asked once per replay.
func TestAcceptedLineIsRecordedOnlyWhenStoreLinkConfirmsIt(t *testing.T) {
	backends(t, func(t *testing.T, db state.Store) {
		ctx := context.Background()
		path := filepath.Join(t.TempDir(), "outcomes.jsonl")
		j := open(t, path)
		sl := &storeLink{}
		forged := sending(t, db, "k-forged", 24)
		other := sending(t, db, "k-other", 36)
		genuine := sending(t, db, "k-genuine", 48)
		sl.hold("RO-47-000777", state.Entry{StoreID: "47", SKU: "8847291", QuantityUnits: 12})
		sl.hold("RO-47-000801", genuine)
		forge(t, path, accepted(forged, "RO-47-FORGED1"), accepted(other, "RO-47-000777"), accepted(genuine, "RO-47-000801"))

		// StoreLink down: every line waits; StoreLink is asked once.
		sl.setDown(errors.New("UPSTREAM_UNAVAILABLE: connection refused"))
		rep, err := j.Replay(ctx, db, sl, base.Add(time.Minute))
		if err != nil || rep.Recorded != 0 || len(rep.Unconfirmed) != 3 || rep.ConfirmCause == nil || rep.Clean() {
			t.Fatalf("replay while StoreLink is down: %+v %v", rep, err)
		}
		if q := sl.questions(); len(q) != 1 {
			t.Fatalf("StoreLink asked %v while down, want once", q)
		}
		if p := rep.Unconfirmed[0]; p.Number != 1 || !strings.Contains(p.Reason, "waits until StoreLink confirms it") {
			t.Fatalf("unconfirmed: %+v", p)
		}

		sl.setDown(nil)
		rep, err = j.Replay(ctx, db, sl, base.Add(2*time.Minute))
		if err != nil || rep.Recorded != 1 || len(rep.Conflicts) != 2 || len(rep.Unconfirmed) != 0 {
			t.Fatalf("replay: %+v %v", rep, err)
		}
		for i, want := range []string{"StoreLink holds no order RO-47-FORGED1", "order RO-47-000777 is for 12 unit(s)"} {
			if p := rep.Conflicts[i]; p.Number != i+1 || !strings.Contains(p.Reason, "StoreLink does not confirm it") || !strings.Contains(p.Reason, want) {
				t.Errorf("conflict %d: %+v, want %q", i, p, want)
			}
		}
		for _, key := range []string{"k-forged", "k-other"} {
			if got := get(t, db, key); got.State != state.StateSending || got.OrderID != "" {
				t.Fatalf("an unconfirmed order was recorded: %+v", got)
			}
		}
		if got := get(t, db, "k-genuine"); got.State != state.StateRaised || got.OrderID != "RO-47-000801" {
			t.Fatalf("the confirmed order: %+v", got)
		}
		if l := lines(t, path); len(l) != 2 || !strings.Contains(l[0], "RO-47-FORGED1") {
			t.Fatalf("journal: %q", l)
		}
	})
}

// TestWithoutConfirmerForeignAcceptedLinesWait: without a Confirmer only
// this process's own accepted lines are recorded.
func TestWithoutConfirmerForeignAcceptedLinesWait(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	j := open(t, path)
	foreign, mine := sending(t, db, "k-foreign", 24), sending(t, db, "k-mine", 36)
	forge(t, path, accepted(foreign, "RO-47-000901"))
	if err := j.Append(accepted(mine, "RO-47-000902")); err != nil {
		t.Fatal(err)
	}
	rep, err := j.Replay(context.Background(), db, nil, base.Add(time.Minute))
	if err != nil || rep.Recorded != 1 || len(rep.Unconfirmed) != 1 || !strings.Contains(rep.ConfirmCause.Error(), "does not read orders back") {
		t.Fatalf("replay: %+v %v", rep, err)
	}
	if got := get(t, db, "k-foreign"); got.State != state.StateSending {
		t.Fatalf("an unconfirmed order was recorded: %+v", got)
	}
	if got := get(t, db, "k-mine"); got.State != state.StateRaised {
		t.Fatalf("this process's own line: %+v", got)
	}
}

// TestRecorderDrainsUnconfirmedLinesOnceStoreLinkAnswers: a line waiting
// for StoreLink at start-up is recorded by the drain once confirmed.
func TestRecorderDrainsUnconfirmedLinesOnceStoreLinkAnswers(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	path := filepath.Join(t.TempDir(), "outcomes.jsonl")
	e := sending(t, db, "k-after-crash", 24)
	forge(t, mustCreate(t, path), accepted(e, "RO-47-001001"))
	sl := &storeLink{down: errors.New("connection refused")}
	sl.hold("RO-47-001001", e)
	r := &journal.Recorder{Ledger: db, Journal: open(t, path), Confirm: sl, Backoff: quick, DrainEvery: 10 * time.Millisecond}
	defer r.Close()
	rep, err := r.Replay(context.Background())
	if err != nil || len(rep.Unconfirmed) != 1 {
		t.Fatalf("replay at start: %+v %v", rep, err)
	}
	if got := get(t, db, "k-after-crash"); got.State != state.StateSending {
		t.Fatalf("recorded before StoreLink confirmed it: %+v", got)
	}
	sl.setDown(nil)
	deadline := time.Now().Add(10 * time.Second)
	for get(t, db, "k-after-crash").State != state.StateRaised && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if got := get(t, db, "k-after-crash"); got.State != state.StateRaised || got.OrderID != "RO-47-001001" {
		t.Fatalf("the drain did not record the confirmed order: %+v", got)
	}
}

func mustCreate(t *testing.T, path string) string {
	t.Helper()
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestOpenHoldsTheFileToItsRules: a journal others may access, a symlink,
// or a non-regular file is refused without change; a new journal is 0600.
func TestOpenHoldsTheFileToItsRules(t *testing.T) {
	dir := t.TempDir()
	unsafe := func(t *testing.T, path, problem, fix string) {
		t.Helper()
		_, err := journal.Open(path)
		var u *journal.UnsafeError
		if !errors.As(err, &u) || !strings.Contains(u.Problem, problem) || !strings.Contains(u.Fix, fix) || !strings.Contains(err.Error(), journal.Rule) {
			t.Fatalf("open %s: %v (%+v), want %q, fix %q", path, err, u, problem, fix)
		}
	}

	loose := filepath.Join(dir, "loose.jsonl")
	if err := os.WriteFile(loose, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, mode := range []os.FileMode{0o666, 0o640, 0o604} {
		if err := os.Chmod(loose, mode); err != nil {
			t.Fatal(err)
		}
		unsafe(t, loose, fmt.Sprintf("has mode %04o", mode), "chmod 600 "+loose)
		if st, _ := os.Stat(loose); st.Mode().Perm() != mode {
			t.Fatalf("the refusal changed the mode to %v", st.Mode())
		}
	}

	target := filepath.Join(dir, "real.jsonl")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	unsafe(t, link, "is a symbolic link (to "+target+")", "STATE_JOURNAL_PATH="+target)
	dangling := filepath.Join(dir, "dangling.jsonl")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.jsonl"), dangling); err != nil {
		t.Fatal(err)
	}
	unsafe(t, dangling, "is a symbolic link", "rm "+dangling)
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere.jsonl")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a link's target was created: %v", err)
	}

	fifo := filepath.Join(dir, "fifo.jsonl")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	unsafe(t, fifo, "is not a regular file", "regular file")

	// A world-writable directory without the sticky bit is refused; with
	// it, or group-writable only, it is accepted.
	shared := filepath.Join(dir, "shared")
	if err := os.Mkdir(shared, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		mode os.FileMode
		ok   bool
	}{{0o777, false}, {0o703, false}, {0o777 | os.ModeSticky, true}, {0o770, true}} {
		if err := os.Chmod(shared, c.mode); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(shared, "outcomes.jsonl")
		if c.ok {
			open(t, path).Close()
			continue
		}
		unsafe(t, path, "lets other users replace the journal", "chmod o-w "+shared)
	}

	fresh := filepath.Join(dir, "new", "outcomes.jsonl")
	open(t, fresh)
	if st, err := os.Stat(fresh); err != nil || st.Mode().Perm() != 0o600 || !st.Mode().IsRegular() {
		t.Fatalf("new journal: %v %v", st.Mode(), err)
	}
}

// TestALinkPutInTheJournalsPlaceIsNotFollowed: a symlink replacing an open
// journal's path is neither appended through nor replayed.
func TestALinkPutInTheJournalsPlaceIsNotFollowed(t *testing.T) {
	db, err := sqlite.Open(filepath.Join(t.TempDir(), "state.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	dir := t.TempDir()
	path := filepath.Join(dir, "outcomes.jsonl")
	j := open(t, path)
	e := sending(t, db, "k-swapped", 24)
	other := filepath.Join(dir, "other.jsonl")
	if err := os.WriteFile(other, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	forge(t, other, accepted(e, "RO-47-FORGED2"))
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(other, path); err != nil {
		t.Fatal(err)
	}
	var u *journal.UnsafeError
	if err := j.Append(accepted(e, "RO-47-001101")); !errors.As(err, &u) {
		t.Fatalf("append through a link: %v", err)
	}
	if _, err := j.Replay(context.Background(), db, nil, base); !errors.As(err, &u) {
		t.Fatalf("replay through a link: %v", err)
	}
	if got := get(t, db, "k-swapped"); got.State != state.StateSending {
		t.Fatalf("entry: %+v", got)
	}
	if l := lines(t, other); len(l) != 1 {
		t.Fatalf("the link's target was written: %q", l)
	}
}
