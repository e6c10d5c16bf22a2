-- 6: each audit row names the OpenTelemetry trace of its call, so the
-- row leads to the trace and back; rows from before it have none.

ALTER TABLE audit ADD COLUMN trace_id TEXT NOT NULL DEFAULT '';
