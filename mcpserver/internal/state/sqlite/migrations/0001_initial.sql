-- 1: the ledger of replenishment orders (entries) and the audit trail of
-- tool calls.

CREATE TABLE entries (
	id                  INTEGER PRIMARY KEY,
	idempotency_key     TEXT NOT NULL UNIQUE,
	store_id            TEXT NOT NULL,
	sku                 TEXT NOT NULL,
	quantity_units      INTEGER NOT NULL,
	reason              TEXT NOT NULL,
	request_hash        TEXT NOT NULL,
	state               TEXT NOT NULL,
	order_id            TEXT,
	error_code          TEXT NOT NULL DEFAULT '',
	error_message       TEXT NOT NULL DEFAULT '',
	approval_id         TEXT,
	approval_expires_at TEXT,
	requested_by        TEXT NOT NULL DEFAULT '',
	decided_by          TEXT NOT NULL DEFAULT '',
	created_at          TEXT NOT NULL,
	updated_at          TEXT NOT NULL
);
CREATE INDEX entries_store_sku_created ON entries (store_id, sku, created_at);
CREATE INDEX entries_order_id ON entries (order_id) WHERE order_id IS NOT NULL;
CREATE UNIQUE INDEX entries_approval_id ON entries (approval_id) WHERE approval_id IS NOT NULL;
CREATE INDEX entries_pending_expiry ON entries (approval_expires_at) WHERE state = 'pending_approval';

CREATE TABLE audit (
	id          INTEGER PRIMARY KEY,
	time        TEXT NOT NULL,
	call_id     TEXT NOT NULL,
	client      TEXT NOT NULL,
	session     TEXT NOT NULL,
	tool        TEXT NOT NULL,
	store_id    TEXT NOT NULL,
	sku         TEXT NOT NULL,
	outcome     TEXT NOT NULL,
	error_code  TEXT NOT NULL,
	summary     TEXT NOT NULL,
	duration_ms REAL NOT NULL
);
CREATE INDEX audit_time ON audit (time);
CREATE INDEX audit_call_id ON audit (call_id);
