-- 7: the approvals console's login limit and sessions, shared by every
-- replica (login.go, session.go). An attempt row is in flight until it
-- is settled (failed = 0, expires_at its hold) or a failure (failed =
-- 1, expires_at the end of its window). A session keeps only the
-- SHA-256 of its id. AUTOINCREMENT: a slot's id is never given to a
-- later attempt once the slot has been swept.

CREATE TABLE login_attempts (
	id         INTEGER PRIMARY KEY AUTOINCREMENT,
	name_key   TEXT NOT NULL,
	addr_key   TEXT NOT NULL,
	failed     INTEGER NOT NULL CHECK (failed IN (0, 1)),
	expires_at TEXT NOT NULL
);
CREATE INDEX login_attempts_name ON login_attempts (name_key, expires_at);
CREATE INDEX login_attempts_addr ON login_attempts (addr_key, expires_at);
CREATE INDEX login_attempts_expiry ON login_attempts (expires_at);

CREATE TABLE console_sessions (
	key_hash    TEXT PRIMARY KEY CHECK (length(key_hash) = 64),
	approver_id INTEGER NOT NULL,
	created_at  TEXT NOT NULL,
	last_seen   TEXT NOT NULL,
	idle_until  TEXT NOT NULL,
	expires_at  TEXT NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
CREATE INDEX console_sessions_idle ON console_sessions (idle_until);
