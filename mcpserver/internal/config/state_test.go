package config

import (
	"fmt"
	"strings"
	"testing"
)

func TestStatePathDefaults(t *testing.T) {
	tests := []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{"XDG_STATE_HOME": "/xdg", "HOME": "/h"}, "/xdg/storelink-mcp/state.db"},
		{map[string]string{"XDG_STATE_HOME": "relative/dir", "HOME": "/h"}, "/h/.local/state/storelink-mcp/state.db"},
		{map[string]string{"STATE_DB_PATH": "./state.db", "HOME": "/h"}, "./state.db"},
	}
	for _, tt := range tests {
		c, err := Load(env(tt.env), noFiles)
		if err != nil || c.StatePath != tt.want {
			t.Errorf("Load(%v).StatePath = %v, %v; want %q", tt.env, c, err, tt.want)
		}
	}
}

func TestStateDatabaseURL(t *testing.T) {
	const url = "postgres://storelink:s3cr3t-pw@db.internal:5432/storelink?sslmode=require"
	got, err := Load(env(map[string]string{"STATE_DATABASE_URL_FILE": "/run/secrets/db", "STATE_DATABASE_MAX_CONNS": "4"}),
		files(map[string]string{"/run/secrets/db": url + "\n"}))
	if err != nil {
		t.Fatal(err)
	}
	if got.StateDatabaseURL != url || got.StatePath != "" || got.StateMaxConns != 4 {
		t.Errorf("got url %q path %q conns %d; want the URL, no SQLite path and 4", got.StateDatabaseURL, got.StatePath, got.StateMaxConns)
	}
	if s := fmt.Sprintf("%v %s %+v", got, got, got); strings.Contains(s, "s3cr3t-pw") || !strings.Contains(s, "db.internal:5432") {
		t.Errorf("the summary shows the password or hides the host: %s", s)
	}
	if r := RedactURL("postgresql://u@h/db?password=s3cr3t-pw"); strings.Contains(r, "s3cr3t-pw") {
		t.Errorf("RedactURL kept a password= parameter: %s", r)
	}
	for _, tc := range []struct{ env map[string]string }{
		{map[string]string{"STATE_DATABASE_URL": "mysql://u:s3cr3t-pw@h/db", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": "postgres://u:s3cr3t-pw@/db", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": "postgres://u:s3cr3t-pw@h", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": "postgres://u:s3cr3t-pw@h:port/db", "HOME": "/h"}},
		{map[string]string{"STATE_DATABASE_URL": url, "STATE_DB_PATH": "/var/lib/x.db"}},
		{map[string]string{"STATE_DATABASE_URL": url, "STATE_DATABASE_URL_FILE": "/run/secrets/db"}},
		{map[string]string{"STATE_DATABASE_URL": url, "STATE_DATABASE_MAX_CONNS": "0"}},
	} {
		_, err := Load(env(tc.env), noFiles)
		if err == nil {
			t.Errorf("%v: accepted", tc.env)
			continue
		}
		if strings.Contains(err.Error(), "s3cr3t-pw") {
			t.Errorf("%v: the error shows the password: %v", tc.env, err)
		}
	}
	// Without HOME or STATE_DB_PATH, SQLite has nowhere to live, but with
	// PostgreSQL it needs nowhere.
	if _, err := Load(env(map[string]string{"STATE_DATABASE_URL": url}), noFiles); err != nil {
		t.Errorf("PostgreSQL without HOME: %v", err)
	}
}

// TestJournalPath: the outcome journal lives beside the SQLite file, in the
// user's state directory with PostgreSQL, or where STATE_JOURNAL_PATH says;
// never in the state database's own files, and a deployment that can send
// orders without anywhere to keep their outcomes does not start.
func TestJournalPath(t *testing.T) {
	const pg = "postgres://storelink@db.internal:5432/storelink"
	for _, tc := range []struct {
		name string
		vars map[string]string
		want string
		err  string
	}{
		{"beside SQLite", map[string]string{"STATE_DB_PATH": "/srv/a/state.db"}, "/srv/a/state.db.outcomes.jsonl", ""},
		{"PostgreSQL, XDG", map[string]string{"STATE_DATABASE_URL": pg, "XDG_STATE_HOME": "/x", "HOME": "/h"}, "/x/storelink-mcp/outcomes.jsonl", ""},
		{"PostgreSQL, HOME", map[string]string{"STATE_DATABASE_URL": pg, "HOME": "/h"}, "/h/.local/state/storelink-mcp/outcomes.jsonl", ""},
		{"explicit", map[string]string{"STATE_DATABASE_URL": pg, "STATE_JOURNAL_PATH": "/vol/outcomes.jsonl"}, "/vol/outcomes.jsonl", ""},
		{"PostgreSQL, nowhere, read only", map[string]string{"STATE_DATABASE_URL": pg}, "", ""},
		{"PostgreSQL, nowhere, writes", map[string]string{"STATE_DATABASE_URL": pg, "ALLOW_WRITES": "true"}, "", "STATE_JOURNAL_PATH: neither it, XDG_STATE_HOME nor HOME is set"},
		{"the database itself", map[string]string{"STATE_DB_PATH": "/srv/a/state.db", "STATE_JOURNAL_PATH": "/srv/a/./state.db"}, "", "is the state database's own file"},
		{"its WAL", map[string]string{"STATE_DB_PATH": "/srv/a/state.db", "STATE_JOURNAL_PATH": "/srv/a/state.db-wal"}, "", "is the state database's own file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Load(env(tc.vars), noFiles)
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if c.JournalPath != tc.want {
				t.Errorf("journal %q, want %q", c.JournalPath, tc.want)
			}
		})
	}
}
