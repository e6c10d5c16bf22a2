package statetest

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// auditConcurrent records from many goroutines through two handles, both
// ways where a backend spools: each record is stored once and readable
// from a fresh handle when RecordAudit (SpoolAudit) returns, while the
// spools are being moved.
func auditConcurrent(t *testing.T, o Opener) {
	ctx := ctxOf(t)
	s, reopen := o(t)
	other, fresh := reopen(), reopen()
	const writers, each = 40, 10
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			record := recordVia([]state.Store{s, other}[w%2], w/2)
			for i := range each {
				id := fmt.Sprintf("w%d-%d", w, i)
				if err := record(ctx, state.AuditRecord{Time: base, CallID: id, Tool: "t", Outcome: state.OutcomeOK}); err != nil {
					errs <- err
					return
				}
				got, err := fresh.QueryAudit(ctx, state.AuditFilter{CallID: id})
				if err != nil || len(got) != 1 {
					errs <- fmt.Errorf("RecordAudit(%s) returned, and a fresh handle reads %d such rows (%v)", id, len(got), err)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	all, err := fresh.QueryAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range all {
		seen[r.CallID]++
	}
	for w := range writers {
		for i := range each {
			if id := fmt.Sprintf("w%d-%d", w, i); seen[id] != 1 {
				t.Errorf("%s stored %d times, want once", id, seen[id])
			}
		}
	}
	if len(all) != writers*each {
		t.Errorf("%d rows, want %d", len(all), writers*each)
	}
}

// crashEnv names, in the re-executed child, the database it records into.
const crashEnv = "STATETEST_AUDIT_CRASH_TARGET"

// crashSpoolEnv, set in the child, makes it record with SpoolAudit.
const crashSpoolEnv = "STATETEST_AUDIT_CRASH_SPOOL"

// crashLine prefixes each call id the child prints after RecordAudit.
const crashLine = "recorded "

// AuditSurvivesKill checks that no call is answered without its audit row.
// The test binary re-runs itself as a child that records a burst into the
// database newTarget made, printing each call id after RecordAudit returns;
// the parent SIGKILLs it mid-burst and requires a row for every printed id.
// open opens the named database in parent and child.
func AuditSurvivesKill(t *testing.T, newTarget func(t *testing.T) string, open func(t testing.TB, target string) state.Store) {
	auditSurvivesKill(t, newTarget, open, false)
}

// AuditSpoolSurvivesKill is AuditSurvivesKill with the child recording
// through SpoolAudit: every call answered before the kill has one row once
// the database is opened again.
func AuditSpoolSurvivesKill(t *testing.T, newTarget func(t *testing.T) string, open func(t testing.TB, target string) state.Store) {
	auditSurvivesKill(t, newTarget, open, true)
}

func auditSurvivesKill(t *testing.T, newTarget func(t *testing.T) string, open func(t testing.TB, target string) state.Store, spool bool) {
	if target := os.Getenv(crashEnv); target != "" {
		crashChild(t, open(t, target), os.Getenv(crashSpoolEnv) != "")
		return
	}
	target := newTarget(t)
	// Migrate in the parent first, as a running server would have.
	_ = open(t, target)

	cmd := exec.Command(os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count", "1")
	cmd.Env = append(os.Environ(), crashEnv+"="+target)
	if spool {
		cmd.Env = append(cmd.Env, crashSpoolEnv+"=1")
	}
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	const killAfter = 400
	var answered []string
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		id, ok := strings.CutPrefix(sc.Text(), crashLine)
		if !ok {
			continue
		}
		answered = append(answered, id)
		if len(answered) == killAfter {
			if err := cmd.Process.Kill(); err != nil {
				t.Fatal(err)
			}
		}
	}
	// Output printed before death is still read to the pipe's end.
	waitErr := cmd.Wait()
	if len(answered) < killAfter {
		t.Fatalf("the child printed %d ids and ended (%v) before it was killed", len(answered), waitErr)
	}

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rows, err := open(t, target).QueryAudit(ctx, state.AuditFilter{})
	if err != nil {
		t.Fatal(err)
	}
	stored := map[string]int{}
	for _, r := range rows {
		stored[r.CallID]++
	}
	missing := 0
	for _, id := range answered {
		if stored[id] != 1 {
			missing++
			if missing <= 10 {
				t.Errorf("call %s was answered, and its row is stored %d times", id, stored[id])
			}
		}
	}
	if missing > 0 {
		t.Errorf("%d of %d answered calls have no single row", missing, len(answered))
	}
	for id, n := range stored {
		if n != 1 {
			t.Errorf("call %s stored %d times", id, n)
		}
	}
	t.Logf("killed after %d answered calls; %d rows stored (the rest of the burst committed but not yet answered, or lost unanswered)", len(answered), len(rows))
}

// crashChildCalls bounds each of the child's goroutines.
const crashChildCalls = 2000

// crashChild records from 32 goroutines until killed, printing each call
// id after RecordAudit; it stops after crashChildCalls per goroutine.
func crashChild(t *testing.T, s state.Store, spool bool) {
	ctx := context.Background()
	record := s.RecordAudit
	if sp, ok := s.(state.AuditSpooler); ok && spool {
		record = sp.SpoolAudit
	} else if spool {
		t.Fatal("the store does not spool")
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range crashChildCalls {
				id := fmt.Sprintf("g%d-%d", g, i)
				if err := record(ctx, state.AuditRecord{CallID: id, Tool: "t", Outcome: state.OutcomeOK,
					Summary: "a call answered only once its row is stored"}); err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				fmt.Fprintln(w, crashLine+id)
				// Flush before the next call.
				err := w.Flush()
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
}

// WaitAuditBacklog waits until g holds queued records waiting and inFlight
// being written.
func WaitAuditBacklog(g *state.AuditGroup, queued, inFlight int) {
	for {
		q, f := g.Backlog()
		if q == queued && f == inFlight {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
