package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Reading the trail with the spools (ADR 0044): the table's rows and the
// unmoved lines of every spool, from one snapshot.

// readFrom reads f from offset off to its end.
func readFrom(f *os.File, off int64) ([]byte, error) {
	if _, err := f.Seek(off, io.SeekStart); err != nil {
		return nil, err
	}
	return io.ReadAll(f)
}

// readAudit runs query in a read transaction that also reads how far each
// spool has been moved, then returns the spooled records after those
// offsets that f selects, in time order: the rows the table will hold
// once they are moved, none of them among those query read. A spool
// removed between the listing and the read (moved whole by then) makes it
// read again.
func (db *DB) readAudit(ctx context.Context, f state.AuditFilter, query func(tx *sql.Tx) error) ([]state.AuditRecord, error) {
	dir := spoolDir(db.path)
	for attempt := 0; ; attempt++ {
		// A line written before this call started is in a spool listed here.
		names, err := listSpools(dir)
		if err != nil {
			return nil, err
		}
		moved, err := db.snapshot(ctx, query)
		if err != nil {
			return nil, err
		}
		recs, gone, err := readSpools(dir, names, moved, f)
		if err != nil {
			return nil, err
		}
		if !gone {
			return recs, nil
		}
		if attempt == 20 {
			return nil, errors.New("state: read audit spools: spools kept vanishing while read")
		}
	}
}

// snapshot runs query and reads the spools' offsets in one read
// transaction.
func (db *DB) snapshot(ctx context.Context, query func(tx *sql.Tx) error) (map[string]int64, error) {
	tx, err := db.sql.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return nil, fmt.Errorf("state: read audit: begin: %w", err)
	}
	defer func() { _ = tx.Rollback() }()
	moved := map[string]int64{}
	rows, err := tx.QueryContext(ctx, `SELECT name, moved FROM audit_spool`)
	if err != nil {
		return nil, fmt.Errorf("state: read audit spools: %w", err)
	}
	for rows.Next() {
		var name string
		var off int64
		if err := rows.Scan(&name, &off); err != nil {
			_ = rows.Close()
			return nil, fmt.Errorf("state: read audit spools: %w", err)
		}
		moved[name] = off
	}
	if err := errors.Join(rows.Err(), rows.Close()); err != nil {
		return nil, fmt.Errorf("state: read audit spools: %w", err)
	}
	if err := query(tx); err != nil {
		return nil, err
	}
	return moved, nil
}

// readSpools reads the whole lines of the named spools after their moved
// offsets; gone reports a spool removed since it was listed. Bad lines are
// skipped here: the spool's replay records them.
func readSpools(dir string, names []string, moved map[string]int64, f state.AuditFilter) (recs []state.AuditRecord, gone bool, err error) {
	var start, end time.Time
	if !f.Day.IsZero() {
		start, end = state.AuditDay(f.Day)
	}
	for _, name := range names {
		file, err := os.Open(filepath.Join(dir, name))
		if errors.Is(err, fs.ErrNotExist) {
			return nil, true, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("state: read audit spool %s: %w", name, err)
		}
		data, err := readFrom(file, moved[name])
		_ = file.Close()
		if err != nil {
			return nil, false, fmt.Errorf("state: read audit spool %s: %w", name, err)
		}
		// A line still being written has no newline yet.
		data = data[:bytes.LastIndexByte(data, '\n')+1]
		for len(data) > 0 {
			var line []byte
			line, data, _ = bytes.Cut(data, []byte{'\n'})
			r, err := parseLine(line)
			if err != nil {
				continue
			}
			if (!start.IsZero() && (r.Time.Before(start) || !r.Time.Before(end))) ||
				(f.StoreID != "" && r.StoreID != f.StoreID) || (f.CallID != "" && r.CallID != f.CallID) || (f.Tool != "" && r.Tool != f.Tool) {
				continue
			}
			recs = append(recs, r)
		}
	}
	// Within a spool, lines are in the order the table will number them.
	slices.SortStableFunc(recs, func(a, b state.AuditRecord) int { return a.Time.Compare(b.Time) })
	return recs, false, nil
}
