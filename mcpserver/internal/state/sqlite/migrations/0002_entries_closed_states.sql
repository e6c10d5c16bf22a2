-- 2: the ledger's states become a closed set the database enforces, the
-- StoreLink each entry belongs to is recorded, and entries that earlier
-- versions stored as failed although nothing reached StoreLink become
-- retryable. SQLite cannot add a CHECK to a column, so the table is
-- rebuilt.

CREATE TABLE entries_v2 (
	id                  INTEGER PRIMARY KEY,
	idempotency_key     TEXT NOT NULL UNIQUE,
	store_id            TEXT NOT NULL,
	sku                 TEXT NOT NULL,
	quantity_units      INTEGER NOT NULL CHECK (quantity_units > 0),
	reason              TEXT NOT NULL,
	request_hash        TEXT NOT NULL,
	state               TEXT NOT NULL CHECK (state IN ('sending', 'raised', 'failed', 'retryable', 'unknown', 'pending_approval', 'rejected', 'expired')),
	order_id            TEXT,
	error_code          TEXT NOT NULL DEFAULT '',
	error_message       TEXT NOT NULL DEFAULT '',
	approval_id         TEXT,
	approval_expires_at TEXT,
	requested_by        TEXT NOT NULL DEFAULT '',
	decided_by          TEXT NOT NULL DEFAULT '',
	created_at          TEXT NOT NULL,
	updated_at          TEXT NOT NULL,
	upstream_id         TEXT NOT NULL DEFAULT '',
	CHECK (state <> 'raised' OR order_id IS NOT NULL),
	CHECK (state <> 'pending_approval' OR (approval_id IS NOT NULL AND approval_expires_at IS NOT NULL))
);
INSERT INTO entries_v2 (id, idempotency_key, store_id, sku, quantity_units, reason, request_hash, state,
	order_id, error_code, error_message, approval_id, approval_expires_at, requested_by, decided_by, created_at, updated_at)
SELECT id, idempotency_key, store_id, sku, quantity_units, reason, request_hash,
	CASE WHEN state = 'failed' AND error_code IN ('RATE_LIMITED', 'UPSTREAM_UNAVAILABLE', 'AUTH_KEY_INVALID') THEN 'retryable' ELSE state END,
	order_id, error_code, error_message, approval_id, approval_expires_at, requested_by, decided_by, created_at, updated_at
FROM entries;
DROP TABLE entries;
ALTER TABLE entries_v2 RENAME TO entries;
CREATE INDEX entries_store_sku_created ON entries (store_id, sku, created_at);
CREATE INDEX entries_order_id ON entries (order_id) WHERE order_id IS NOT NULL;
CREATE UNIQUE INDEX entries_approval_id ON entries (approval_id) WHERE approval_id IS NOT NULL;
CREATE INDEX entries_pending_expiry ON entries (approval_expires_at) WHERE state = 'pending_approval';
CREATE INDEX entries_in_flight ON entries (request_hash) WHERE state IN ('sending', 'unknown');
