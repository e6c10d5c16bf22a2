-- Each audit row names the OpenTelemetry trace of its call (the SQLite
-- backend's schema version 5), so the row leads to the trace and back; rows
-- from before it have none.

ALTER TABLE audit ADD COLUMN trace_id text NOT NULL DEFAULT '';
