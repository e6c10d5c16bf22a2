-- The register of named approvers (the SQLite backend's schema version 4).
-- Only a verifier of each secret is kept. A name is unique among the active
-- records, compared by its key (state.ApproverNameKey), so that revoking and
-- adding again rotates a secret. A record is never removed and changes only
-- once, when it is revoked: the register is also the history of who could
-- approve.

CREATE TABLE approvers (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name       text NOT NULL CHECK (char_length(name) BETWEEN 1 AND 64),
	name_key   text NOT NULL,
	stores     text[] NOT NULL DEFAULT '{}',
	verifier   text NOT NULL CHECK (left(verifier, 1) = '$'),
	created_at timestamptz NOT NULL,
	revoked_at timestamptz
);
CREATE UNIQUE INDEX approvers_active_name ON approvers (name_key) WHERE revoked_at IS NULL;
CREATE INDEX approvers_name ON approvers (name_key, id);

CREATE FUNCTION approvers_revoke_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
	IF TG_OP = 'UPDATE' AND OLD.revoked_at IS NULL AND NEW.revoked_at IS NOT NULL
		AND (NEW.id, NEW.name, NEW.name_key, NEW.stores, NEW.verifier, NEW.created_at)
			IS NOT DISTINCT FROM (OLD.id, OLD.name, OLD.name_key, OLD.stores, OLD.verifier, OLD.created_at) THEN
		RETURN NEW;
	END IF;
	RAISE EXCEPTION 'approver records change only by being revoked, once: % is refused; revoke and add a new one', TG_OP
		USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER approvers_no_change BEFORE UPDATE OR DELETE ON approvers
	FOR EACH ROW EXECUTE FUNCTION approvers_revoke_only();
CREATE TRIGGER approvers_no_truncate BEFORE TRUNCATE ON approvers
	FOR EACH STATEMENT EXECUTE FUNCTION approvers_revoke_only();
