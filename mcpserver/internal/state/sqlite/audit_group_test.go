package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"

	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"
)

// holdWriteLock takes the process's write lock as a long write would, so
// that audit records queue behind it; the returned func releases it.
func holdWriteLock(t *testing.T, db *DB) func() {
	t.Helper()
	release, err := db.lockWrite(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	return release
}

// waitPending waits until n records are queued for the next audit batch.
func waitPending(db *DB, n int) {
	for {
		db.auditMu.Lock()
		k := 0
		if db.auditNext != nil {
			k = len(db.auditNext.recs)
		}
		db.auditMu.Unlock()
		if k == n {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

func TestRecordAuditGroupCommit(t *testing.T) {
	for _, tc := range []struct {
		name      string
		callers   int
		perCaller int
		// hold queues every caller behind a held write lock, so that all
		// of them land in one batch.
		hold bool
		// poison makes the insert of this call id fail.
		poison string
	}{
		{name: "one caller", callers: 1, perCaller: 5},
		{name: "one batch behind a held lock", callers: 8, perCaller: 1, hold: true},
		{name: "free-running callers", callers: 16, perCaller: 25},
		{name: "failing batch fails every caller", callers: 8, perCaller: 1, hold: true, poison: "c-3-0"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := testCtx(t)
			db := openTemp(t)
			// A second handle on the file sees only committed rows: a
			// caller finding its row there has returned after the commit.
			other := openAt(t, db.Path())
			if tc.poison != "" {
				if _, err := db.sql.ExecContext(ctx, `CREATE TRIGGER poison BEFORE INSERT ON audit
					WHEN NEW.call_id = '`+tc.poison+`' BEGIN SELECT RAISE(ABORT, 'poisoned'); END`); err != nil {
					t.Fatal(err)
				}
			}
			var release func()
			if tc.hold {
				release = holdWriteLock(t, db)
			}
			errs := make([]error, tc.callers)
			var returned sync.WaitGroup
			for c := range tc.callers {
				returned.Add(1)
				go func() {
					defer returned.Done()
					for i := range tc.perCaller {
						id := fmt.Sprintf("c-%d-%d", c, i)
						if err := db.RecordAudit(ctx, state.AuditRecord{CallID: id, Tool: "t", Outcome: state.OutcomeOK}); err != nil {
							errs[c] = err
							return
						}
						got, err := other.QueryAudit(ctx, state.AuditFilter{CallID: id})
						if err != nil || len(got) != 1 {
							errs[c] = fmt.Errorf("after RecordAudit(%s) returned, the committed trail holds %d such rows (%v)", id, len(got), err)
							return
						}
					}
				}()
			}
			if tc.hold {
				waitPending(db, tc.callers)
				if rows, err := other.QueryAudit(ctx, state.AuditFilter{}); err != nil || len(rows) != 0 {
					t.Fatalf("rows before the lock was released: %d (%v)", len(rows), err)
				}
				release()
			}
			returned.Wait()

			rows, err := other.QueryAudit(ctx, state.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if tc.poison != "" {
				for c, err := range errs {
					if err == nil || !strings.Contains(err.Error(), "poisoned") {
						t.Errorf("caller %d: err = %v, want the batch's failure", c, err)
					}
				}
				if len(rows) != 0 {
					t.Errorf("a failed batch left %d rows", len(rows))
				}
				return
			}
			for c, err := range errs {
				if err != nil {
					t.Errorf("caller %d: %v", c, err)
				}
			}
			seen := map[string]int{}
			for _, r := range rows {
				seen[r.CallID]++
			}
			for c := range tc.callers {
				for i := range tc.perCaller {
					if id := fmt.Sprintf("c-%d-%d", c, i); seen[id] != 1 {
						t.Errorf("call %s stored %d times, want once", id, seen[id])
					}
				}
			}
			if want := tc.callers * tc.perCaller; len(rows) != want {
				t.Errorf("trail holds %d rows, want %d", len(rows), want)
			}
		})
	}
}

// A caller that gives up while its record still waits for the lock takes
// the record back: it is told so, and the record is not written.
func TestRecordAuditCancelledWhileQueued(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	release := holdWriteLock(t, db)
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		gaveUp <- db.RecordAudit(cctx, state.AuditRecord{CallID: "gave-up", Tool: "t", Outcome: state.OutcomeOK})
	}()
	waitPending(db, 1)
	stayed := make(chan error, 1)
	go func() {
		stayed <- db.RecordAudit(ctx, state.AuditRecord{CallID: "stayed", Tool: "t", Outcome: state.OutcomeOK})
	}()
	waitPending(db, 2)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled caller: err = %v, want context.Canceled", err)
	}
	release()
	if err := <-stayed; err != nil {
		t.Fatal(err)
	}
	rows, err := db.QueryAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 1 || rows[0].CallID != "stayed" {
		t.Fatalf("trail = %+v, want only the call that stayed", rows)
	}
}
