package sqlite

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strings"

	"github.com/korral/storelink/mcpserver/internal/state"
)

// Replay of the spools of processes that ended (ADR 0044): Open moves
// what they left and removes them.

// listSpools returns the names of the spools in dir, sorted.
func listSpools(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("state: list audit spools: %w", err)
	}
	var out []string
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), spoolExt) && e.Type().IsRegular() {
			out = append(out, e.Name())
		}
	}
	return out, nil
}

// adoptSpools moves the spools of ended processes into the table and
// removes them.
func (db *DB) adoptSpools(ctx context.Context) error {
	if !spoolSupported {
		return nil
	}
	dir := spoolDir(db.path)
	names, err := listSpools(dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, name := range names {
		if err := db.adopt(ctx, dir, name); err != nil {
			errs = append(errs, fmt.Errorf("state: replay audit spool %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// adopt moves spool name if its process has ended.
func (db *DB) adopt(ctx context.Context, dir, name string) error {
	path := filepath.Join(dir, name)
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	if ok, err := tryLock(f); err != nil || !ok {
		return err // its process lives
	}
	// Another process may have moved and removed it while we waited.
	if linked, err := isLinked(f); err != nil || !linked {
		return err
	}
	var moved int64
	err = db.sql.QueryRowContext(ctx, `SELECT moved FROM audit_spool WHERE name = ?`, name).Scan(&moved)
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	data, err := readFrom(f, moved)
	if err != nil {
		return err
	}
	var recs []state.AuditRecord
	var ends []int64
	at := moved
	for len(data) > 0 {
		line, rest, whole := bytes.Cut(data, []byte{'\n'})
		end := at + int64(len(line))
		if whole {
			end++
		}
		r, perr := parseLine(line)
		if !whole {
			perr = errors.New("the line has no end: its process died writing it")
		}
		if perr != nil {
			slog.Default().Error("audit.spool_bad_line", "spool", name, "offset", at, "error", perr.Error())
			r = badLineRow(name, at, line, perr)
		}
		recs, ends = append(recs, r), append(ends, end)
		data, at = rest, end
	}
	for i := 0; i < len(recs); i += spoolBatch {
		j := min(i+spoolBatch, len(recs))
		if err := db.moveSpooled(ctx, name, recs[i:j], ends[j-1]); err != nil {
			return err
		}
	}
	return db.removeSpool(ctx, path, name)
}
