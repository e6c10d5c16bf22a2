package config

import (
	"net/url"
	"path/filepath"
	"strings"
)

// state reads where the state lives: PostgreSQL (STATE_DATABASE_URL) or a
// SQLite file, and the outcome journal beside it.
func (l *loader) state(c *Config) {
	c.StateDatabaseURL = l.databaseURL("STATE_DATABASE_URL")
	if c.StateDatabaseURL == "" {
		c.StatePath = l.statePath()
	} else if l.getenv("STATE_DB_PATH") != "" {
		l.fail("STATE_DB_PATH and STATE_DATABASE_URL are both set: the state lives in one place; unset STATE_DB_PATH to use PostgreSQL")
	}
	c.JournalPath = l.journalPath(c)
}

// databaseURL reads a PostgreSQL URL from NAME or NAME_FILE. The URL may
// carry a password, so no message quotes it.
func (l *loader) databaseURL(name string) string {
	v, from, path, ok := l.secret(name)
	if !ok || v == "" {
		return ""
	}
	if path != "" {
		v = strings.TrimSuffix(strings.TrimSuffix(v, "\n"), "\r")
	}
	u, err := url.Parse(v)
	switch {
	case err != nil:
		l.fail("%s: is not a URL: want postgres://user:password@host:5432/dbname", from)
	case u.Scheme != "postgres" && u.Scheme != "postgresql":
		l.fail("%s: must be a postgres:// or postgresql:// URL like postgres://user:password@host:5432/dbname; leave it unset to keep the state in SQLite (STATE_DB_PATH)", from)
	case u.Host == "" && u.Query().Get("host") == "":
		l.fail("%s: names no host: want postgres://user:password@host:5432/dbname", from)
	case strings.TrimPrefix(u.Path, "/") == "":
		l.fail("%s: names no database: want postgres://user:password@host:5432/dbname", from)
	default:
		return v
	}
	return ""
}

// RedactURL returns a database URL fit for a log line: the password, in the
// user part or as a password= parameter, is replaced by xxxxx.
func RedactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "(unparsable URL)"
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func (l *loader) statePath() string {
	if v := l.getenv("STATE_DB_PATH"); v != "" {
		return v
	}
	// XDG says a relative XDG_STATE_HOME is invalid and must be ignored.
	if x := l.getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "storelink-mcp", "state.db")
	}
	if h := l.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "storelink-mcp", "state.db")
	}
	l.fail("STATE_DB_PATH: neither it, XDG_STATE_HOME nor HOME is set: set STATE_DB_PATH to where the order ledger should live")
	return ""
}

// journalPath is STATE_JOURNAL_PATH, else beside the SQLite file, else,
// with PostgreSQL, in the user's state directory.
func (l *loader) journalPath(c *Config) string {
	if v := l.getenv("STATE_JOURNAL_PATH"); v != "" {
		if c.StatePath != "" {
			db := filepath.Clean(c.StatePath)
			for _, f := range []string{db, db + "-wal", db + "-shm", db + "-journal"} {
				if filepath.Clean(v) == f {
					l.fail("STATE_JOURNAL_PATH=%s: is the state database's own file; give the outcome journal a file of its own, or unset it to keep it beside the database", shown(v))
					return ""
				}
			}
		}
		return v
	}
	if c.StatePath != "" {
		return c.StatePath + ".outcomes.jsonl"
	}
	if c.StateDatabaseURL == "" {
		return "" // statePath has said what is missing
	}
	if x := l.getenv("XDG_STATE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "storelink-mcp", "outcomes.jsonl")
	}
	if h := l.getenv("HOME"); h != "" {
		return filepath.Join(h, ".local", "state", "storelink-mcp", "outcomes.jsonl")
	}
	if c.AllowWrites && !c.ReadOnly {
		l.fail("STATE_JOURNAL_PATH: neither it, XDG_STATE_HOME nor HOME is set: set STATE_JOURNAL_PATH to a file on this machine's persistent storage, where the outcome of an order waits if PostgreSQL cannot take it")
	}
	return ""
}
