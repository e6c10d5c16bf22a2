-- The ledger, the staged approvals and the audit trail, as the SQLite
-- backend holds them at its schema version 2, with times as timestamptz.

CREATE TABLE entries (
	id                  bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	idempotency_key     text NOT NULL UNIQUE,
	store_id            text NOT NULL,
	sku                 text NOT NULL,
	quantity_units      bigint NOT NULL CHECK (quantity_units > 0),
	reason              text NOT NULL,
	request_hash        text NOT NULL,
	state               text NOT NULL CHECK (state IN ('sending', 'raised', 'failed', 'retryable', 'unknown', 'pending_approval', 'rejected', 'expired')),
	order_id            text,
	error_code          text NOT NULL DEFAULT '',
	error_message       text NOT NULL DEFAULT '',
	approval_id         text,
	approval_expires_at timestamptz,
	requested_by        text NOT NULL DEFAULT '',
	decided_by          text NOT NULL DEFAULT '',
	upstream_id         text NOT NULL DEFAULT '',
	created_at          timestamptz NOT NULL,
	updated_at          timestamptz NOT NULL,
	CHECK (state <> 'raised' OR order_id IS NOT NULL),
	CHECK (state <> 'pending_approval' OR (approval_id IS NOT NULL AND approval_expires_at IS NOT NULL))
);
CREATE INDEX entries_store_sku_created ON entries (store_id, sku, created_at);
CREATE INDEX entries_order_id ON entries (order_id) WHERE order_id IS NOT NULL;
CREATE UNIQUE INDEX entries_approval_id ON entries (approval_id) WHERE approval_id IS NOT NULL;
CREATE INDEX entries_pending_expiry ON entries (approval_expires_at) WHERE state = 'pending_approval';
CREATE INDEX entries_in_flight ON entries (request_hash) WHERE state IN ('sending', 'unknown');

CREATE TABLE audit (
	id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	time        timestamptz NOT NULL,
	call_id     text NOT NULL,
	client      text NOT NULL,
	session     text NOT NULL,
	tool        text NOT NULL,
	store_id    text NOT NULL,
	sku         text NOT NULL,
	outcome     text NOT NULL,
	error_code  text NOT NULL,
	summary     text NOT NULL,
	duration_ms double precision NOT NULL
);
CREATE INDEX audit_time ON audit (time);
CREATE INDEX audit_call_id ON audit (call_id);

-- The audit trail is append-only whoever connects: a row, once written, is
-- neither changed nor removed, and the table is not emptied.
CREATE FUNCTION audit_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	RAISE EXCEPTION 'the audit trail is append-only: % is refused', TG_OP
		USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_no_change BEFORE UPDATE OR DELETE ON audit
	FOR EACH ROW EXECUTE FUNCTION audit_append_only();
CREATE TRIGGER audit_no_truncate BEFORE TRUNCATE ON audit
	FOR EACH STATEMENT EXECUTE FUNCTION audit_append_only();
