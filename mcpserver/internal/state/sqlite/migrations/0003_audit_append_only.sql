-- 3: the audit trail is append-only by construction, not by convention:
-- the database itself refuses to change or remove a recorded call.
-- Retention (docs/observability.md) lifts the DELETE guard only inside
-- the archiving transaction.

CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: UPDATE refused'); END;
CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit
BEGIN SELECT RAISE(ABORT, 'audit rows are append-only: DELETE refused; archive old rows as docs/observability.md describes'); END;
