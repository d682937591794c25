-- flexiq schema, version 2. Every index on jobs costs each job one more entry at enqueue and
-- at every status change (status is indexed, so no update of it is HOT). A listing of every
-- status merges the per-status partial indexes instead of keeping one over all statuses.
DROP INDEX IF EXISTS {S}.jobs_created;
