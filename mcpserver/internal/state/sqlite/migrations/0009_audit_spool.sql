-- 9: how far each audit spool has been moved into the audit table
-- (ADR 0044). A spool is a file of audit records, one JSON line each, that
-- a process appends to before a tool call's answer; its mover inserts the
-- lines here and sets moved, the byte offset after the last line moved, in
-- the same transaction, so a replay after a crash starts exactly there.

CREATE TABLE audit_spool (
	name  TEXT PRIMARY KEY,
	moved INTEGER NOT NULL
);
