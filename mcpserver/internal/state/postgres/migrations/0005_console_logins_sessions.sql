-- The approvals console's login limit and sessions, shared by every replica
-- (the SQLite backend's schema version 7).
--
-- login_keys holds one row per name key and address key; admitting an
-- attempt upserts (INSERT … ON CONFLICT DO UPDATE … RETURNING) the rows of
-- its two keys, which locks them until the transaction ends, so replicas
-- count and reserve one key's attempts one after another. A key row is
-- swept once it has been unused for longer than any window.
--
-- login_attempts holds one row per attempt: in flight (failed = false,
-- expires_at the end of its hold, should its process crash) or a failure
-- (failed = true, expires_at the end of its window).
--
-- console_sessions keeps only the SHA-256 of a session id, and the approver
-- record it was made with (no foreign key: approver records are never
-- removed, and a key would change how TRUNCATE of approvers is refused);
-- reading a session joins that record.

CREATE TABLE login_keys (
	key       text PRIMARY KEY,
	last_used timestamptz NOT NULL
);
CREATE INDEX login_keys_last_used ON login_keys (last_used);

CREATE TABLE login_attempts (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name_key   text NOT NULL,
	addr_key   text NOT NULL,
	failed     boolean NOT NULL,
	expires_at timestamptz NOT NULL
);
CREATE INDEX login_attempts_name ON login_attempts (name_key, expires_at);
CREATE INDEX login_attempts_addr ON login_attempts (addr_key, expires_at);
CREATE INDEX login_attempts_expiry ON login_attempts (expires_at);

CREATE TABLE console_sessions (
	key_hash    text PRIMARY KEY CHECK (key_hash ~ '^[0-9a-f]{64}$'),
	approver_id bigint NOT NULL,
	created_at  timestamptz NOT NULL,
	last_seen   timestamptz NOT NULL,
	idle_until  timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);
CREATE INDEX console_sessions_idle ON console_sessions (idle_until);
