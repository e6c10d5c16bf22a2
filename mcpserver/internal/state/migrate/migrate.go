// Package migrate applies a state backend's numbered .sql migrations in
// order in one transaction, and refuses a database newer than the program.
// Each backend supplies the transaction and its version bookkeeping.
package migrate

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// Migration is one numbered file of a backend's migrations directory.
type Migration struct {
	// Version is the file's number, the schema version it brings.
	Version int
	// Name is the file's base name, such as 0001_initial.sql.
	Name string
	// SQL is the file's text, executed as one script.
	SQL string
}

// Load returns the migrations dir/*.sql of fsys in order, refusing a gap
// or a duplicate number.
func Load(fsys fs.FS, dir string) ([]Migration, error) {
	names, err := fs.Glob(fsys, path.Join(dir, "*.sql"))
	if err != nil {
		return nil, err
	}
	var out []Migration
	for _, n := range names {
		base := path.Base(n)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v <= 0 {
			return nil, fmt.Errorf("migration %s: name must start with a positive number and an underscore", base)
		}
		b, err := fs.ReadFile(fsys, n)
		if err != nil {
			return nil, err
		}
		out = append(out, Migration{Version: v, Name: base, SQL: string(b)})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Version < out[j].Version })
	for i, m := range out {
		if m.Version != i+1 {
			return nil, fmt.Errorf("migration %s: expected number %d; the numbers must run 1, 2, 3… without gaps", m.Name, i+1)
		}
	}
	return out, nil
}

// Tx is the part of a transaction Run needs.
type Tx interface {
	// Exec runs query (several statements when it has no arguments).
	Exec(ctx context.Context, query string, args ...any) error
	// QueryInt runs query and returns the single integer it selects.
	QueryInt(ctx context.Context, query string) (int, error)
}

// Book is how a backend keeps the version of its schema.
type Book struct {
	// Lock, when not empty, is run first, so replicas migrate one at a
	// time.
	Lock string
	// Create makes the bookkeeping table if it is missing.
	Create string
	// Version selects the schema's current version, 0 for a new database.
	Version string
	// Record notes in the bookkeeping table that m has been applied.
	Record func(ctx context.Context, tx Tx, m Migration) error
	// Failed is the error returned when m itself fails with err.
	Failed func(m Migration, err error) error
}

// Result is what Run did.
type Result struct {
	// From and To are the schema versions before and after.
	From, To int
	// Applied names the migration files applied, in order.
	Applied []string
}

// Run applies the migrations the database lacks inside tx; the caller
// commits.
func Run(ctx context.Context, tx Tx, ms []Migration, b Book) (Result, error) {
	var res Result
	if b.Lock != "" {
		if err := tx.Exec(ctx, b.Lock); err != nil {
			return res, err
		}
	}
	if err := tx.Exec(ctx, b.Create); err != nil {
		return res, err
	}
	from, err := tx.QueryInt(ctx, b.Version)
	if err != nil {
		return res, err
	}
	res.From, res.To = from, from
	if from > len(ms) {
		return Result{}, fmt.Errorf("schema version %d is newer than this program understands (%d); refusing to touch it", from, len(ms))
	}
	for _, m := range ms[from:] {
		if err := tx.Exec(ctx, m.SQL); err != nil {
			return Result{}, b.Failed(m, err)
		}
		if err := b.Record(ctx, tx, m); err != nil {
			return Result{}, err
		}
		res.To = m.Version
		res.Applied = append(res.Applied, m.Name)
	}
	return res, nil
}
