-- flexiq schema, version 9. A job counts the lapsed leases it recovered from (stall_count), so
-- release_stale can fail it with STALLED once its queue's budget is spent; a queue keeps that
-- budget (max_stalled_count, NULL for the default) beside its other controls. Rows written
-- before this version never stalled as far as the count knows: they read as 0. Archived copies
-- carry the column too, since archiving moves rows by column name.
ALTER TABLE {S}.jobs ADD COLUMN stall_count integer NOT NULL DEFAULT 0;
ALTER TABLE {S}.archived_jobs ADD COLUMN stall_count integer NOT NULL DEFAULT 0;
ALTER TABLE {S}.queues ADD COLUMN max_stalled_count integer;
