package migrate

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
)

func TestLoadOrdersAndRefusesGaps(t *testing.T) {
	ms, err := Load(fstest.MapFS{
		"m/0002_b.sql": {Data: []byte("B")},
		"m/0001_a.sql": {Data: []byte("A")},
		"m/README.md":  {Data: []byte("not a migration")},
	}, "m")
	if err != nil {
		t.Fatal(err)
	}
	want := []Migration{{Version: 1, Name: "0001_a.sql", SQL: "A"}, {Version: 2, Name: "0002_b.sql", SQL: "B"}}
	if d := cmp.Diff(want, ms); d != "" {
		t.Errorf("Load (-want +got):\n%s", d)
	}
	for name, fsys := range map[string]fstest.MapFS{
		"gap":        {"m/0001_a.sql": {}, "m/0003_c.sql": {}},
		"duplicate":  {"m/0001_a.sql": {}, "m/0001_b.sql": {}},
		"unnumbered": {"m/initial.sql": {}},
		"zero":       {"m/0000_a.sql": {}},
	} {
		if _, err := Load(fsys, "m"); err == nil {
			t.Errorf("%s: Load accepted it", name)
		}
	}
}

// fakeTx records what Run executes; version is what Version selects.
type fakeTx struct {
	version int
	ran     []string
	fail    string
}

func (f *fakeTx) Exec(_ context.Context, q string, args ...any) error {
	f.ran = append(f.ran, strings.TrimSpace(fmt.Sprintln(append([]any{q}, args...)...)))
	if q == f.fail {
		return errors.New("boom")
	}
	return nil
}

func (f *fakeTx) QueryInt(_ context.Context, q string) (int, error) {
	f.ran = append(f.ran, q)
	return f.version, nil
}

var testBook = Book{
	Lock: "LOCK", Create: "CREATE", Version: "VERSION",
	Record: func(ctx context.Context, tx Tx, m Migration) error { return tx.Exec(ctx, "RECORD", m.Version) },
	Failed: func(m Migration, err error) error { return fmt.Errorf("at %s: %w", m.Name, err) },
}

var testMigrations = []Migration{{1, "0001_a.sql", "A"}, {2, "0002_b.sql", "B"}, {3, "0003_c.sql", "C"}}

func TestRunAppliesWhatIsMissing(t *testing.T) {
	tx := &fakeTx{version: 1}
	res, err := Run(context.Background(), tx, testMigrations, testBook)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(Result{From: 1, To: 3, Applied: []string{"0002_b.sql", "0003_c.sql"}}, res); d != "" {
		t.Errorf("Result (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"LOCK", "CREATE", "VERSION", "B", "RECORD 2", "C", "RECORD 3"}, tx.ran); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}

	tx = &fakeTx{version: 3}
	if res, err := Run(context.Background(), tx, testMigrations, testBook); err != nil || res.From != 3 || res.To != 3 || res.Applied != nil {
		t.Errorf("up to date: %+v, %v", res, err)
	}
}

func TestRunRefusesANewerSchema(t *testing.T) {
	tx := &fakeTx{version: 4}
	_, err := Run(context.Background(), tx, testMigrations, testBook)
	if err == nil || err.Error() != "schema version 4 is newer than this program understands (3); refusing to touch it" {
		t.Fatalf("err = %v", err)
	}
	if d := cmp.Diff([]string{"LOCK", "CREATE", "VERSION"}, tx.ran); d != "" {
		t.Errorf("statements (-want +got):\n%s", d)
	}
}

func TestRunReportsTheFailedMigration(t *testing.T) {
	tx := &fakeTx{fail: "B"}
	_, err := Run(context.Background(), tx, testMigrations, testBook)
	if err == nil || err.Error() != "at 0002_b.sql: boom" {
		t.Fatalf("err = %v", err)
	}
}
