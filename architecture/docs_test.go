package architecture_test

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDocsIndexNamesEveryDocument: docs/README.md links every file and
// folder of docs/, so a newcomer finds each from one page.
func TestDocsIndexNamesEveryDocument(t *testing.T) {
	docs := filepath.Join(repoRoot(t), "docs")
	index := readFile(t, filepath.Join(docs, "README.md"))
	entries, err := os.ReadDir(docs)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		name := e.Name()
		if name == "README.md" {
			continue
		}
		if e.IsDir() {
			name += "/"
		}
		if !strings.Contains(index, "]("+name) {
			t.Errorf("docs/README.md does not link %s", name)
		}
	}
}

var adrRow = regexp.MustCompile(`(?m)^\| \[(\d{4})\]\(([^)]+)\) \| ([^|]+) \| (accepted|superseded by \d{4}|amended by \d{4}) \| ([^|]+) \|$`)

// TestDecisionTableListsEveryRecord: docs/decisions/README.md has one row
// per ADR, with the record's file, its title as written in the record, a
// status and when to revisit it; every record has a "Revisit when" section.
func TestDecisionTableListsEveryRecord(t *testing.T) {
	dir := filepath.Join(repoRoot(t), "docs", "decisions")
	rows := map[string][]string{}
	for _, m := range adrRow.FindAllStringSubmatch(readFile(t, filepath.Join(dir, "README.md")), -1) {
		rows[m[2]] = m
	}
	records, _ := filepath.Glob(filepath.Join(dir, "[0-9][0-9][0-9][0-9]-*.md"))
	if len(records) < 30 || len(rows) != len(records) {
		t.Fatalf("%d records, %d table rows: want one row per record", len(records), len(rows))
	}
	for _, path := range records {
		file := filepath.Base(path)
		text := readFile(t, path)
		title, _, _ := strings.Cut(text, "\n")
		row, ok := rows[file]
		switch {
		case !ok:
			t.Errorf("%s has no row in the table", file)
		case row[1] != file[:4] || "# "+row[1]+". "+strings.TrimSpace(row[3]) != title:
			t.Errorf("%s: row %q does not match the record's title %q", file, row[0], title)
		}
		if !strings.Contains(text, "\n## Revisit when\n") {
			t.Errorf("%s has no \"## Revisit when\" section", file)
		}
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
