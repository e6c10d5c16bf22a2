package sqlite

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// The audit spool (ADR 0044). SpoolAudit appends a tool call's record as
// one JSON line to this process's spool file, with one write(2), before the
// answer; a mover inserts the lines into the audit table in group
// transactions and records, in the same transaction, the byte offset it
// moved to (table audit_spool). Readers return the table's rows and the
// lines after each spool's moved offset, both read in one snapshot.
//
// A spool lives in <database>-audit/ as <pid>-<random>.jsonl, locked
// (flock) by its process while it lives. A spool whose lock is free belongs
// to a process that ended without moving everything: Open moves its lines
// from the recorded offset and removes it.

// spoolInterval is how long the mover lets records gather before it moves
// them; spoolBatch bounds one move's transaction. A move's cost is mostly
// its transaction's begin and commit, whatever its rows: 100 ms instead of
// 25 halved the mover's share of a risk check's CPU (ADR 0044, amended).
const (
	spoolInterval = 100 * time.Millisecond
	spoolBatch    = state.MaxAuditGroup
)

// spoolExt names a spool in use; a spool is created under spoolTmpExt and
// renamed once locked, so no other process can take a spool whose owner
// has not yet locked it.
const (
	spoolExt    = ".jsonl"
	spoolTmpExt = ".tmp"
)

// Outcome codes of the rows that stand for spool lines the mover could not
// insert as they were.
const (
	// SpoolBadLine is a spool line that is not a whole audit record.
	SpoolBadLine = "AUDIT_SPOOL_BAD_LINE"
	// SpoolRowRefused is a record the database refused to insert.
	SpoolRowRefused = "AUDIT_SPOOL_ROW_REFUSED"
	// SpoolTool is the tool name of those rows.
	SpoolTool = "audit.spool"
)

// maxKeptLine bounds, in bytes, the line buffer kept for the next record.
const maxKeptLine = 64 << 10

// maxBadLineShown bounds, in bytes, how much of a bad line its row quotes.
const maxBadLineShown = 2000

// errNoSpool sends a record to the table's group commit instead: the
// system has no flock, or the spool could not be created or written.
var errNoSpool = errors.New("state: audit spool unavailable")

// spoolMovedSQL records how far a spool has been moved.
const spoolMovedSQL = `INSERT INTO audit_spool (name, moved) VALUES (?, ?)
	ON CONFLICT (name) DO UPDATE SET moved = excluded.moved`

// spool is this process's spool file and its mover.
type spool struct {
	db  *DB
	dir string

	mu   sync.Mutex
	f    *os.File
	name string
	// off is the file's length: every line written ends there.
	off int64
	// pending holds the records written and not yet moved, oldest first.
	pending []spooled
	// line holds the line being written (appendAuditLine), reused.
	line []byte
	// broken is set once the spool cannot be written; later records go
	// to the table.
	broken bool
	closed bool

	// wake tells the mover a record is pending; full that a batch is.
	wake chan struct{}
	full chan struct{}
	stop chan struct{}
	done chan struct{}
}

// spooled is a record written to the spool; end is the offset after its
// line.
type spooled struct {
	rec state.AuditRecord
	end int64
}

func newSpool(db *DB) *spool {
	s := &spool{db: db, dir: spoolDir(db.path),
		wake: make(chan struct{}, 1), full: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	return s
}

// spoolDir is the directory of the spools of the database at path.
func spoolDir(path string) string { return path + "-audit" }

// SpoolAudit implements state.AuditSpooler: it appends r to this process's
// spool and returns once the line is written (ADR 0044). A zero Time is
// recorded as now. Where the spool cannot be used, r is committed to the
// table as RecordAudit does.
func (db *DB) SpoolAudit(ctx context.Context, r state.AuditRecord) error {
	if r.Time.IsZero() {
		r.Time = time.Now()
	}
	r.Time = r.Time.UTC()
	err := db.spool.append(r)
	if errors.Is(err, errNoSpool) {
		return db.audit.Record(ctx, r)
	}
	return err
}

// append writes r's line and queues it for the mover.
func (s *spool) append(r state.AuditRecord) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return state.ErrAuditClosed
	}
	if s.broken || !spoolSupported {
		return errNoSpool
	}
	if s.f == nil {
		if err := s.create(); err != nil {
			s.broken = true
			slog.Default().Error("audit.spool_failed", "step", "create", "spool", s.dir, "error", err.Error())
			return errNoSpool
		}
		go s.run()
	}
	line, err := appendAuditLine(s.line[:0], &r) // the line and its newline
	if err != nil {
		// A value JSON cannot hold (a NaN duration): the table decides.
		return errNoSpool
	}
	if cap(line) <= maxKeptLine {
		s.line = line
	}
	if _, err := s.f.Write(line); err != nil {
		// Cut a partial line away so the next line starts clean; if
		// even that fails, write no more lines.
		if terr := s.f.Truncate(s.off); terr != nil {
			s.broken = true
		}
		slog.Default().Error("audit.spool_failed", "step", "write", "spool", s.name, "error", err.Error())
		return errNoSpool
	}
	s.off += int64(len(line))
	s.pending = append(s.pending, spooled{rec: r, end: s.off})
	switch len(s.pending) {
	case 1:
		signal(s.wake)
	case spoolBatch:
		signal(s.full)
	}
	return nil
}

func signal(c chan struct{}) {
	select {
	case c <- struct{}{}:
	default:
	}
}

// create makes and locks this process's spool.
func (s *spool) create() error {
	if err := os.MkdirAll(s.dir, 0o700); err != nil {
		return err
	}
	var rnd [8]byte
	_, _ = rand.Read(rnd[:])
	base := fmt.Sprintf("%d-%s", os.Getpid(), hex.EncodeToString(rnd[:]))
	tmp := filepath.Join(s.dir, base+spoolTmpExt)
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o600)
	if err != nil {
		return err
	}
	if ok, err := tryLock(f); err != nil || !ok {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("lock %s: %v", tmp, err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, base+spoolExt)); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return err
	}
	s.f, s.name = f, base+spoolExt
	return nil
}

// run is the mover, from the first record until close.
func (s *spool) run() {
	defer close(s.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	for {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == 0 {
			select {
			case <-s.wake:
			case <-s.stop:
				s.finish()
				return
			}
		}
		// Let the records of the next moments join this move.
		if n < spoolBatch {
			timer.Reset(spoolInterval)
			select {
			case <-timer.C:
			case <-s.full:
				timer.Stop()
			case <-s.stop:
				timer.Stop()
				s.finish()
				return
			}
		}
		if err := s.move(); err != nil {
			// The lines stay in the spool, and readers see them; try again.
			slog.Default().Error("audit.spool_failed", "step", "move", "spool", s.name, "error", err.Error())
			timer.Reset(spoolInterval)
			select {
			case <-timer.C:
			case <-s.stop:
				timer.Stop()
				s.finish()
				return
			}
		}
	}
}

// move moves up to spoolBatch pending records in one transaction.
func (s *spool) move() error {
	s.mu.Lock()
	n := min(len(s.pending), spoolBatch)
	batch := s.pending[:n:n]
	s.mu.Unlock()
	if n == 0 {
		return nil
	}
	recs := make([]state.AuditRecord, n)
	for i := range batch {
		recs[i] = batch[i].rec
	}
	if err := s.db.moveSpooled(context.Background(), s.name, recs, batch[n-1].end); err != nil {
		return err
	}
	s.mu.Lock()
	if len(s.pending) == n {
		s.pending = s.pending[:0]
	} else {
		s.pending = s.pending[n:]
	}
	s.mu.Unlock()
	return nil
}

// finish moves what is pending and, if all of it moved, removes the
// spool; what could not be moved stays for the next Open.
func (s *spool) finish() {
	for {
		s.mu.Lock()
		n := len(s.pending)
		s.mu.Unlock()
		if n == 0 {
			break
		}
		if err := s.move(); err != nil {
			slog.Default().Error("audit.spool_failed", "step", "move", "spool", s.name, "error", err.Error())
			return
		}
	}
	if err := s.db.removeSpool(context.Background(), filepath.Join(s.dir, s.name), s.name); err != nil {
		slog.Default().Error("audit.spool_failed", "step", "remove", "spool", s.name, "error", err.Error())
	}
}

// close stops new records, moves the pending ones, and releases the spool.
func (s *spool) close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	f := s.f
	s.mu.Unlock()
	if f == nil {
		return
	}
	close(s.stop)
	<-s.done
	_ = f.Close()
}

// removeSpool removes a spool whose every line is in the table, then its
// offset row. The order matters: a spool file without a row would be
// replayed from its start.
func (db *DB) removeSpool(ctx context.Context, path, name string) error {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return db.write(ctx, func(tx *sql.Tx) error {
		_, err := tx.ExecContext(ctx, `DELETE FROM audit_spool WHERE name = ?`, name)
		return err
	})
}

// moveSpooled inserts recs, the lines of spool name up to offset end, and
// records end, in one transaction. A record the database refuses is
// inserted as a row that says so and quotes it, so the spool moves on.
func (db *DB) moveSpooled(ctx context.Context, name string, recs []state.AuditRecord, end int64) error {
	release, err := db.lockWrite(ctx)
	if err != nil {
		return err
	}
	defer release()
	for range len(recs) + 1 {
		err := db.moveTx(ctx, name, recs, end)
		var row *state.AuditRowError
		if err == nil || !errors.As(err, &row) || row.Index < 0 || row.Index >= len(recs) || recs[row.Index].Tool == SpoolTool {
			return err
		}
		recs[row.Index] = refusedRow(name, recs[row.Index], row.Err)
	}
	return errors.New("state: move audit spool: every record refused")
}

func (db *DB) moveTx(ctx context.Context, name string, recs []state.AuditRecord, end int64) error {
	tx, err := db.sql.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("state: move audit spool %s: begin: %w", name, err)
	}
	stmt := tx.StmtContext(ctx, db.auditInsert)
	for i := range recs {
		r := &recs[i]
		if _, err := stmt.ExecContext(ctx,
			formatTime(r.Time), r.CallID, r.Client, r.Session, r.Tool, r.StoreID, r.SKU,
			r.Outcome, r.ErrorCode, r.Summary, r.DurationMS, r.TraceID); err != nil {
			_ = tx.Rollback()
			return &state.AuditRowError{Index: i, Err: fmt.Errorf("state: move audit record of call %s: %w", r.CallID, err)}
		}
	}
	if _, err := tx.StmtContext(ctx, db.spoolMoved).ExecContext(ctx, name, end); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("state: move audit spool %s: %w", name, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("state: move audit spool %s: commit: %w", name, err)
	}
	return nil
}

// refusedRow stands for r, which the database refused with err.
func refusedRow(name string, r state.AuditRecord, err error) state.AuditRecord {
	raw, _ := json.Marshal(&r)
	return state.AuditRecord{Time: r.Time, CallID: r.CallID, Client: "storelink-mcp", Tool: SpoolTool, Outcome: "error", ErrorCode: SpoolRowRefused,
		Summary: fmt.Sprintf("The database refused an audit record from spool %s (%v); the record as spooled: %s", name, err, bounded(raw))}
}

// badLineRow stands for an unreadable line of spool name at offset at.
func badLineRow(name string, at int64, raw []byte, err error) state.AuditRecord {
	return state.AuditRecord{Time: time.Now().UTC(), CallID: fmt.Sprintf("spool-%s-%d", strings.TrimSuffix(name, spoolExt), at),
		Client: "storelink-mcp", Tool: SpoolTool, Outcome: "error", ErrorCode: SpoolBadLine,
		Summary: fmt.Sprintf("Audit spool %s holds an unreadable line at byte %d (%v); the line as read: %q", name, at, err, bounded(raw))}
}

func bounded(b []byte) []byte {
	if len(b) > maxBadLineShown {
		return b[:maxBadLineShown]
	}
	return b
}

// parseLine reads one spool line, without its newline.
func parseLine(line []byte) (state.AuditRecord, error) {
	var r state.AuditRecord
	if err := json.Unmarshal(line, &r); err != nil {
		return r, err
	}
	if r.Time.IsZero() {
		return r, errors.New("no time")
	}
	r.Time = r.Time.UTC()
	return r, nil
}
