-- flexiq schema, version 13. A job keeps start_seq, the claim sequence of the newest attempt
-- whose start a worker's heartbeat reported; a lapsed lease of an attempt whose claim sequence
-- it does not match was still in a prefetch buffer, so release_stale gives the attempt back
-- without counting a stall. Rows written before this version read 0: a job running across the
-- upgrade whose worker then dies is released as never started, which spends nothing. Archived
-- copies do not need it (archiving moves a named list of columns).
ALTER TABLE {S}.jobs ADD COLUMN start_seq bigint NOT NULL DEFAULT 0;
