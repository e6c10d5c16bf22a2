//go:build unix

package sqlite

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// tableRows counts the audit table's rows, spools aside.
func tableRows(t *testing.T, db *DB, where string) int {
	t.Helper()
	var n int
	if err := db.sql.QueryRow(`SELECT COUNT(*) FROM audit ` + where).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// spoolFiles lists the spools beside db.
func spoolFiles(t *testing.T, db *DB) []string {
	t.Helper()
	names, err := listSpools(spoolDir(db.path))
	if err != nil {
		t.Fatal(err)
	}
	return names
}

func rec(id string, at time.Time) state.AuditRecord {
	return state.AuditRecord{Time: at, CallID: id, Client: "c", Tool: "t", StoreID: "47", Outcome: state.OutcomeOK, Summary: "s " + id, DurationMS: 1.5}
}

// TestSpoolIsReadAtOnceAndMovedOnClose: a spooled record is read at once
// by another handle, before it reaches the table; Close moves every
// record, removes the spool and its offset row.
func TestSpoolIsReadAtOnceAndMovedOnClose(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, reader := openAt(t, path), openAt(t, path)
	ctx := context.Background()
	const n = 300
	for i := range n {
		if err := db.SpoolAudit(ctx, rec(fmt.Sprintf("c%d", i), base.Add(time.Duration(i)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			if got, err := reader.QueryAudit(ctx, state.AuditFilter{CallID: "c0"}); err != nil || len(got) != 1 {
				t.Fatalf("the first spooled record, read at once: %v, %v", got, err)
			}
		}
	}
	if len(spoolFiles(t, db)) != 1 {
		t.Fatalf("spools: %v, want one", spoolFiles(t, db))
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	if got := spoolFiles(t, reader); len(got) != 0 {
		t.Errorf("spools after Close: %v", got)
	}
	if got := tableRows(t, reader, ""); got != n {
		t.Errorf("table rows after Close: %d, want %d", got, n)
	}
	var offsets int
	if err := reader.sql.QueryRow(`SELECT COUNT(*) FROM audit_spool`).Scan(&offsets); err != nil || offsets != 0 {
		t.Errorf("offset rows after Close: %d (%v), want none", offsets, err)
	}
	all, err := reader.QueryAudit(ctx, state.AuditFilter{})
	if err != nil || len(all) != n {
		t.Fatalf("QueryAudit after Close: %d rows, %v", len(all), err)
	}
	for i, r := range all {
		if want := rec(fmt.Sprintf("c%d", i), base.Add(time.Duration(i)*time.Millisecond)); r != want {
			t.Fatalf("row %d = %+v, want %+v", i, r, want)
		}
	}
}

// TestSpoolReadersDuringMoves: while one handle spools and its mover moves,
// readers on it and on another handle see every record answered before
// their read began, each once.
func TestSpoolReadersDuringMoves(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, other := openAt(t, path), openAt(t, path)
	ctx := context.Background()
	// The writer spools 60 rounds of 50 records, each round after a read
	// finished, so reads meet the mover at every stage.
	const rounds, each = 60, 50
	var answered atomic.Int64
	var wg sync.WaitGroup
	var readsDone, readersOut atomic.Int64
	stop := make(chan struct{})
	errs := make(chan error, 8)
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(stop)
		for i := range rounds * each {
			if i%each == 0 {
				for readsDone.Load() < int64(i/each) {
					if readersOut.Load() == 3 {
						return // every reader failed
					}
					time.Sleep(100 * time.Microsecond)
				}
			}
			// Some of them share an instant, as fast calls do.
			if err := db.SpoolAudit(ctx, rec(fmt.Sprintf("c%d", i), base.Add(time.Duration(i/3)*time.Microsecond))); err != nil {
				errs <- err
				return
			}
			answered.Store(int64(i + 1))
		}
	}()
	for _, r := range []*DB{db, other, other} {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer readersOut.Add(1)
			for {
				select {
				case <-stop:
					return
				default:
				}
				want := answered.Load()
				got, err := r.QueryAudit(ctx, state.AuditFilter{Tool: "t"})
				if err != nil {
					errs <- err
					return
				}
				seen := map[string]int{}
				for _, g := range got {
					seen[g.CallID]++
				}
				for i := range want {
					if id := fmt.Sprintf("c%d", i); seen[id] != 1 {
						errs <- fmt.Errorf("read %d: %s answered, read %d times (%d rows)", readsDone.Load(), id, seen[id], len(got))
						return
					}
				}
				for id, k := range seen {
					if k != 1 {
						errs <- fmt.Errorf("%s read %d times", id, k)
						return
					}
				}
				if want > 0 {
					readsDone.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	moved := tableRows(t, other, "")
	t.Logf("%d reads; %d of %d records in the table when the writer stopped", readsDone.Load(), moved, answered.Load())
}

// TestSpoolOrderEqualsTheTable: spooled records, some at the instant of a
// table row, read as the table holds them once moved, with a limit too.
func TestSpoolOrderEqualsTheTable(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	db, reader := openAt(t, path), openAt(t, path)
	ctx := context.Background()
	at := func(i int) time.Time { return base.Add(time.Duration(i%5) * time.Second) }
	for i := range 40 {
		r := rec(fmt.Sprintf("c%d", i), at(i))
		r.StoreID = []string{"47", "102"}[i%2]
		var err error
		if i%3 == 0 {
			err = db.RecordAudit(ctx, r)
		} else {
			err = db.SpoolAudit(ctx, r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	filters := []state.AuditFilter{{}, {Limit: 7}, {StoreID: "102"}, {StoreID: "47", Limit: 3}, {CallID: "c5"}, {Day: base}, {Day: base.AddDate(0, 0, 1)}}
	before := map[int][]state.AuditRecord{}
	for i, f := range filters {
		got, err := reader.QueryAudit(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		before[i] = got
	}
	if tableRows(t, reader, "") == 40 {
		t.Log("every record was moved before the reads: the spool's side was not exercised")
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	for i, f := range filters {
		got, err := reader.QueryAudit(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		if fmt.Sprint(got) != fmt.Sprint(before[i]) {
			t.Errorf("%+v: read from the spool\n%v\nread from the table\n%v", f, ids(before[i]), ids(got))
		}
	}
}

func ids(rs []state.AuditRecord) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.CallID
	}
	return out
}

// TestSpoolReplayIsExactAndReportsBadLines: a spool left by a process that
// ended is moved by the next Open from its recorded offset: the lines
// before it are not inserted twice, a bad line becomes a row saying so,
// the line after it is kept, and a line cut short by the crash is
// reported. A spool whose process lives is left alone and still read.
func TestSpoolReplayIsExactAndReportsBadLines(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	first := openAt(t, path)
	ctx := context.Background()
	dir := spoolDir(path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	line := func(id string, i int) string {
		b, err := json.Marshal(rec(id, base.Add(time.Duration(i)*time.Second)))
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	// A dead process's spool: two lines moved before it died, then three.
	moved := line("d0", 0) + line("d1", 1)
	dead := moved + line("d2", 2) + "{\"time\": not json}\n" + line("d4", 4) + `{"time":"2026-11-27T09:30:05Z","call_id":"d5","tool":"t`
	if err := os.WriteFile(filepath.Join(dir, "1-dead.jsonl"), []byte(dead), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := first.moveSpooled(ctx, "1-dead.jsonl",
		[]state.AuditRecord{rec("d0", base), rec("d1", base.Add(time.Second))}, int64(len(moved))); err != nil {
		t.Fatal(err)
	}
	// A live process's spool: locked.
	livePath := filepath.Join(dir, "2-live.jsonl")
	if err := os.WriteFile(livePath, []byte(line("l0", 10)), 0o600); err != nil {
		t.Fatal(err)
	}
	live, err := os.Open(livePath)
	if err != nil {
		t.Fatal(err)
	}
	defer live.Close()
	if ok, err := tryLock(live); !ok || err != nil {
		t.Fatalf("lock the live spool: %v %v", ok, err)
	}
	// Before any replay the dead spool's unmoved good lines are read.
	got, err := first.QueryAudit(ctx, state.AuditFilter{Tool: "t"})
	if err != nil || fmt.Sprint(ids(got)) != "[d0 d1 d2 d4 l0]" {
		t.Fatalf("before the replay: %v, %v", ids(got), err)
	}

	second := openAt(t, path)
	if names := spoolFiles(t, second); fmt.Sprint(names) != "[2-live.jsonl]" {
		t.Errorf("spools after the replay: %v, want the live one only", names)
	}
	if n := tableRows(t, second, `WHERE tool = 't'`); n != 4 {
		t.Errorf("%d rows of tool t in the table, want 4 (d0 d1 d2 d4)", n)
	}
	got, err = second.QueryAudit(ctx, state.AuditFilter{Tool: "t"})
	if err != nil || fmt.Sprint(ids(got)) != "[d0 d1 d2 d4 l0]" {
		t.Errorf("after the replay: %v, %v", ids(got), err)
	}
	bad, err := second.QueryAudit(ctx, state.AuditFilter{Tool: SpoolTool})
	if err != nil || len(bad) != 2 {
		t.Fatalf("rows of bad lines: %+v, %v; want 2", bad, err)
	}
	for i, want := range []string{"not json", `\"call_id\":\"d5\"`} {
		if bad[i].ErrorCode != SpoolBadLine || !strings.Contains(bad[i].Summary, "1-dead.jsonl") || !strings.Contains(bad[i].Summary, want) {
			t.Errorf("bad line %d's row: %+v, want %s quoting %s", i, bad[i], SpoolBadLine, want)
		}
	}
	var offsets int
	if err := second.sql.QueryRow(`SELECT COUNT(*) FROM audit_spool WHERE name = '1-dead.jsonl'`).Scan(&offsets); err != nil || offsets != 0 {
		t.Errorf("the removed spool's offset row: %d, %v", offsets, err)
	}
	// Once its process ends, the live spool is moved too.
	_ = live.Close()
	third := openAt(t, path)
	if names := spoolFiles(t, third); len(names) != 0 {
		t.Errorf("spools left: %v", names)
	}
	if n := tableRows(t, third, `WHERE tool = 't'`); n != 5 {
		t.Errorf("%d rows of tool t, want 5", n)
	}
}

// TestSpoolOfAnotherHandle: two handles, as two processes, each with its
// own spool; Report counts the records of both spools and the table once.
func TestSpoolOfAnotherHandle(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	a, b := openAt(t, path), openAt(t, path)
	ctx := context.Background()
	for i := range 10 {
		r := rec(fmt.Sprintf("c%d", i), base)
		r.DurationMS = float64(i + 1)
		if i%2 == 1 {
			r.Outcome, r.ErrorCode = "error", "NOT_FOUND"
		}
		var err error
		switch i % 3 {
		case 0:
			err = a.SpoolAudit(ctx, r)
		case 1:
			err = b.SpoolAudit(ctx, r)
		default:
			err = a.RecordAudit(ctx, r)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := len(spoolFiles(t, a)); n != 2 {
		t.Errorf("%d spools, want 2", n)
	}
	for _, db := range []*DB{a, b} {
		st, err := db.Report(ctx, state.AuditFilter{})
		if err != nil || len(st) != 1 || st[0].Calls != 10 || st[0].Errors != 5 || st[0].ErrorCodes["NOT_FOUND"] != 5 || st[0].P50 != 5 || st[0].P99 != 10 {
			t.Errorf("Report: %+v, %v", st, err)
		}
	}
}

// TestSpoolAuditAllocs bounds the allocations of one spooled record, so a
// heavier hand-off fails here. The spool is made without its mover, whose
// allocations would be counted too.
func TestSpoolAuditAllocs(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	db := openTemp(t)
	quiet := newSpool(db)
	if err := quiet.create(); err != nil {
		t.Fatal(err)
	}
	moving := db.spool
	db.spool = quiet
	t.Cleanup(func() {
		db.spool = moving
		_ = quiet.f.Close()
	})
	ctx := context.Background()
	r := rec("c", base)
	allocs := testing.AllocsPerRun(200, func() {
		if err := db.SpoolAudit(ctx, r); err != nil {
			t.Fatal(err)
		}
	})
	// 0 today: the line is appended into a reused buffer without
	// reflection (appendAuditLine). It was 2 with json.Encoder (the record,
	// which escaped to the encoder, and the time's text) and 3 with
	// json.Marshal's copy of the line. The pending slice's growth rounds
	// to 0.
	t.Logf("SpoolAudit: %.2f allocations per record", allocs)
	if allocs > 0 {
		t.Errorf("SpoolAudit: %.1f allocations per record, budget 0", allocs)
	}
	if len(quiet.pending) != 201 {
		t.Errorf("%d records pending, want 201", len(quiet.pending))
	}
}

// childEnv names, in the re-executed test binary, the database the child
// spools into.
const childEnv = "SQLITE_SPOOL_CHILD_DB"

// TestSpoolTwoProcesses: a second process spools into the same database
// and stays alive; this process reads its records and its own, each once,
// and leaves the live spool alone when it opens the database again. Once
// the child closes, its spool is gone and its rows are in the table.
func TestSpoolTwoProcesses(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		spoolChild(t, path)
		return
	}
	path := filepath.Join(t.TempDir(), "state.db")
	db := openAt(t, path)
	ctx := context.Background()
	const each = 500
	for i := range each {
		if err := db.SpoolAudit(ctx, rec(fmt.Sprintf("parent-%d", i), base.Add(time.Duration(i)*time.Millisecond))); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(os.Args[0], "-test.run", "^TestSpoolTwoProcesses$", "-test.count", "1")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	cmd.Stderr = os.Stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	sc := bufio.NewScanner(out)
	for sc.Scan() && sc.Text() != "spooled" {
	}
	check := func(when string, db *DB) {
		t.Helper()
		got, err := db.QueryAudit(ctx, state.AuditFilter{})
		if err != nil {
			t.Fatal(err)
		}
		seen := map[string]int{}
		for _, r := range got {
			seen[r.CallID]++
		}
		for _, who := range []string{"parent", "child"} {
			for i := range each {
				if id := fmt.Sprintf("%s-%d", who, i); seen[id] != 1 {
					t.Fatalf("%s: %s read %d times", when, id, seen[id])
				}
			}
		}
		if len(got) != 2*each {
			t.Errorf("%s: %d rows, want %d", when, len(got), 2*each)
		}
	}
	check("the child alive", db)
	again := openAt(t, path)
	check("opened again beside the live child", again)
	if n := len(spoolFiles(t, db)); n != 2 {
		t.Errorf("%d spools beside the live child, want 2 (its and ours)", n)
	}
	_ = stdin.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("the child: %v", err)
	}
	check("the child closed", db)
	if n := tableRows(t, db, `WHERE call_id LIKE 'child-%'`); n != each {
		t.Errorf("%d of the child's rows in the table after its Close, want %d", n, each)
	}
}

// spoolChild spools its records, says so, and closes when its stdin ends.
func spoolChild(t *testing.T, path string) {
	db, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 500 {
		if err := db.SpoolAudit(context.Background(), rec(fmt.Sprintf("child-%d", i), base.Add(time.Duration(i)*time.Millisecond+time.Microsecond))); err != nil {
			t.Fatal(err)
		}
	}
	fmt.Println("spooled")
	_, _ = io.Copy(io.Discard, os.Stdin)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}
