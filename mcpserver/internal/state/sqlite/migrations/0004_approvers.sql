-- 4: the register of named approvers. Only a verifier of each secret is
-- kept. A name is unique among the active records, compared by its key
-- (ApproverNameKey), so that revoking and adding again rotates a
-- secret. A record is never removed and changes only once, when it is
-- revoked: the register is also the history of who could approve.

CREATE TABLE approvers (
	id         INTEGER PRIMARY KEY,
	name       TEXT NOT NULL CHECK (length(name) BETWEEN 1 AND 64),
	name_key   TEXT NOT NULL,
	stores     TEXT NOT NULL DEFAULT '',
	verifier   TEXT NOT NULL CHECK (substr(verifier, 1, 1) = '$'),
	created_at TEXT NOT NULL,
	revoked_at TEXT
);
CREATE UNIQUE INDEX approvers_active_name ON approvers (name_key) WHERE revoked_at IS NULL;
CREATE INDEX approvers_name ON approvers (name_key, id);
CREATE TRIGGER approvers_revoke_only BEFORE UPDATE ON approvers
WHEN OLD.revoked_at IS NOT NULL OR NEW.revoked_at IS NULL OR NEW.id IS NOT OLD.id OR NEW.name IS NOT OLD.name
	OR NEW.name_key IS NOT OLD.name_key OR NEW.stores IS NOT OLD.stores OR NEW.verifier IS NOT OLD.verifier
	OR NEW.created_at IS NOT OLD.created_at
BEGIN SELECT RAISE(ABORT, 'approver records change only by being revoked, once: revoke and add a new one'); END;
CREATE TRIGGER approvers_no_delete BEFORE DELETE ON approvers
BEGIN SELECT RAISE(ABORT, 'approver records are kept: DELETE refused; revoke the approver instead'); END;
