-- The approvals console's keys, shared by every replica (the SQLite
-- backend's schema version 8): one row per key, made on first use (INSERT
-- … ON CONFLICT DO NOTHING, then SELECT, so replicas racing on first use
-- all read the row that was stored first) and never changed. The login
-- form's key ("form") lets a form served by one replica be posted to
-- another.

CREATE TABLE console_keys (
	name       text PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
	key        bytea NOT NULL CHECK (length(key) >= 32),
	created_at timestamptz NOT NULL DEFAULT now()
);
