package postgres

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/korral/storelink/mcpserver/internal/state"
	"github.com/korral/storelink/mcpserver/internal/state/statetest"
)

// waitBacklog waits until db's audit group holds queued records waiting
// and inFlight being written.
func waitBacklog(db *DB, queued, inFlight int) {
	statetest.WaitAuditBacklog(db.audit, queued, inFlight)
}

// A record the server refuses fails its own call only: the rest of its
// group, one pipeline, is written again without it.
func TestRecordAuditRefusedRowFailsAlone(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	url := statetest.PostgresURL(t)
	db, err := Open(ctx, url, Options{MaxConns: 4})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	const refused = "c-3"
	if _, err := db.pool.Exec(ctx, `ALTER TABLE audit ADD CONSTRAINT refuse CHECK (call_id <> '`+refused+`')`); err != nil {
		t.Fatal(err)
	}
	// Another session's table lock holds the writer's first INSERT, so the
	// calls after it queue up as one group.
	locker, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer locker.Close(ctx)
	lock, err := locker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.Exec(ctx, `LOCK TABLE audit IN EXCLUSIVE MODE`); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	errs := map[string]error{}
	record := func(id string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := db.RecordAudit(ctx, state.AuditRecord{CallID: id, Tool: "t", Outcome: state.OutcomeOK})
			mu.Lock()
			errs[id] = err
			mu.Unlock()
		}()
	}
	record("blocker")
	waitBacklog(db, 0, 1)
	const calls = 8
	for i := range calls {
		record(fmt.Sprintf("c-%d", i))
	}
	waitBacklog(db, calls, 1)
	if err := lock.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	for id, err := range errs {
		if id == refused {
			if err == nil || !strings.Contains(err.Error(), "refuse") {
				t.Errorf("%s: err = %v, want the constraint's refusal", id, err)
			}
		} else if err != nil {
			t.Errorf("%s: %v", id, err)
		}
	}
	rows, err := db.QueryAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != calls {
		t.Errorf("%d rows, want %d (the blocker and every call but %s)", len(rows), calls, refused)
	}
	for _, r := range rows {
		if r.CallID == refused {
			t.Errorf("the refused record was stored")
		}
	}
}
