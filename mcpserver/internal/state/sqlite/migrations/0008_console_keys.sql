-- 8: the approvals console's keys, shared by every replica (keys.go):
-- one row per key, made on first use and never changed, so a login
-- form served by one replica is accepted by another.

CREATE TABLE console_keys (
	name       TEXT PRIMARY KEY CHECK (length(name) BETWEEN 1 AND 64),
	key        BLOB NOT NULL CHECK (length(key) >= 32),
	created_at TEXT NOT NULL
);
