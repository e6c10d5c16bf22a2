package sqlite

import (
	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"

	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
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

// waitBacklog waits until db's audit group holds queued records waiting
// and inFlight being written.
func waitBacklog(db *DB, queued, inFlight int) {
	statetest.WaitAuditBacklog(db.audit, queued, inFlight)
}

// blockWriter holds the write lock and gives the audit writer one record,
// "blocker", which it takes and then waits with for the lock: records
// recorded next queue up as one group. Releasing the lock (the returned
// func) commits "blocker" and then that group; the blocker's own call
// must then succeed.
func blockWriter(t *testing.T, db *DB) (release func()) {
	t.Helper()
	ctx := testCtx(t)
	releaseLock := holdWriteLock(t, db)
	blocked := make(chan error, 1)
	go func() {
		blocked <- db.RecordAudit(ctx, state.AuditRecord{CallID: "blocker", Tool: "t", Outcome: state.OutcomeOK})
	}()
	waitBacklog(db, 0, 1)
	return func() {
		releaseLock()
		if err := <-blocked; err != nil {
			t.Errorf("blocker: %v", err)
		}
	}
}

// auditGroupCase is one run of concurrent RecordAudit callers.
type auditGroupCase struct {
	name      string
	callers   int
	perCaller int
	// hold queues every caller behind a held write lock and a record
	// in flight, so that all of them land in one group.
	hold bool
	// poison makes the insert of this call id fail.
	poison string
}

func TestRecordAuditGroupCommit(t *testing.T) {
	for _, tc := range []auditGroupCase{
		{name: "one caller", callers: 1, perCaller: 5},
		{name: "one batch behind a held lock", callers: 8, perCaller: 1, hold: true},
		{name: "free-running callers", callers: 16, perCaller: 25},
		{name: "a refused row fails its caller only", callers: 8, perCaller: 1, hold: true, poison: "c-3-0"},
		{name: "a refused row among free-running callers", callers: 16, perCaller: 25, poison: "c-5-7"},
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
			tc.record(t, db, other)
			rows, err := other.QueryAudit(ctx, state.AuditFilter{})
			if err != nil {
				t.Fatal(err)
			}
			tc.checkTrail(t, rows)
		})
	}
}

// record runs the callers, each recording its calls and finding each row
// committed once RecordAudit has returned; only the poisoned call fails.
func (tc auditGroupCase) record(t *testing.T, db, other *DB) {
	ctx := testCtx(t)
	var release func()
	if tc.hold {
		release = blockWriter(t, db)
	}
	errs := make([]error, tc.callers)
	var poisoned atomic.Bool
	var returned sync.WaitGroup
	for c := range tc.callers {
		returned.Go(func() {
			for i := range tc.perCaller {
				id := fmt.Sprintf("c-%d-%d", c, i)
				if err := db.RecordAudit(ctx, state.AuditRecord{CallID: id, Tool: "t", Outcome: state.OutcomeOK}); err != nil {
					if id != tc.poison || !strings.Contains(err.Error(), "poisoned") {
						errs[c] = err
						return
					}
					poisoned.Store(true)
					continue
				}
				got, err := other.QueryAudit(ctx, state.AuditFilter{CallID: id})
				if err != nil || len(got) != 1 {
					errs[c] = fmt.Errorf("after RecordAudit(%s) returned, the committed trail holds %d such rows (%v)", id, len(got), err)
					return
				}
			}
		})
	}
	if tc.hold {
		waitBacklog(db, tc.callers, 1)
		if rows, err := other.QueryAudit(ctx, state.AuditFilter{}); err != nil || len(rows) != 0 {
			t.Fatalf("rows before the lock was released: %d (%v)", len(rows), err)
		}
		release()
	}
	returned.Wait()
	if tc.poison != "" && !poisoned.Load() {
		t.Errorf("RecordAudit(%s) did not fail", tc.poison)
	}
	for c, err := range errs {
		if err != nil {
			t.Errorf("caller %d: %v", c, err)
		}
	}
}

// checkTrail checks every call but the poisoned one is stored once.
func (tc auditGroupCase) checkTrail(t *testing.T, rows []state.AuditRecord) {
	t.Helper()
	seen := map[string]int{}
	for _, r := range rows {
		seen[r.CallID]++
	}
	want := 0
	for c := range tc.callers {
		for i := range tc.perCaller {
			id, n := fmt.Sprintf("c-%d-%d", c, i), 1
			if id == tc.poison {
				n = 0
			}
			want += n
			if seen[id] != n {
				t.Errorf("call %s stored %d times, want %d", id, seen[id], n)
			}
		}
	}
	if tc.hold {
		want++ // the blocker
	}
	if len(rows) != want {
		t.Errorf("trail holds %d rows, want %d", len(rows), want)
	}
}

// A caller that gives up while its record still waits for the lock takes
// the record back: it is told so, and the record is not written.
func TestRecordAuditCancelledWhileQueued(t *testing.T) {
	ctx := testCtx(t)
	db := openTemp(t)
	release := blockWriter(t, db)
	cctx, cancel := context.WithCancel(ctx)
	gaveUp := make(chan error, 1)
	go func() {
		gaveUp <- db.RecordAudit(cctx, state.AuditRecord{CallID: "gave-up", Tool: "t", Outcome: state.OutcomeOK})
	}()
	waitBacklog(db, 1, 1)
	stayed := make(chan error, 1)
	go func() {
		stayed <- db.RecordAudit(ctx, state.AuditRecord{CallID: "stayed", Tool: "t", Outcome: state.OutcomeOK})
	}()
	waitBacklog(db, 2, 1)
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
	if len(rows) != 2 || rows[0].CallID != "blocker" || rows[1].CallID != "stayed" {
		t.Fatalf("trail = %+v, want the blocker and the call that stayed", rows)
	}
}
