-- flexiq schema, version 6. Workflow stages (the workflow job contract): a stage is a job that
-- names its run and stage, and a (run, stage) pair holds at most one live job row, which
-- `upsert_stages` replaces in place. The definition version is stored beside the other
-- workflow columns (the workflow id is the task), in the archive too.
ALTER TABLE {S}.jobs ADD COLUMN workflow_version text;
ALTER TABLE {S}.archived_jobs ADD COLUMN workflow_version text;

-- Builds before this one let a pair hold several rows. The newest row of each pair (by
-- created_at, then id) stays; the older ones are what a re-enqueue under the contract would
-- have replaced, so they move to the archive (whatever their status) rather than being lost.
-- The ALTER TABLE above locks writers out until this migration commits, so no duplicate
-- appears meanwhile.
WITH ranked AS (
    SELECT id, row_number() OVER (PARTITION BY namespace, workflow_run_id, workflow_stage_id
                                  ORDER BY created_at DESC, id DESC) AS n
    FROM {S}.jobs WHERE workflow_run_id IS NOT NULL AND workflow_stage_id IS NOT NULL),
moved AS (
    DELETE FROM {S}.jobs j USING ranked r WHERE j.id = r.id AND r.n > 1 RETURNING j.*)
INSERT INTO {S}.archived_jobs (id, namespace, queue, task, payload, priority, status, attempt, max_retries,
    backoff_base_ms, backoff_max_ms, created_at, run_at, started_at, heartbeat_at, finished_at, worker_id,
    result, last_error, unique_key, metadata, progress, timeout_ms, cancel_requested, depends_on,
    has_dependents, group_key, workflow_run_id, workflow_stage_id, claim_seq, workflow_version, archived_at)
SELECT id, namespace, queue, task, payload, priority, status, attempt, max_retries,
    backoff_base_ms, backoff_max_ms, created_at, run_at, started_at, heartbeat_at, finished_at, worker_id,
    result, last_error, unique_key, metadata, progress, timeout_ms, cancel_requested, depends_on,
    has_dependents, group_key, workflow_run_id, workflow_stage_id, claim_seq, workflow_version,
    (extract(epoch from clock_timestamp()) * 1000)::bigint
FROM moved;

-- At most one row per (run, stage). Rows without a stage are not stages (NULLs are distinct).
CREATE UNIQUE INDEX jobs_workflow_stage ON {S}.jobs (namespace, workflow_run_id, workflow_stage_id)
    WHERE workflow_run_id IS NOT NULL;
-- Run lookups (jobs_of_run, cancel_run) in the order jobs_of_run lists them.
DROP INDEX IF EXISTS {S}.jobs_workflow_run;
CREATE INDEX jobs_workflow_run ON {S}.jobs (namespace, workflow_run_id, created_at, id)
    WHERE workflow_run_id IS NOT NULL;

-- Fair claims: the claimable workflow rows of a queue (plain jobs are never fair-claimed, so
-- they pay nothing for this index) by fairness group (in byte order, as every store
-- compares group keys; no group is the empty key), then in claim order, so the next group
-- after the cursor and the best job of a group are each one index descent.
CREATE INDEX jobs_fair_claim ON {S}.jobs
    (namespace, queue, (coalesce(group_key, '') COLLATE "C"), priority DESC, run_at, id)
    WHERE status IN (0, 6) AND workflow_run_id IS NOT NULL;

-- The group each namespace's last fair claim served; the next one serves the group after it.
CREATE TABLE {S}.fair_cursors (
    namespace text PRIMARY KEY,
    group_key text NOT NULL
);
