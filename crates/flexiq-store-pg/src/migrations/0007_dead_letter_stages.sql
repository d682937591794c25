-- flexiq schema, version 7. A dead letter keeps the workflow fields of the job that died, so
-- retrying a dead stage can revive the stage's own row (a (run, stage) pair holds one row)
-- instead of enqueueing a second job for the pair.
ALTER TABLE {S}.dead_letters
    ADD COLUMN workflow_run_id text,
    ADD COLUMN workflow_stage_id text,
    ADD COLUMN workflow_version text;

-- Entries written before this version carry no workflow fields; the job that died still has
-- them while its row is kept (live, else archived). The ALTER TABLE above locks writers of
-- dead letters out until this migration commits.
UPDATE {S}.dead_letters d
SET workflow_run_id = j.workflow_run_id, workflow_stage_id = j.workflow_stage_id,
    workflow_version = j.workflow_version
FROM {S}.jobs j
WHERE j.id = d.original_job_id AND j.workflow_run_id IS NOT NULL;
UPDATE {S}.dead_letters d
SET workflow_run_id = a.workflow_run_id, workflow_stage_id = a.workflow_stage_id,
    workflow_version = a.workflow_version
FROM {S}.archived_jobs a
WHERE a.id = d.original_job_id AND a.workflow_run_id IS NOT NULL AND d.workflow_run_id IS NULL;
